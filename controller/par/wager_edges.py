"""Each wager's house edge *per unit wagered*, from the exact math: the figure theoretical win
multiplies (theo = amount wagered x edge, the casinos' handle x edge).

The par sheets give the house edge *per initial wager* (the Ante and its equal Bonus /
X-Tra Bonus: two units) and the element of risk *per unit wagered* (the initial wager plus
the average Raise). The amounts a table settles include every Raise, so the main game's
figure per unit wagered is the element of risk, exactly: house edge x initial wager /
average wager. Over many hands a player's handle is ``average wager`` antes a hand, so
handle x element of risk is the expected loss, house edge x initial wager, to the cent.

- Cali LowBall: Ante, X-Tra Bonus and Raise (or the Bet after a check): the element of risk
  under the optimal strategy; the Lowdown Bonus, a wager of its own: minus its return.
- Three Card Lowball: Ante and Bonus: the house edge (no Raise: it is also the element of
  risk); the progressive: what the house keeps over many jackpots, with the meter counted as
  the players' money: 1 - contribution rate - the fixed awards' return - jackpot frequency x
  seed / wager (minus the par sheet's ``long_run_return``), whatever the meter shows.

Three Card Lowball's figures come from :data:`controller.par.approval.RECORDED` and
``RECORDED_PROGRESSIVE`` for a seeded paytable's Bonus lines (instant); otherwise every
starting hand is counted (minutes of CPU): :func:`recorded_edges` answers without counting,
:func:`exact_edges` counts when it must.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from controller.core.table_settings import GameSetup
from controller.core.vocabulary import WagerKey
from controller.par import approval
from controller.par import cali_lowball as cali
from controller.par import three_card_lowball as three

#: What every figure here is: per unit of the amount wagered.
PER = "per unit wagered"


def cali_inputs(setup: GameSetup) -> tuple[cali.CaliOdds, cali.CaliRules]:
    odds = cali.CaliOdds(_fractions(setup, WagerKey.XTRA_BONUS),
                         _fractions(setup, WagerKey.LOWDOWN_BONUS))
    rules = cali.CaliRules(setup.rules.xtra_bonus_loses_on_loss,
                           setup.rules.lowdown_bonus_survives_fold)
    return odds, rules


def three_card_bonus(setup: GameSetup) -> dict[str, Fraction]:
    return _fractions(setup, WagerKey.BONUS)


def three_card_progressive(setup: GameSetup) -> three.Progressive:
    progressive = setup.progressive
    awards = progressive.awards
    return three.Progressive(progressive.wager, {
        "pat-4-2-A-one-color": awards.pat_one_color, "pat-4-2-A-two-color": awards.pat_two_color,
        "4-high": awards.four_high, "5-high": awards.five_high},
        progressive.contribution_rate, progressive.seed)


def _fractions(setup: GameSetup, wager: str) -> dict[str, Fraction]:
    return {name: Fraction(odds.pays, odds.per)
            for name, odds in setup.paytable.for_wager(wager).items()}


def cali_edges(sheet: cali.CaliParSheet) -> dict[str, Fraction]:
    main = sheet.element_of_risk
    return _texts({WagerKey.ANTE: main, WagerKey.XTRA_BONUS: main, WagerKey.RAISE: main,
                   WagerKey.LOWDOWN_BONUS: -sheet.lowdown_return})


def three_card_edges(house_edge: Fraction, frequencies: Mapping[str, Fraction],
                     progressive: three.Progressive) -> dict[str, Fraction]:
    """The Ante's and Bonus's ``house_edge`` and the progressive's long-run edge from its
    award ``frequencies`` (the jackpot's under ``"jackpot"``)."""
    wager = progressive.wager
    fixed = sum((frequency * Fraction(progressive.awards[name], wager)
                 for name, frequency in frequencies.items() if name != "jackpot"), Fraction(0))
    kept = (1 - progressive.contribution_rate - fixed
            - frequencies["jackpot"] * Fraction(progressive.seed, wager))
    return _texts({WagerKey.ANTE: house_edge, WagerKey.BONUS: house_edge,
                   WagerKey.PROGRESSIVE: kept})


def _texts(edges: Mapping[WagerKey, Fraction]) -> dict[str, Fraction]:
    """Keyed by the wagers' names as the records write them (plain text)."""
    return {str(wager): edge for wager, edge in edges.items()}


def recorded_edges(setup: GameSetup) -> dict[str, Fraction] | None:
    """The edges when no counting is needed: Three Card Lowball with a seeded paytable's
    Bonus lines; None otherwise (Cali LowBall is computed: seconds, :func:`exact_edges`)."""
    if setup.game != "three_card_lowball":
        return None
    key = approval.lines_key(three_card_bonus(setup))
    edge, frequencies = approval.RECORDED.get(key), approval.RECORDED_PROGRESSIVE.get(key)
    if edge is None or frequencies is None:
        return None
    return three_card_edges(edge, frequencies, three_card_progressive(setup))


def exact_edges(setup: GameSetup) -> dict[str, Fraction]:
    """Each wager's edge per unit wagered; Three Card Lowball's unrecorded lines are counted
    (every starting hand: minutes of CPU)."""
    recorded = recorded_edges(setup)
    if recorded is not None:
        return recorded
    if setup.game == "cali_lowball":
        odds, rules = cali_inputs(setup)
        return cali_edges(cali.par_sheet(cali.enumerate_deals(), odds, rules))
    from controller.par.three_card_counts import count_hands

    sheet = three.par_sheet(count_hands(), three_card_bonus(setup),
                            three_card_progressive(setup))
    return three_card_edges(sheet.house_edge, sheet.progressive_awards, sheet.progressive)

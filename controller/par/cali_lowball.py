"""Cali LowBall's exact game math: the optimal strategy and the par sheet of any paytable.

One player against the dealer, one deck: the player's two cards, the three-card flop and the
dealer's two cards are all dealt from it (full card removal). Ace-to-five low ignores suits,
so each deal is enumerated as rank multisets weighted by the number of ways the deck deals
them: 91 two-card starts, up to 455 flops each, 91 dealer holdings each, which stands for all
1,326 x 19,600 x 1,081 = 28,094,757,600 deals. Hands are ranked by the project's own
ace-to-five ranking (``controller.core.rankings.ace_to_five``) and settled as the engine settles
them (``controller.core.games.cali_lowball``):

- Raise (3x pre-flop, or 1x after a check): player lower or tied wins 1:1, else loses.
- Ante: as the Raise, but pushes when the dealer holds a pair of jacks or higher.
- X-Tra Bonus: 10-high or lower pays its odds whatever the comparison; J-high or worse
  pushes, or loses with the hand under ``xtra_bonus_loses_on_loss``.
- Lowdown Bonus: J-high or lower pays its odds, anything else loses; a fold forfeits it
  unless ``lowdown_bonus_survives_fold``.
- A fold forfeits the Ante and the X-Tra Bonus.

The strategy maximises the expected return of the main wagers (Ante, X-Tra Bonus, Raise):
after a check the player bets when betting returns at least as much as folding (-2 antes),
and raises pre-flop when raising returns more than checking and playing the flop optimally.
All amounts are in units of the ante; every figure is an exact fraction. A burn card before
the flop (``burn_before_flop``) is an unseen random card and changes no figure.

>>> start_key((1, 7))
'A7'
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from fractions import Fraction
from itertools import combinations_with_replacement
from functools import cache
from math import comb, lcm
from typing import NamedTuple

from controller.core.cards import DECK, RANK_CHARS, Card
from controller.par.figures import mean_and_variance
from controller.core.rankings import ace_to_five

RAISE, CHECK, BET, FOLD = "raise", "check", "bet", "fold"
#: What a fold loses: the Ante and the X-Tra Bonus.
FOLD_NET = Fraction(-2)
#: Dealer holdings that can follow any two-card start and flop: C(47, 2).
DEALER_DEALS = comb(47, 2)
FLOPS = comb(50, 3)
STARTS = comb(52, 2)
RANKS = range(1, 14)


class CaliRules(NamedTuple):
    """The table's rule switches that change the game's math."""

    xtra_bonus_loses_on_loss: bool = False
    lowdown_bonus_survives_fold: bool = False


class CaliOdds(NamedTuple):
    """A paytable as exact odds per unit staked: hand class -> Fraction (``"3:2"`` is 3/2)."""

    xtra_bonus: Mapping[str, Fraction]
    lowdown_bonus: Mapping[str, Fraction]


class Showdown(NamedTuple):
    """The dealer's holdings against one player's five cards, in ways the deck deals them:
    the player wins, ties (and wins) or loses, with the dealer below a pair of jacks
    (``*_open``) or holding a pair of jacks or higher, which pushes the Ante (``*_push``)."""

    win_open: int
    tie_open: int
    lose_open: int
    win_push: int
    tie_push: int
    lose_push: int


class Flop(NamedTuple):
    """One flop after one two-card start: its ranks, the ways it is dealt, the player's hand
    class and the showdown against every dealer holding."""

    ranks: tuple[int, int, int]
    ways: int
    hand_class: str
    showdown: Showdown


class Start(NamedTuple):
    ranks: tuple[int, int]
    ways: int
    flops: tuple[Flop, ...]


def ranks_text(ranks: tuple[int, ...]) -> str:
    """Ranks in order A to K, as the strategy keys them: ``A7``, ``TT``, ``259``."""
    return "".join(RANK_CHARS[rank - 1] for rank in sorted(ranks))


def start_key(ranks: tuple[int, ...]) -> str:
    return ranks_text(ranks)


def _hand(ranks: tuple[int, ...]) -> list[Card]:
    """Cards with these ranks for the ranking, which reads only the ranks (suits do not
    count in ace-to-five low)."""
    return [DECK[rank - 1] for rank in ranks]


def _ways(ranks: tuple[int, ...], used: Counter[int]) -> int:
    """How many ways the deck, with ``used`` cards of each rank gone, deals these ranks."""
    ways = 1
    for rank, count in Counter(ranks).items():
        ways *= comb(4 - used[rank], count)
    return ways


def _dealer_holdings(flop: tuple[int, ...]) -> list[tuple[int, int, int, bool]]:
    holdings = []
    for low, high in combinations_with_replacement(RANKS, 2):
        hand = _hand((low, high, *flop))
        if max(Counter((low, high, *flop)).values()) > 4:
            continue
        holdings.append((low, high, ace_to_five.strength(hand),
                         ace_to_five.is_pair_of_jacks_or_higher(hand)))
    return holdings


def showdown(player: tuple[int, ...], flop: tuple[int, ...],
             holdings: list[tuple[int, int, int, bool]] | None = None) -> Showdown:
    """Every dealer holding against the player's two cards ``player`` and the ``flop``."""
    used = Counter((*player, *flop))
    strength = ace_to_five.strength(_hand((*player, *flop)))
    counts = [0, 0, 0, 0, 0, 0]
    for low, high, dealer_strength, ante_pushes in holdings or _dealer_holdings(flop):
        if low == high:
            ways = comb(4 - used[low], 2)
        else:
            ways = (4 - used[low]) * (4 - used[high])
        if ways:
            counts[_outcome(strength, dealer_strength, ante_pushes)] += ways
    assert sum(counts) == DEALER_DEALS
    return Showdown(*counts)


def _outcome(strength: int, dealer_strength: int, ante_pushes: bool) -> int:
    """The :class:`Showdown` field a player's and the dealer's hand fall in."""
    result = 0 if strength < dealer_strength else 1 if strength == dealer_strength else 2
    return result + 3 * ante_pushes


@cache
def enumerate_deals() -> tuple[Start, ...]:
    """Every two-card start and flop with its showdown: what any paytable's math needs (the
    same for every paytable and rule switch, so it is computed once per process)."""
    flops = [flop for flop in combinations_with_replacement(RANKS, 3)
             if max(Counter(flop).values()) <= 4]
    holdings = {flop: _dealer_holdings(flop) for flop in flops}
    starts = []
    for player in combinations_with_replacement(RANKS, 2):
        used = Counter(player)
        dealt = []
        for flop in flops:
            ways = _ways(flop, used)
            if ways:
                hand_class = ace_to_five.hand_class(_hand((*player, *flop)))
                dealt.append(Flop(flop, ways, hand_class, showdown(player, flop, holdings[flop])))
        assert sum(flop.ways for flop in dealt) == FLOPS
        starts.append(Start(player, _ways(player, Counter()), tuple(dealt)))
    assert sum(start.ways for start in starts) == STARTS
    return tuple(starts)


# -- settlement of one showdown ---------------------------------------------------------------

class _Scaled(NamedTuple):
    """A paytable and rules in whole units of 1/``unit`` ante, so that the enumeration adds
    integers (``unit`` is the least common denominator of the odds)."""

    unit: int
    xtra_bonus: dict[str, int]
    lowdown_bonus: dict[str, int]
    xtra_loses: bool
    lowdown_survives: bool


def _scaled(odds: CaliOdds, rules: CaliRules) -> _Scaled:
    unit = lcm(*(value.denominator for value in (*odds.xtra_bonus.values(),
                                                 *odds.lowdown_bonus.values())))
    return _Scaled(unit, {name: int(value * unit) for name, value in odds.xtra_bonus.items()},
                   {name: int(value * unit) for name, value in odds.lowdown_bonus.items()},
                   rules.xtra_bonus_loses_on_loss, rules.lowdown_bonus_survives_fold)


def outcomes(showdown_: Showdown, raise_multiple: int, hand_class: str,
             scaled: _Scaled) -> Iterator[tuple[str, bool, int, int, int, int]]:
    """Each outcome of a played hand: (result, ante pushed, ways, ante net, X-Tra net,
    Raise net), nets in units of 1/``scaled.unit`` ante."""
    unit = scaled.unit
    pays = scaled.xtra_bonus.get(hand_class)
    for index, ways in enumerate(showdown_):
        if not ways:
            continue
        result = ("win", "tie", "lose")[index % 3]
        ante_pushes = index >= 3
        main = -unit if result == "lose" else unit
        if pays is not None:
            xtra = pays
        else:
            xtra = -unit if scaled.xtra_loses and result == "lose" else 0
        yield result, ante_pushes, ways, 0 if ante_pushes else main, xtra, main * raise_multiple


def _play_total(showdown_: Showdown, raise_multiple: int, hand_class: str,
                scaled: _Scaled) -> int:
    """The net of Ante, X-Tra Bonus and Raise summed over every dealer holding, in units of
    1/``scaled.unit`` ante: the expected net is this / (unit x DEALER_DEALS)."""
    win_open, tie_open, lose_open, win_push, tie_push, lose_push = showdown_
    lost = lose_open + lose_push
    total = (win_open + tie_open - lose_open
             + raise_multiple * (DEALER_DEALS - 2 * lost)) * scaled.unit
    pays = scaled.xtra_bonus.get(hand_class)
    if pays is not None:
        return total + pays * DEALER_DEALS
    return total - lost * scaled.unit if scaled.xtra_loses else total


def play_value(showdown_: Showdown, raise_multiple: int, hand_class: str, odds: CaliOdds,
               rules: CaliRules) -> Fraction:
    """Expected net of Ante, X-Tra Bonus and Raise, in antes, for a hand played to showdown."""
    scaled = _scaled(odds, rules)
    return Fraction(_play_total(showdown_, raise_multiple, hand_class, scaled),
                    scaled.unit * DEALER_DEALS)


def settle(player: tuple[int, ...], flop: tuple[int, ...], dealer: tuple[int, ...],
           decision: str, odds: CaliOdds, rules: CaliRules) -> dict[str, Fraction]:
    """The net of each wager, in antes, of one deal played with ``decision``: ``raise``,
    ``bet`` (after a check) or ``fold``; the Lowdown Bonus as a separate one-unit wager."""
    hand = _hand((*player, *flop))
    strength, hand_class = ace_to_five.strength_and_class(hand)
    dealer_hand = _hand((*dealer, *flop))
    index = _outcome(strength, ace_to_five.strength(dealer_hand),
                     ace_to_five.is_pair_of_jacks_or_higher(dealer_hand))
    lowdown_pays = odds.lowdown_bonus.get(hand_class, Fraction(-1))
    if decision == FOLD:
        return {"ante": Fraction(-1), "xtra_bonus": Fraction(-1), "raise": Fraction(0),
                "lowdown_bonus": lowdown_pays if rules.lowdown_bonus_survives_fold
                else Fraction(-1)}
    counts = [0] * 6
    counts[index] = 1
    scaled = _scaled(odds, rules)
    ((_, _, _, ante, xtra, raised),) = outcomes(Showdown(*counts), 3 if decision == RAISE else 1,
                                                hand_class, scaled)
    return {"ante": Fraction(ante, scaled.unit), "xtra_bonus": Fraction(xtra, scaled.unit),
            "raise": Fraction(raised, scaled.unit), "lowdown_bonus": lowdown_pays}


# -- strategy -----------------------------------------------------------------------------------

class StartDecision(NamedTuple):
    decision: str
    raise_value: Fraction
    check_value: Fraction


class CaliStrategy(NamedTuple):
    """The optimal decisions: pre-flop per start (key :func:`start_key`), and after a check
    per (start, flop) ranks the decision to bet (True) or fold."""

    pre_flop: dict[tuple[int, int], StartDecision]
    post_flop_bets: dict[tuple[tuple[int, int], tuple[int, int, int]], bool]


def solve(deals: tuple[Start, ...], odds: CaliOdds, rules: CaliRules) -> CaliStrategy:
    scaled = _scaled(odds, rules)
    fold_total = -2 * scaled.unit * DEALER_DEALS
    pre_flop = {}
    post_flop_bets = {}
    for start in deals:
        raise_total = check_total = 0
        for flop in start.flops:
            raised = _play_total(flop.showdown, 3, flop.hand_class, scaled)
            bet = _play_total(flop.showdown, 1, flop.hand_class, scaled)
            bets = bet >= fold_total
            post_flop_bets[start.ranks, flop.ranks] = bets
            raise_total += flop.ways * raised
            check_total += flop.ways * (bet if bets else fold_total)
        scale = scaled.unit * DEALER_DEALS * FLOPS
        pre_flop[start.ranks] = StartDecision(RAISE if raise_total > check_total else CHECK,
                                              Fraction(raise_total, scale),
                                              Fraction(check_total, scale))
    return CaliStrategy(pre_flop, post_flop_bets)


# -- the par sheet ------------------------------------------------------------------------------

class CaliParSheet(NamedTuple):
    """Exact figures per unit of the ante (the X-Tra Bonus equals it; the Lowdown Bonus is a
    separate wager of one unit). Frequencies are shares of all deals."""

    strategy: CaliStrategy
    returns: dict[str, Fraction]        # ante, xtra_bonus, raise, total (net per ante)
    initial_wager: Fraction             # ante + X-Tra Bonus = 2 antes
    average_wager: Fraction             # initial wager plus the average Raise
    house_edge: Fraction                # -total / initial wager
    element_of_risk: Fraction           # -total / average wager
    variance: Fraction                  # of the main wagers' net, in antes squared
    results: dict[str, Fraction]        # raise/check, win/tie/lose/fold, ante push
    xtra_lines: dict[str, tuple[Fraction, Fraction]]     # class -> (frequency, return)
    lowdown_return: Fraction
    lowdown_variance: Fraction
    lowdown_lines: dict[str, tuple[Fraction, Fraction]]  # class -> (frequency, return)
    deals: int


def par_sheet(deals: tuple[Start, ...], odds: CaliOdds, rules: CaliRules) -> CaliParSheet:
    strategy = solve(deals, odds, rules)
    scaled = _scaled(odds, rules)
    unit = scaled.unit
    total_ways = STARTS * FLOPS * DEALER_DEALS
    net_ways: Counter[int] = Counter()        # net (1/unit antes) -> ways
    wager_sums = {"ante": 0, "xtra_bonus": 0, "raise": 0}
    raised_ways = 0      # antes raised, weighted by ways
    result_ways: Counter[str] = Counter()
    xtra_hits: Counter[str] = Counter()
    lowdown_classes: Counter[str] = Counter()
    lowdown_forfeits = 0
    for start in deals:
        raises = strategy.pre_flop[start.ranks].decision == RAISE
        result_ways[RAISE if raises else CHECK] += start.ways * FLOPS * DEALER_DEALS
        for flop in start.flops:
            ways = start.ways * flop.ways * DEALER_DEALS
            plays = raises or strategy.post_flop_bets[start.ranks, flop.ranks]
            if not plays:
                net_ways[-2 * unit] += ways
                result_ways[FOLD] += ways
                wager_sums["ante"] -= ways * unit
                wager_sums["xtra_bonus"] -= ways * unit
                if rules.lowdown_bonus_survives_fold:
                    lowdown_classes[flop.hand_class] += ways
                else:
                    lowdown_forfeits += ways
                continue
            multiple = 3 if raises else 1
            raised_ways += multiple * ways
            lowdown_classes[flop.hand_class] += ways
            if flop.hand_class in scaled.xtra_bonus:
                xtra_hits[flop.hand_class] += ways
            for result, ante_pushes, dealer_ways, ante, xtra, raised in outcomes(
                    flop.showdown, multiple, flop.hand_class, scaled):
                all_ways = start.ways * flop.ways * dealer_ways
                result_ways[result] += all_ways
                if ante_pushes:
                    result_ways["ante push"] += all_ways
                net_ways[ante + xtra + raised] += all_ways
                wager_sums["ante"] += ante * all_ways
                wager_sums["xtra_bonus"] += xtra * all_ways
                wager_sums["raise"] += raised * all_ways
    assert sum(net_ways.values()) == total_ways
    returns = {name: Fraction(value, unit * total_ways) for name, value in wager_sums.items()}
    returns["total"] = sum(returns.values(), Fraction(0))
    mean, variance = mean_and_variance({Fraction(net, unit): ways
                                        for net, ways in net_ways.items()})
    assert mean == returns["total"]
    average_wager = 2 + Fraction(raised_ways, total_ways)
    xtra_lines = {name: (Fraction(xtra_hits[name], total_ways),
                         Fraction(xtra_hits[name], total_ways) * pays)
                  for name, pays in odds.xtra_bonus.items()}
    lowdown_net: Counter[Fraction] = Counter()
    lowdown_net[Fraction(-1)] += lowdown_forfeits
    lowdown_lines = {}
    for name, class_ways in lowdown_classes.items():
        pays = odds.lowdown_bonus.get(name)
        lowdown_net[pays if pays is not None else Fraction(-1)] += class_ways
    for name, pays in odds.lowdown_bonus.items():
        frequency = Fraction(lowdown_classes[name], total_ways)
        lowdown_lines[name] = (frequency, frequency * pays)
    lowdown_return, lowdown_variance = mean_and_variance(lowdown_net)
    return CaliParSheet(
        strategy=strategy, returns=returns, initial_wager=Fraction(2),
        average_wager=average_wager, house_edge=-returns["total"] / 2,
        element_of_risk=-returns["total"] / average_wager, variance=variance,
        results={name: Fraction(result_ways[name], total_ways)
                 for name in (RAISE, CHECK, "win", "tie", "lose", FOLD, "ante push")},
        xtra_lines=xtra_lines, lowdown_return=lowdown_return, lowdown_variance=lowdown_variance,
        lowdown_lines=lowdown_lines, deals=total_ways)


# -- advice for one situation -------------------------------------------------------------------

def advise(player: tuple[int, ...], flop: tuple[int, ...] | None, odds: CaliOdds,
           rules: CaliRules) -> dict[str, Fraction]:
    """The expected net (antes) of each choice: ``raise`` and ``check`` before the flop (the
    check played on optimally), ``bet`` and ``fold`` after a check once the flop is known."""
    if flop is not None:
        used = Counter((*player, *flop))
        hand_class = ace_to_five.hand_class(_hand((*player, *flop)))
        assert max(used.values()) <= 4
        return {BET: play_value(showdown(player, flop), 1, hand_class, odds, rules),
                FOLD: FOLD_NET}
    used = Counter(player)
    raise_total = Fraction(0)
    check_total = Fraction(0)
    for flop_ranks in combinations_with_replacement(RANKS, 3):
        ways = _ways(flop_ranks, used)
        if not ways:
            continue
        hand_class = ace_to_five.hand_class(_hand((*player, *flop_ranks)))
        result = showdown(player, flop_ranks)
        raise_total += ways * play_value(result, 3, hand_class, odds, rules)
        check_total += ways * max(play_value(result, 1, hand_class, odds, rules), FOLD_NET)
    return {RAISE: raise_total / FLOPS, CHECK: check_total / FLOPS}

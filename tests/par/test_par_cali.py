"""Cali LowBall's exact game math (controller/par/cali_lowball.py): its counting checked by
brute force over real cards, its settlement against the engine's on random hands, its figures
against a short simulation through the engine, and the ``math`` command."""

import json
import random
from collections import Counter
from fractions import Fraction
from itertools import combinations

import pytest

from bench.par_check import TOLERANCE, simulate_cali
from controller.cli.main import main
from controller.cli.math import cali_inputs
from controller.core.cards import DECK, parse_cards
from controller.core.games import CaliLowballHand, Decision
from controller.core.rankings import ace_to_five
from controller.core.table_settings import GameSetup
from controller.par import cali_lowball as cali
from controller.settings.table_config import Rules, default_config_path, load_config

VARIANT = Rules(xtra_bonus_loses_on_loss=True, lowdown_bonus_survives_fold=True)


@pytest.fixture(scope="module")
def deals() -> tuple[cali.Start, ...]:
    return cali.enumerate_deals()


def setup_for(rules: Rules | None = None) -> GameSetup:
    return load_config(default_config_path("cali_lowball")).setup("cali_lowball", "example",
                                                                  rules)


@pytest.fixture(scope="module")
def sheet(deals: tuple[cali.Start, ...]) -> cali.CaliParSheet:
    odds, rules = cali_inputs(setup_for())
    return cali.par_sheet(deals, odds, rules)


@pytest.fixture(scope="module")
def variant_sheet(deals: tuple[cali.Start, ...]) -> cali.CaliParSheet:
    odds, rules = cali_inputs(setup_for(VARIANT))
    return cali.par_sheet(deals, odds, rules)


@pytest.mark.parametrize("player, flop", [("As 2d", "3c 4h 5s"), ("Kc Kd", "Ks 2c 7h"),
                                          ("9h 9c", "9d 9s Jc"), ("Qd 3c", "Jh Jd 8s")])
def test_a_showdown_counts_every_dealer_holding_of_the_real_deck(player: str, flop: str) -> None:
    """The rank-multiset weights against all 1,081 two-card holdings of the 47 cards left."""
    player_cards, flop_cards = parse_cards(player), parse_cards(flop)
    strength = ace_to_five.strength((*player_cards, *flop_cards))
    left = [card for card in DECK if card not in (*player_cards, *flop_cards)]
    counts = [0] * 6
    for holding in combinations(left, 2):
        dealer = (*holding, *flop_cards)
        dealer_strength = ace_to_five.strength(dealer)
        result = 0 if strength < dealer_strength else 1 if strength == dealer_strength else 2
        counts[result + 3 * ace_to_five.is_pair_of_jacks_or_higher(dealer)] += 1
    ranks = (tuple(sorted(card.rank for card in player_cards)),
             tuple(sorted(card.rank for card in flop_cards)))
    assert cali.showdown(*ranks) == cali.Showdown(*counts)


@pytest.mark.slow
def test_the_enumeration_covers_every_deal_once(deals: tuple[cali.Start, ...]) -> None:
    assert len(deals) == 91
    assert sum(start.ways * flop.ways * sum(flop.showdown) for start in deals
               for flop in start.flops) == 1326 * 19600 * 1081 == 28_094_757_600


def test_player_and_dealer_are_symmetric(sheet: cali.CaliParSheet) -> None:
    """Both hold two cards with the same flop: the player is lower exactly as often as the
    dealer (a tie is the player's)."""
    assert sheet.results["win"] == sheet.results["lose"]
    assert sheet.results["win"] + sheet.results["tie"] + sheet.results["lose"] \
        + sheet.results["fold"] == 1


def test_the_par_sheet_figures_hold_together(sheet: cali.CaliParSheet) -> None:
    assert sheet.house_edge == -sheet.returns["total"] / 2
    assert sheet.element_of_risk == -sheet.returns["total"] / sheet.average_wager
    raises = sheet.results["raise"]
    assert sheet.average_wager == 2 + 3 * raises + (1 - raises - sheet.results["fold"])
    # With the X-Tra Bonus never losing, betting (at worst -2) never returns less than folding.
    assert sheet.results["fold"] == 0
    assert sheet.strategy.pre_flop[(1, 2)].decision == cali.RAISE
    assert sheet.strategy.pre_flop[(13, 13)].decision == cali.CHECK


def test_the_variant_rules_change_the_math(sheet: cali.CaliParSheet,
                                           variant_sheet: cali.CaliParSheet) -> None:
    assert variant_sheet.returns["xtra_bonus"] < sheet.returns["xtra_bonus"]
    assert variant_sheet.results["fold"] > 0
    # The shipped rules never fold, so the Lowdown Bonus is settled on every hand under both.
    assert variant_sheet.lowdown_return == sheet.lowdown_return


def test_the_values_of_a_start_are_what_advise_answers(sheet: cali.CaliParSheet) -> None:
    odds, rules = cali_inputs(setup_for())
    for ranks in [(1, 7), (12, 13), (5, 5)]:
        start = sheet.strategy.pre_flop[ranks]
        values = cali.advise(ranks, None, odds, rules)
        assert values == {cali.RAISE: start.raise_value, cali.CHECK: start.check_value}


@pytest.mark.parametrize("rules", [None, VARIANT], ids=["shipped", "variant"])
def test_the_math_settles_as_the_engine_does(rules: Rules | None) -> None:
    """Random hands, random decisions: the math's net of every wager is the engine's."""
    setup = setup_for(rules)
    odds, math_rules = cali_inputs(setup)
    unit = 100
    rng = random.Random(4)
    for _ in range(400):
        deck = rng.sample(DECK, 7)
        hand = CaliLowballHand(setup, {1: {"ante": unit, "xtra_bonus": unit,
                                           "lowdown_bonus": unit}})
        for card in deck[:4]:
            hand.deal(card)
        decision = rng.choice([cali.RAISE, cali.CHECK])
        hand.decide(1, Decision(decision))
        for card in deck[4:]:
            hand.deal(card)
        if decision == cali.CHECK:
            decision = rng.choice([cali.BET, cali.FOLD])
            hand.decide(1, Decision(decision))
        engine = Counter({event.wager: Fraction(event.net, unit) for event in hand.settlements()})
        player, dealer = (deck[0], deck[2]), (deck[1], deck[3])
        expected = cali.settle(tuple(sorted(c.rank for c in player)),
                               tuple(sorted(c.rank for c in deck[4:])),
                               tuple(sorted(c.rank for c in dealer)), decision, odds, math_rules)
        assert {name: engine[name] for name in expected} == expected, deck


@pytest.mark.parametrize("rules", [None, VARIANT], ids=["shipped", "variant"])
def test_a_simulation_through_the_engine_agrees_with_every_figure(deals: tuple[cali.Start, ...],
                                                                 rules: Rules | None) -> None:
    rows, _ = simulate_cali(15_000, random.Random(2026), deals=deals, rules=rules)
    assert rows
    for row in rows:
        assert row["errors"] <= TOLERANCE, row


def test_par_sheet_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["math", "par-sheet", "--game", "cali_lowball", "--paytable", "example",
                 "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["game"] == "cali_lowball" and document["paytable"] == "example"
    edge = Fraction(document["house_edge"]["fraction"])
    assert document["house_edge"]["decimal"] == f"{float(edge):.12f}"
    assert Fraction(document["element_of_risk"]["fraction"]) < 0
    assert len(document["strategy"]) == 91 and document["strategy"]["A2"] == "raise"
    assert set(document["lines"]) == {"5-high", "6-high", "7-high", "8-high", "9-high",
                                      "10-high"}
    assert "return" in document["lowdown_bonus"]


def test_par_sheet_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["math", "par-sheet", "--game", "cali_lowball"]) == 0
    out = capsys.readouterr().out
    assert "house edge" in out and "Lowdown Bonus on its own" in out


def test_advise(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["math", "advise", "--game", "cali_lowball", "--cards", "As 7d"]) == 0
    assert "best: raise" in capsys.readouterr().out
    assert main(["math", "advise", "--game", "cali_lowball", "--cards", "Ks Qd",
                 "--flop", "Kc Jh 9s", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["best"] == "bet" and document["values"]["fold"]["fraction"] == "-2"


@pytest.mark.parametrize("argv, message", [
    (["--cards", "As 7x"], "--cards: unknown card '7x'"),
    (["--cards", "As"], "--cards: give 2 cards, not 1"),
    (["--cards", "As 7d", "--flop", "As 2c 3d"], "card As is given twice"),
    (["--cards", "As 7d", "--paytable", "nope"], "no cali_lowball paytable named 'nope'"),
])
def test_advise_refuses_bad_arguments(capsys: pytest.CaptureFixture[str], argv: list[str],
                                      message: str) -> None:
    assert main(["math", "advise", "--game", "cali_lowball", *argv]) == 2
    assert message in capsys.readouterr().err

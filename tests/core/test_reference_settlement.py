"""The reference settlement (tests/support/reference_settlement.py) against the worked scenarios.

Every ``tests/data/scenarios/NAME.json`` has a ``NAME.expected.json`` worked out by hand (its "why"
says how). The reference must reproduce each one exactly; the same files are meant for checking
the real engines (``lowball-table replay --json``).
"""

from __future__ import annotations

import json
import tomllib
from collections import Counter
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from controller.core.cards import DECK, parse_card, parse_cards

from tests.support.reference_settlement import (
    dealt_dealer_options,
    five_card_class,
    five_card_key,
    house_way_options,
    settle,
    three_card_class,
    three_card_key,
)

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = Path(__file__).resolve().parents[1] / "data" / "scenarios"
PAYTABLES = tomllib.loads((ROOT / "config" / "paytables.toml").read_text())
PROGRESSIVE = {
    "wager": 100,
    "seed": 500000,
    "contribution_rate_percent": 20,
    "awards": {"pat-4-2-A-one-color": 20000, "pat-4-2-A-two-color": 5000, "4-high": 1000,
               "5-high": 300},
    "jackpot_split": "equal",
}
COMPARED = ("settlements", "progressive", "meter", "hands")

NAMES = sorted(path.name[: -len(".expected.json")] for path in SCENARIOS.glob("*.expected.json"))


def load(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    scenario = json.loads((SCENARIOS / f"{name}.json").read_text())
    expected = json.loads((SCENARIOS / f"{name}.expected.json").read_text())
    return scenario, expected


# --------------------------------------------------------------------------------------------
# Scenario files
# --------------------------------------------------------------------------------------------


def test_enough_scenarios_and_every_one_has_a_pair() -> None:
    assert len(NAMES) >= 48
    plain = sorted(path.stem for path in SCENARIOS.glob("*.json")
                   if not path.name.endswith(".expected.json"))
    assert plain == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_reference_reproduces_expected(name: str) -> None:
    scenario, expected = load(name)
    actual = settle(scenario, PAYTABLES, PROGRESSIVE)
    for key in COMPARED:
        assert actual[key] == expected[key], f"{name}: {key}"


@pytest.mark.parametrize("name", NAMES)
def test_outcome_does_not_depend_on_free_dealer_choices(name: str) -> None:
    """Where the house way says "any"/"either", every allowed discard gives the same result."""
    scenario, expected = load(name)
    for option in range(dealt_dealer_options(scenario)):
        actual = settle(scenario, PAYTABLES, PROGRESSIVE, dealer_option=option)
        for key in COMPARED:
            assert actual[key] == expected[key], f"{name}: {key} with dealer option {option}"


def _cards_used(scenario: dict[str, Any]) -> int:
    seats = len(scenario["seats"])
    rules = scenario.get("rules", {})
    if scenario["game"] == "cali_lowball":
        return 2 * (seats + 1) + (1 if rules.get("burn_before_flop") else 0) + 3
    shoe = parse_cards(scenario["shoe"])
    player_draws = sum(
        0 if decisions[0] == "stand" else len(decisions[0][len("discard:"):].split(","))
        for decisions in scenario["decisions"].values()
    )
    dealer = [shoe[round_ * (seats + 1) + seats] for round_ in range(3)]
    return 3 * (seats + 1) + player_draws + len(house_way_options(dealer)[0])


@pytest.mark.parametrize("name", NAMES)
def test_scenario_file_is_spec_format(name: str) -> None:
    scenario, expected = load(name)
    allowed = {"game", "paytable", "rules", "seats", "decisions", "shoe", "meter"}
    assert set(scenario) <= allowed
    assert {"game", "paytable", "seats", "decisions", "shoe"} <= set(scenario)
    assert set(expected) == {"why", *COMPARED} and expected["why"].strip()
    shoe = [parse_card(text) for text in scenario["shoe"]]
    assert [str(card) for card in shoe] == scenario["shoe"], "cards written canonically"
    assert len(set(shoe)) == len(shoe), "duplicate card in shoe"
    assert len(shoe) == _cards_used(scenario), "shoe must hold exactly the cards used"
    assert set(scenario["decisions"]) == set(scenario["seats"])
    if scenario["game"] == "cali_lowball":
        wager_keys = {"ante", "xtra_bonus", "lowdown_bonus"}
        for wagers in scenario["seats"].values():
            assert wagers["ante"] == wagers["xtra_bonus"]
        for decisions in scenario["decisions"].values():
            assert decisions in (["raise"], ["check", "bet"], ["check", "fold"])
        assert expected["meter"] is None
    else:
        wager_keys = {"ante", "bonus", "progressive"}
        for wagers in scenario["seats"].values():
            assert wagers["ante"] == wagers["bonus"]
        for decisions in scenario["decisions"].values():
            assert len(decisions) == 1
            if decisions[0] != "stand":
                discards = parse_cards(decisions[0][len("discard:"):].split(","))
                assert 1 <= len(discards) <= 2
        meter = expected["meter"]
        assert meter["after"] == (meter["before"] + meter["contributions"] - meter["awards"]
                                  + meter["reseed"])
    for wagers in scenario["seats"].values():
        assert set(wagers) <= wager_keys


def test_scenarios_cover_every_paytable_line() -> None:
    paid: Counter[tuple[str, str, str]] = Counter()
    for name in NAMES:
        scenario, expected = load(name)
        for entry in expected["settlements"]:
            bonus_wager = entry["wager"] in ("xtra_bonus", "lowdown_bonus", "bonus")
            if entry["result"] == "win" and bonus_wager:
                hand = expected["hands"][str(entry["seat"])]
                paid[(scenario["paytable"], entry["wager"], hand)] += 1
    for table in ("paytable-1", "paytable-2", "paytable-3"):
        for hand in PAYTABLES["three_card_lowball"][table]["bonus"]:
            assert paid[(table, "bonus", hand)], (table, hand)
    for wager in ("xtra_bonus", "lowdown_bonus"):
        for hand in PAYTABLES["cali_lowball"]["example"][wager]:
            assert paid[("example", wager, hand)], (wager, hand)
    awards = {entry["award"] for name in NAMES for entry in load(name)[1]["progressive"]}
    assert awards == {"jackpot", "pat-4-2-A-one-color", "pat-4-2-A-two-color", "4-high", "5-high"}


# --------------------------------------------------------------------------------------------
# Rankings
# --------------------------------------------------------------------------------------------


def five(text: str) -> tuple[Any, ...]:
    return five_card_key(parse_cards(text))


def three(text: str) -> tuple[Any, ...]:
    return three_card_key(parse_cards(text))


def test_five_card_ordering_examples() -> None:
    # the ace-to-five ranking: 7-6-4-3-2 beats 8-6-5-3-A (lower is better)
    assert five("7c 6d 4h 3s 2c") < five("8c 6d 5h 3s Ac")
    assert five("5c 4d 3h 2s Ac") < five("6c 4d 3h 2s Ac")       # the wheel is the nut low
    assert five("5c 4c 3c 2c Ac") == five("5d 4h 3s 2c Ad")       # flushes/straights ignored
    assert five("Kc Qd Jh Ts 8c") < five("Ac Ad 2h 3s 4c")        # any no pair < any pair
    assert five("Ac Ad 5h 3s 2c") < five("2c 2d 4h 3s Ac")        # aces are the lowest pair
    assert five("7c 7d 5h 3s 2c") < five("7h 7s 6h 3c 2d")        # pair, then kickers down
    assert five("Kc Qd Qh Ks Jc")[0] == 2
    assert five("8c 8d 3h 3s Kc") < five("9c 9d 2h 2s 3c")        # two pair: higher pair first
    assert five("9c 9d 2h 2s 5c") < five("9h 9s 3h 3s 4c")        # then lower pair
    assert five("9c 9d 2h 2s 5c") < five("9h 9s 2d 2c 6c")        # then kicker
    assert five("Kc Kd 9h 9s Qc") < five("Ac Ad Ah 2s 3c")        # two pair < trips
    assert five("Kc Kd Kh Qs Jc") < five("Ac Ad Ah 2s 2c")        # trips < full house
    assert five("Kc Kd Kh Qs Qc") < five("Ac Ad Ah As 2c")        # full house < quads
    assert five("2c 2d 2h 7s Kc") < five("3c 3d 3h As 2s")        # sets by rank


def test_five_card_classes() -> None:
    assert five_card_class(parse_cards("5c 4d 3h 2s Ac")) == "5-high"
    assert five_card_class(parse_cards("Tc 4d 3h 2s Ac")) == "10-high"
    assert five_card_class(parse_cards("Jc 4d 3h 2s Ac")) == "J-high"
    assert five_card_class(parse_cards("Kc Qd Jh 9s 8c")) == "K-high"
    assert five_card_class(parse_cards("Kc Kd Jh 9s 8c")) == "pair"
    assert five_card_class(parse_cards("Kc Kd Jh Js 8c")) == "two pair"
    assert five_card_class(parse_cards("Kc Kd Kh Js 8c")) == "three of a kind"
    assert five_card_class(parse_cards("Kc Kd Kh Js Jc")) == "full house"
    assert five_card_class(parse_cards("Kc Kd Kh Ks Jc")) == "four of a kind"


def test_five_card_category_counts_over_all_hands() -> None:
    """All 2,598,960 hands, counted by rank pattern x suit choices (exact, and fast)."""
    from math import comb

    counts: Counter[str] = Counter()
    # every multiset of 5 ranks with at most 4 of a rank, weighted by the suit choices
    def walk(start: int, left: int, chosen: list[int]) -> None:
        if left == 0:
            weight = 1
            for count in Counter(chosen).values():
                weight *= comb(4, count)
            cards = [DECK[13 * index + rank - 1]
                     for rank, n in Counter(chosen).items() for index in range(n)]
            counts[five_card_class(cards)] += weight
            return
        for rank in range(start, 14):
            if chosen.count(rank) < 4:
                walk(rank, left - 1, chosen + [rank])
    walk(1, 5, [])
    no_pair = sum(v for k, v in counts.items() if k.endswith("-high"))
    assert no_pair == 1_317_888
    assert counts["pair"] == 1_098_240
    assert counts["two pair"] == 123_552
    assert counts["three of a kind"] == 54_912
    assert counts["full house"] == 3_744
    assert counts["four of a kind"] == 624
    assert sum(counts.values()) == 2_598_960


def test_three_card_ordering_examples() -> None:
    assert three("4c 2d Ah") < three("4c 3d Ah") < three("5c 3d 2h") < three("5c 4d Ah")
    assert three("4c 2d Ah") == three("4h 2d Ac")                # colour does not rank
    assert three("Kc Qd Th") < three("Ac Ad 2h")                 # no pair < pair
    assert three("Ac Ad 2h") < three("Ac Ad 3h") < three("2c 2d Ah")
    assert three("Kc Kd Qh") < three("4c 2c Ac")                 # pair < flush
    assert three("Kc Qc Tc") < three("Ac 2d 3h")                 # flush < straight (A-2-3)
    assert three("Jc Qd Kh") < three("2c 2d 2h")                 # straight < trips
    assert three("Kc Kd Kh") < three("Ac 2c 3c")                 # trips < straight flush
    assert three("Ac 2d 3h") < three("2c 3d 4h")                 # straights by top card


def test_three_card_classes() -> None:
    def cls(text: str) -> str:
        return three_card_class(parse_cards(text))

    assert cls("Ah 2d 4h") == "4-2-A one color"
    assert cls("Ac 2s 4s") == "4-2-A one color"
    assert cls("Ac 2d 4s") == "4-2-A two color"
    assert cls("Ah 2h 4h") == "flush"
    assert cls("Ac 3d 4s") == "4-3-A"
    assert cls("2c 3d 4s") == "straight"
    assert cls("Ac 2d 3s") == "straight"
    assert cls("Qc Kd As") == "K-high"                           # Q-K-A is not a straight
    assert cls("5c 3d 2s") == "5-high"
    assert cls("Tc 5d 2s") == "10-high"
    assert cls("Qc Qd 2s") == "pair"
    assert cls("Qc Qd Qs") == "three of a kind"
    assert cls("9c Tc Jc") == "straight flush"


def test_three_card_class_counts_over_all_hands() -> None:
    counts = Counter(three_card_class(hand) for hand in combinations(DECK, 3))
    assert sum(counts.values()) == 22_100
    assert counts["straight flush"] == 44                        # 11 runs (A-2-3 .. J-Q-K) x 4
    assert counts["straight"] == 11 * 64 - 44
    assert counts["three of a kind"] == 52
    assert counts["pair"] == 13 * 6 * 48
    assert counts["flush"] == 4 * 286 - 44
    assert counts["4-2-A one color"] + counts["4-2-A two color"] == 60
    assert counts["4-2-A one color"] == 2 * (8 - 2)           # per colour 8, minus 2 flushes
    assert counts["4-3-A"] == 60


# --------------------------------------------------------------------------------------------
# House way
# --------------------------------------------------------------------------------------------


def discards(text: str) -> list[list[str]]:
    return [sorted(str(card) for card in option) for option in house_way_options(parse_cards(text))]


@pytest.mark.parametrize(
    ("dealt", "allowed"),
    [
        ("6c 6d 6h", [["6c", "6d"], ["6c", "6h"], ["6d", "6h"]]),  # trips: any two
        ("Kh Qh 3h", [["Kh", "Qh"]]),                               # flush, two T+
        ("Js 8s 2s", [["Js"]]),                                     # flush, one T+
        ("7d 4d 3d", [["7d"]]),                                     # flush, none T+
        ("Jc Td 9h", [["Jc", "Td"]]),                               # straight, two T+
        ("Tc 9d 8h", [["Tc"]]),                                     # straight, one T+
        ("Ac 2d 3h", [["3h"]]),                                     # A-2-3 straight
        ("Jd Qd Kd", [["Kd", "Qd"]]),                               # straight flush, two T+
        ("6s 7s 8s", [["8s"]]),                                     # straight flush, none
        ("5c 5d Qh", [["5c", "Qh"], ["5d", "Qh"]]),                 # pair + kicker T+
        ("8c 8s 3h", [["8c"], ["8s"]]),                             # pair + low kicker, no match
        ("7c 7d 2d", [["7d"]]),                                     # suit match: discard 7d
        ("3h 3s 2s", [["3s"]]),
        ("Kc Kh 4s", [["Kc", "Kh"]]),                               # higher remaining is the K
        ("Ac Ad Kh", [["Ac", "Kh"], ["Ad", "Kh"]]),
        ("9c 6h 2h", [[]]),                                         # no pair, nothing T+
        ("Kc 5d 3h", [["Kc"]]),
        ("Kd Js 4c", [["Js", "Kd"]]),
        ("Kh Qc Ts", [["Kh", "Qc"]]),                               # all T+: keep the lowest
    ],
)
def test_house_way(dealt: str, allowed: list[list[str]]) -> None:
    assert discards(dealt) == allowed

"""Properties over random legal hands of both games (hypothesis).

- Every locked wager (and every Raise made) is settled exactly once; nothing else is.
- Each settlement's net agrees with its result; money is conserved: the players' total net
  over wagers and awards is exactly minus the house result.
- The meter moves by contributions, the jackpot paid and the reseed, and nothing else.
- Every event has each of its fields.
- An independent reference implementation (tests/support/reference_settlement.py) settles the same
  hand identically. Where the house way lets the Three Card dealer discard either of two
  equal choices (two of three of a kind, either pair card), the engine's choice must be one
  the rules allow, and the reference settles with that one: the choice can decide the hand
  (the kept queen of three may make a flush with the two drawn).
"""

import random
import tomllib
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.core.cards import Card, DECK
from controller.core.events import (
    CardDealt,
    DecisionMade,
    HandSettled,
    HouseWay,
    MeterSettled,
    ProgressiveAwarded,
    WagerSettled,
    WagersLocked,
)
from controller.core.games import CaliLowballHand, Decision, ThreeCardLowballHand
from controller.core.games.base import Hand
from controller.settings.table_config import LoadedConfig, Rules, shipped_config_dir

from tests.support import reference_settlement

PAYTABLES = tomllib.loads((shipped_config_dir() / "paytables.toml").read_text())
REFERENCE_PROGRESSIVE = {"wager": 100, "seed": 500_000, "contribution_rate_percent": 20,
                         "awards": {"pat-4-2-A-one-color": 20000, "pat-4-2-A-two-color": 5000,
                                    "4-high": 1000, "5-high": 300}}

seats = st.sets(st.integers(1, 7), min_size=1, max_size=7)
antes = st.sampled_from([500, 1000, 1500, 2500, 10_000])


def drive(hand: Hand, data: st.DataObject, shoe: list[Card]) -> dict[str, list[str]]:
    """Play to settlement with random legal decisions; return the scenario decisions."""
    deck = iter(shoe)
    decisions: dict[str, list[str]] = {}
    while (step := hand.next_step()).kind != "settled":
        if step.kind == "card":
            hand.deal(next(deck))
            continue
        seat = data.draw(st.sampled_from(step.seats))
        action = data.draw(st.sampled_from(step.options))
        if action == "discard":
            assert isinstance(hand, ThreeCardLowballHand)      # the game that discards
            held = list(hand.dealt[seat])
            count = data.draw(st.integers(1, 2))
            decision = Decision("discard", tuple(data.draw(st.permutations(held)))[:count])
        else:
            decision = Decision(action)
        hand.decide(seat, decision)
        decisions.setdefault(str(seat), []).append(str(decision))
    return decisions


def check_accounting(hand: Hand) -> list[WagerSettled]:
    for event in hand.history:
        assert len(event) == len(type(event)._fields), event
    locked = next(e for e in hand.history if type(e) is WagersLocked)
    raised = [(e.seat, "raise", e.raised) for e in hand.history
              if type(e) is DecisionMade and e.raised]
    owed = Counter([(w.seat, w.wager, w.amount) for w in locked.wagers] + raised)
    settled = [e for e in hand.history if type(e) is WagerSettled]
    assert Counter((s.seat, s.wager, s.amount) for s in settled) == owed
    for s in settled:
        assert isinstance(s.net, int)
        if s.result == "push":
            assert s.net == 0
        elif s.result in ("lose", "forfeit"):
            assert s.net == -s.amount
        else:
            assert s.result == "win" and s.net >= 0
    awards = sum(e.amount for e in hand.history if type(e) is ProgressiveAwarded)
    final = hand.history[-1]
    assert type(final) is HandSettled
    assert final.players_net == sum(s.net for s in settled) + awards == -final.house_result
    return settled


def scenario_of(hand: Hand, wagers: dict[int, dict[str, int]], decisions: dict[str, list[str]],
                rules: dict[str, Any]) -> dict[str, Any]:
    return {"game": hand.game, "paytable": hand.setup.paytable_name,
            "seats": {str(seat): amounts for seat, amounts in wagers.items()},
            "decisions": decisions,
            "shoe": [str(e.card) for e in hand.history if type(e) is CardDealt],
            "rules": rules}


def engine_dealer_option(hand: Hand) -> int:
    """Which of the house way's allowed discards (the reference's list) the engine chose."""
    way = next((e for e in hand.history if type(e) is HouseWay), None)
    if way is None:
        return 0
    options = reference_settlement.house_way_options(way.hand)
    assert frozenset(way.discard) in options, (way, options)
    return options.index(frozenset(way.discard))


def same_as_reference(hand: Hand, scenario: dict[str, Any], meter: int | None = None) -> None:
    if meter is not None:
        scenario["meter"] = meter
    expected = reference_settlement.settle(scenario, PAYTABLES, REFERENCE_PROGRESSIVE,
                                           dealer_option=engine_dealer_option(hand))
    settled = [e._asdict() for e in hand.history if type(e) is WagerSettled]
    assert settled == expected["settlements"]
    awards = [dict(seat=e.seat, award=e.award, amount=e.amount, player=e.player)
              for e in hand.history if type(e) is ProgressiveAwarded]
    assert awards == expected["progressive"]
    meter_event = next((e for e in hand.history if type(e) is MeterSettled), None)
    assert (meter_event._asdict() if meter_event else None) == expected["meter"]


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seats=seats, seed=st.integers(0, 2**32 - 1),
       rules=st.fixed_dictionaries({"xtra_bonus_loses_on_loss": st.booleans(),
                                    "lowdown_bonus_survives_fold": st.booleans(),
                                    "burn_before_flop": st.booleans()}))
def test_cali_lowball_random_hands(cali_config: LoadedConfig, data: st.DataObject, seats: set[int],
                                   seed: int, rules: dict[str, Any]) -> None:
    wagers: dict[int, dict[str, int]] = {}
    for seat in sorted(seats):
        ante = data.draw(antes)
        wagers[seat] = {"ante": ante, "xtra_bonus": ante}
        lowdown = data.draw(st.sampled_from([0, 0, 100, 500]))
        if lowdown:
            wagers[seat]["lowdown_bonus"] = lowdown
    shoe = random.Random(seed).sample(DECK, 52)
    hand = CaliLowballHand(cali_config.setup(rules=Rules(**rules)), wagers)
    decisions = drive(hand, data, shoe)
    check_accounting(hand)
    same_as_reference(hand, scenario_of(hand, wagers, decisions, rules))


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seats=seats, seed=st.integers(0, 2**32 - 1),
       paytable=st.sampled_from(["paytable-1", "paytable-2", "paytable-3"]),
       meter=st.integers(0, 10**7), split=st.sampled_from(["equal", "full_each"]))
def test_three_card_lowball_random_hands(three_card_config: LoadedConfig, data: st.DataObject,
                                         seats: set[int], seed: int, paytable: str, meter: int,
                                         split: str) -> None:
    wagers: dict[int, dict[str, int]] = {}
    for seat in sorted(seats):
        ante = data.draw(antes)
        wagers[seat] = {"ante": ante, "bonus": ante}
        if data.draw(st.booleans()):
            wagers[seat]["progressive"] = 100
    rules: dict[str, Any] = {"jackpot_split": split}
    shoe = random.Random(seed).sample(DECK, 52)
    hand = ThreeCardLowballHand(three_card_config.setup(paytable=paytable, rules=Rules(**rules)),
                                wagers, meter=meter)
    decisions = drive(hand, data, shoe)
    check_accounting(hand)
    m = next(e for e in hand.history if type(e) is MeterSettled)
    assert m.after == m.before + m.contributions - m.awards + m.reseed
    assert m.contributions == 20 * sum("progressive" in w for w in wagers.values())
    same_as_reference(hand, scenario_of(hand, wagers, decisions, rules), meter)


def test_jackpot_hands_are_reached_and_split() -> None:
    """Random play rarely deals two pat 4-2-A hands, so force one through a stacked shoe."""
    from controller.core.cards import parse_cards
    from controller.settings.table_config import default_config_path, load_config

    setup = load_config(default_config_path("three_card_lowball")).setup()
    hand = ThreeCardLowballHand(setup, {s: {"ante": 500, "bonus": 500, "progressive": 100}
                                        for s in (1, 2, 3)}, meter=1_000_000)
    shoe = iter(parse_cards("4h 4d 9s 4c 2c 2h Ks 2d As Ad Qs Ac"))
    while (step := hand.next_step()).kind != "settled":
        if step.kind == "card":
            hand.deal(next(shoe))
        else:
            hand.decide(step.seats[0], Decision("stand"))
    check_accounting(hand)
    awards = [(e.seat, e.award, e.amount) for e in hand.history if type(e) is ProgressiveAwarded]
    pool = 1_000_000 + 60
    assert awards == [(1, "jackpot", pool // 2), (2, "jackpot", pool // 2)]


def test_the_dealers_choice_between_equal_discards_can_decide_the_hand(
        three_card_config: LoadedConfig) -> None:
    """Found by hypothesis: the dealer is dealt Qs Qh Qc and keeps one queen. The engine keeps
    Qc, and the draw (Ac 3c) makes a flush, which seat 3's K-high beats; keeping Qs would
    have made Q-high, which beats K-high. The reference must settle with the engine's choice."""
    from controller.core.cards import parse_cards

    seats = range(1, 6)
    wagers = {seat: {"ante": 500, "bonus": 500} for seat in seats}
    hand = ThreeCardLowballHand(three_card_config.setup(paytable="paytable-1"), wagers, meter=0)
    shoe = iter(parse_cards("2c 9s 9h Tc 6s Qs 7c 6h Kd 2s Ts Qh 9d 2d 5c 5s 3d Qc 8h Kh Ac 3c"))
    decisions = {1: "stand", 2: "stand", 3: "stand", 4: "discard:Tc", 5: "discard:6s"}
    while not hand.settled:
        step = hand.next_step()
        if step.kind == "card":
            hand.deal(next(shoe))
        else:
            for seat in step.seats:
                hand.decide(seat, Decision.parse(decisions[seat]))
    way = next(e for e in hand.history if type(e) is HouseWay)
    assert len(reference_settlement.house_way_options(way.hand)) == 3   # any two of three
    ante_3 = next(e for e in hand.history if type(e) is WagerSettled
                  and e.seat == 3 and e.wager == "ante")
    assert ante_3.result == "win"                                       # K-high beats a flush
    scenario = scenario_of(hand, wagers, {str(s): [d] for s, d in decisions.items()}, {})
    same_as_reference(hand, scenario, 0)

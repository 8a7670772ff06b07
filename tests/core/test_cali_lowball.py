from typing import Any

import pytest

from controller.core.cards import parse_card
from controller.core.events import CardDealt, DecisionsDue, HandSettled, PhaseStarted
from controller.core.games import CaliLowballHand, Decision, IllegalAction, WagerError

from tests.support.table import SetupFactory, play

W = {"ante": 1000, "xtra_bonus": 1000}


def test_deal_order_two_rounds_then_the_flop(cali_setup: SetupFactory) -> None:
    hand = CaliLowballHand(cali_setup(), {2: W, 5: W})
    recipients = []
    for text in "As 2s 3s 4s 5s 6s".split():
        recipients.append(hand.next_step().to)
        hand.deal(parse_card(text))
    assert recipients == [2, 5, "dealer", 2, 5, "dealer"]
    assert hand.next_step().kind == "decision" and hand.next_step().seats == (2, 5)
    with pytest.raises(IllegalAction, match="not expected: waiting for decisions of spots 2, 5"):
        hand.deal(parse_card("7s"))
    hand.decide(5, Decision("raise"))
    hand.decide(2, Decision("check"))
    assert [hand.next_step().to] == ["community"]


def test_burn_before_flop_joins_no_hand(cali_setup: SetupFactory) -> None:
    hand = CaliLowballHand(cali_setup(burn_before_flop=True), {1: W})
    results = play(hand, "As 9c 2s 9d Kh 3s 4s 5s", {1: ["raise"]})
    assert hand.cards["burn"] == [parse_card("Kh")]
    assert hand.final_hand(1) == tuple(parse_card(c) for c in "As 2s 3s 4s 5s".split())
    assert results[(1, "xtra_bonus")] == ("win", 50_000)      # 5-high pays 50:1


def test_players_win_ties(cali_setup: SetupFactory) -> None:
    # Seat and dealer both end with 8-6-4-3-2 ranks.
    hand = CaliLowballHand(cali_setup(), {1: W})
    results = play(hand, "8s 8d 6s 6d 4c 3h 2s", {1: ["raise"]})
    assert results[(1, "ante")] == ("win", 1000)
    assert results[(1, "raise")] == ("win", 3000)


def test_dealer_pair_of_jacks_pushes_the_ante_only(cali_setup: SetupFactory) -> None:
    hand = CaliLowballHand(cali_setup(), {1: W})
    results = play(hand, "As Js 2s Jd 3c 4h 5d", {1: ["check", "bet"]})
    assert results == {(1, "ante"): ("push", 0), (1, "xtra_bonus"): ("win", 50_000),
                       (1, "raise"): ("win", 1000)}


def test_fold_forfeits_ante_xtra_and_lowdown(cali_setup: SetupFactory) -> None:
    hand = CaliLowballHand(cali_setup(), {1: {**W, "lowdown_bonus": 500}})
    results = play(hand, "Ks 2c Qs 3c 2d 4h 5d", {1: ["check", "fold"]})
    assert results == {(1, "ante"): ("forfeit", -1000), (1, "xtra_bonus"): ("forfeit", -1000),
                       (1, "lowdown_bonus"): ("forfeit", -500)}
    assert hand.history[-1] == HandSettled(players_net=-2500, house_result=2500)


def test_lowdown_survives_fold_when_configured(cali_setup: SetupFactory) -> None:
    hand = CaliLowballHand(cali_setup(lowdown_bonus_survives_fold=True),
                           {1: {**W, "lowdown_bonus": 500}})
    results = play(hand, "Js 2c Ts 3c 2d 4h 5d", {1: ["check", "fold"]})
    assert results[(1, "lowdown_bonus")] == ("win", 500)       # J-high pays 1:1


def test_xtra_bonus_loses_on_loss_variant(cali_setup: SetupFactory) -> None:
    shoe, decisions = "Ks 2c Qs 3c 9d 8h 7d", {1: ["check", "bet"]}
    pushed = play(CaliLowballHand(cali_setup(), {1: W}), shoe, decisions)
    lost = play(CaliLowballHand(cali_setup(xtra_bonus_loses_on_loss=True), {1: W}), shoe, decisions)
    assert pushed[(1, "xtra_bonus")] == ("push", 0)
    assert lost[(1, "xtra_bonus")] == ("lose", -1000)


@pytest.mark.parametrize("wagers, says", [
    ({}, "no wagers"),
    ({1: {"ante": 1000, "xtra_bonus": 500}},
     r"spot 1: Ante \$10.00 and X-Tra Bonus \$5.00 must be equal"),
    ({1: {"ante": 1000}}, "spot 1: the X-Tra Bonus wager is required"),
    ({8: W}, "spot 8: spots are numbered 1 to 7"),
    ({1: {**W, "bonus": 5}}, "spot 1: 'bonus' is not a cali_lowball wager"),
    ({1: {**W, "lowdown_bonus": 2.5}}, "spot 1: lowdown_bonus must be a whole number of cents"),
    ({1: {**W, "lowdown_bonus": True}}, "whole number of cents"),
    ({1: {"ante": -5, "xtra_bonus": -5}}, "whole number of cents"),
])
def test_bad_wagers_are_refused_with_the_seat_named(cali_setup: SetupFactory,
                                                    wagers: dict[int, dict[str, Any]], says: str
                                                    ) -> None:
    with pytest.raises(WagerError, match=says):
        CaliLowballHand(cali_setup(), wagers)


def test_refused_actions_change_nothing(cali_setup: SetupFactory) -> None:
    hand = CaliLowballHand(cali_setup(), {1: W, 3: W})
    hand.deal(parse_card("As"))
    before = (list(hand.history), hand.next_step())
    with pytest.raises(IllegalAction, match="duplicate card As: already dealt to spot 1"):
        hand.deal(parse_card("As"))
    with pytest.raises(IllegalAction, match="no decision now; waiting for a card for spot 3"):
        hand.decide(1, Decision("raise"))
    assert (list(hand.history), hand.next_step()) == before
    assert not hand.can_deal(parse_card("As")) and hand.can_deal(parse_card("Ks"))


def test_illegal_decisions_name_why(cali_setup: SetupFactory) -> None:
    hand = CaliLowballHand(cali_setup(), {1: W, 3: W})
    for text in "As 2s 3s 4s 5s 6s".split():
        hand.deal(parse_card(text))
    with pytest.raises(IllegalAction, match="'bet' is not allowed pre-flop; choose raise or check"):
        hand.decide(1, Decision("bet"))
    with pytest.raises(IllegalAction, match="spot 2 is not in this hand"):
        hand.decide(2, Decision("raise"))
    hand.decide(1, Decision("raise"))
    with pytest.raises(IllegalAction, match="spot 1 has no decision to make now"):
        hand.decide(1, Decision("check"))
    hand.decide(3, Decision("check"))
    for text in "7s 8s 9s".split():
        hand.deal(parse_card(text))
    with pytest.raises(IllegalAction, match="spot 1 has no decision"):
        hand.decide(1, Decision("bet"))
    hand.decide(3, Decision("fold"))
    assert hand.settled
    with pytest.raises(IllegalAction, match="the hand is settled"):
        hand.deal(parse_card("Ts"))


def test_events_tell_the_story(cali_setup: SetupFactory) -> None:
    hand = CaliLowballHand(cali_setup(), {1: W})
    play(hand, "As 2c 3s 4c 9d 8h 7d", {1: ["raise"]})
    phases = [event.phase for event in hand.history if type(event) is PhaseStarted]
    assert phases == ["hole cards", "pre-flop", "flop", "showdown"]   # nobody checked
    assert sum(type(event) is CardDealt for event in hand.history) == 7
    assert [e.seats for e in hand.history if type(e) is DecisionsDue] == [(1,)]

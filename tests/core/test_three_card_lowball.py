import pytest

from controller.core.cards import parse_card, parse_cards
from controller.core.events import HouseWay, MeterContributed, MeterSettled, ProgressiveAwarded
from controller.core.games import Decision, IllegalAction, ThreeCardLowballHand, WagerError
from controller.core.games.base import Hand

from tests.support.table import SetupFactory, play

W = {"ante": 1000, "bonus": 1000}
P = {**W, "progressive": 100}


def awards(hand: Hand) -> dict[int, tuple[str, int]]:
    return {e.seat: (e.award, e.amount) for e in hand.history if type(e) is ProgressiveAwarded}


def meter(hand: Hand) -> MeterSettled:
    return next(e for e in hand.history if type(e) is MeterSettled)


def test_draws_go_seat_by_seat_then_the_dealer(three_card_setup: SetupFactory) -> None:
    hand = ThreeCardLowballHand(three_card_setup(), {1: W, 2: W})
    for text in "Kh 9c 8d 2h 9d Ts 3h 7c Js".split():
        hand.deal(parse_card(text))
    assert hand.next_step().seats == (1,)
    with pytest.raises(IllegalAction, match="spot 2 has no decision to make now"):
        hand.decide(2, Decision("stand"))
    hand.decide(1, Decision.parse("discard:Kh"))
    assert hand.next_step().to == 1
    hand.deal(parse_card("Ac"))
    assert hand.next_step().seats == (2,)
    hand.decide(2, Decision("stand"))
    # Dealer 8d Ts Js: no pair, discard every card ten or higher.
    (way,) = [e for e in hand.history if type(e) is HouseWay]
    assert set(way.discard) == set(parse_cards("Ts Js"))
    assert [hand.next_step().to] == ["dealer"]


@pytest.mark.parametrize("discard, says", [
    ("discard:Kh,9c,8d", "discard 1 or 2 cards"),
    ("discard:As", "cannot discard As, the spot holds Kh 2h 3h"),
    ("discard:Kh,Kh", "named twice"),
])
def test_illegal_discards(three_card_setup: SetupFactory, discard: str, says: str) -> None:
    hand = ThreeCardLowballHand(three_card_setup(), {1: W})
    for text in "Kh 9c 2h 8d 3h 7c".split():
        hand.deal(parse_card(text))
    with pytest.raises(IllegalAction, match=says):
        hand.decide(1, Decision.parse(discard))
    assert hand.can_decide(1, Decision("stand"))


def test_tie_pushes_and_dealer_lower_loses(three_card_setup: SetupFactory) -> None:
    tie = play(ThreeCardLowballHand(three_card_setup(), {1: W}),
               "7h 7c 5h 5c 2d 2s", {1: ["stand"]})
    assert tie == {(1, "ante"): ("push", 0), (1, "bonus"): ("push", 0)}
    lost = play(ThreeCardLowballHand(three_card_setup(), {1: W}),
                "8h 7c 5h 5c 2d 2s", {1: ["stand"]})
    assert lost == {(1, "ante"): ("lose", -1000), (1, "bonus"): ("lose", -1000)}


@pytest.mark.parametrize("paytable, odds", [("paytable-1", 10), ("paytable-2", 12),
                                            ("paytable-3", 10)])
def test_bonus_pays_by_the_selected_paytable(three_card_setup: SetupFactory, paytable: str,
                                             odds: int) -> None:
    hand = ThreeCardLowballHand(three_card_setup(paytable), {1: W})
    results = play(hand, "4h 9c 2d 8c Ah 6s", {1: ["stand"]})
    assert results[(1, "bonus")] == ("win", 1000 * odds)


def test_pat_one_color_award_and_meter_contribution(three_card_setup: SetupFactory) -> None:
    hand = ThreeCardLowballHand(three_card_setup(), {1: P, 2: W}, meter=123_456)
    play(hand, "4h Kc 9c 2d Qc 8c Ah Jd 6s", {1: ["stand"], 2: ["stand"]})
    assert hand.history[1] == MeterContributed(123_456, 20, 123_476)
    assert awards(hand) == {1: ("pat-4-2-A-one-color", 20_000)}
    assert meter(hand) == MeterSettled(123_456, 20, 0, 0, 123_476)


def test_jackpot_split_equally_odd_cent_stays(three_card_setup: SetupFactory) -> None:
    # Seats 1 and 2 and the dealer are all dealt 4-2-A.
    hand = ThreeCardLowballHand(three_card_setup(), {1: P, 2: P}, meter=100_001)
    play(hand, "4h 4c 4d 2d 2h 2c As Ac Ad", {1: ["stand"], 2: ["stand"]})
    pool = 100_001 + 40
    assert awards(hand) == {1: ("jackpot", pool // 2), 2: ("jackpot", pool // 2)}
    assert meter(hand) == MeterSettled(100_001, 40, pool - 1, 500_000, 1 + 500_000)


def test_jackpot_full_each(three_card_setup: SetupFactory) -> None:
    hand = ThreeCardLowballHand(three_card_setup(jackpot_split="full_each"), {1: P, 2: P},
                                meter=100_000)
    play(hand, "4h 4c 4d 2d 2h 2c As Ac Ad", {1: ["stand"], 2: ["stand"]})
    assert awards(hand) == {1: ("jackpot", 100_040), 2: ("jackpot", 100_040)}
    assert meter(hand).after == 500_000


@pytest.mark.parametrize("wagers, says", [
    ({1: {"ante": 1000, "bonus": 900}}, r"spot 1: Ante \$10.00 and Bonus \$9.00 must be equal"),
    ({1: {**W, "progressive": 500}}, r"spot 1: the progressive wager is \$1.00, not \$5.00"),
    ({1: {"ante": 1000}}, "the Bonus wager is required"),
])
def test_bad_wagers(three_card_setup: SetupFactory, wagers: dict[int, dict[str, int]],
                    says: str) -> None:
    with pytest.raises(WagerError, match=says):
        ThreeCardLowballHand(three_card_setup(), wagers)


def test_bad_meter(three_card_setup: SetupFactory) -> None:
    with pytest.raises(WagerError, match="meter must be a whole number"):
        ThreeCardLowballHand(three_card_setup(), {1: W}, meter=-1)

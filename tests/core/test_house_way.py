"""Every branch of the Three Card Lowball dealer's house way."""

from itertools import combinations

import pytest

from controller.core.cards import DECK, TEN, parse_cards
from controller.core.games import house_way as hw
from controller.core.rankings import three_card


@pytest.mark.parametrize("hand, discard, rule", [
    # three of a kind: two of the three
    ("9s 9h 9d", "9h 9s", hw.TRIPS_RULE),
    # flush / straight / straight flush: the two highest if both are ten or higher
    ("Ks Qs 2s", "Ks Qs", hw.FLUSH_OR_STRAIGHT_TWO_RULE),
    ("Qh Kc Jd", "Kc Qh", hw.FLUSH_OR_STRAIGHT_TWO_RULE),
    ("Jh Qh Kh", "Kh Qh", hw.FLUSH_OR_STRAIGHT_TWO_RULE),
    ("Ts 9s 2s", "Ts", hw.FLUSH_OR_STRAIGHT_ONE_RULE),          # only one ten or higher
    ("4c 2c Ac", "4c", hw.FLUSH_OR_STRAIGHT_ONE_RULE),          # a flush 4-2-A
    ("3h 2c Ad", "3h", hw.FLUSH_OR_STRAIGHT_ONE_RULE),          # A-2-3 is a straight
    ("Td 9c 8h", "Td", hw.FLUSH_OR_STRAIGHT_ONE_RULE),
    ("7s 6s 5s", "7s", hw.FLUSH_OR_STRAIGHT_ONE_RULE),          # straight flush, low
    # one pair: a pair card, plus the higher remaining card when it is ten or higher
    ("2h 2c Qd", "2c Qd", hw.PAIR_TWO_RULE),                    # the singleton is high
    ("Kd Ks 3h", "Kd Ks", hw.PAIR_TWO_RULE),                    # the other pair card is high
    ("Th Tc 9d", "Tc Th", hw.PAIR_TWO_RULE),
    ("7h 7c 3h", "7h", hw.PAIR_SUIT_RULE),                      # matches the singleton's suit
    ("7c 7h 3h", "7h", hw.PAIR_SUIT_RULE),
    ("9s 9d 8s", "9s", hw.PAIR_SUIT_RULE),
    ("7h 7c 3d", "7c", hw.PAIR_EITHER_RULE),                    # neither matches: lowest suit
    ("Ah Ad 5s", "Ad", hw.PAIR_EITHER_RULE),
    # no pair: every card ten or higher; all three: keep the lowest
    ("Ks 7d 2c", "Ks", hw.NO_PAIR_RULE),
    ("Ks Jd 2c", "Ks Jd", hw.NO_PAIR_RULE),
    ("Ks Qd Tc", "Ks Qd", hw.NO_PAIR_ALL_HIGH_RULE),
    ("Ks Jd Tc", "Ks Jd", hw.NO_PAIR_ALL_HIGH_RULE),
    ("9s 7d 2c", "", hw.NO_PAIR_STAND_RULE),
    ("4h 2d Ac", "", hw.NO_PAIR_STAND_RULE),
])
def test_house_way(hand: str, discard: str, rule: str) -> None:
    draw = hw.house_way(parse_cards(hand))
    assert sorted(map(str, draw.discard)) == sorted(discard.split())
    assert draw.rule == rule


def test_the_house_way_holds_for_every_dealt_hand() -> None:
    """Checked as properties over all 22,100 hands rather than by re-implementing it."""
    for hand in combinations(DECK, 3):
        draw = hw.house_way(hand)
        kept = [card for card in hand if card not in draw.discard]
        assert set(draw.discard) <= set(hand) and len(draw.discard) <= 2
        category = three_card.order_key(((hand[0].rank, hand[1].rank, hand[2].rank),
                                         len({card.suit for card in hand}) == 1))[0]
        if category == three_card.TRIPS:
            assert len(draw.discard) == 2
        elif category in (three_card.FLUSH, three_card.STRAIGHT, three_card.STRAIGHT_FLUSH):
            top_two = sorted((card.rank for card in hand), reverse=True)[:2]
            assert len(draw.discard) == (2 if min(top_two) >= TEN else 1)
            assert all(card.rank >= kept_card.rank for card in draw.discard for kept_card in kept)
        elif category == three_card.PAIR:
            assert len({card.rank for card in kept}) == len(kept)     # the pair is broken
            if len(draw.discard) == 1:
                (single,) = [c for c in hand if [x.rank for x in hand].count(c.rank) == 1]
                suited = [c for c in hand if c is not single and c.suit == single.suit]
                if suited:
                    assert draw.discard == (suited[0],)
        else:
            assert all(card.rank >= TEN for card in draw.discard)
            assert len(kept) >= 1
            assert all(card.rank < TEN for card in kept) or len(kept) == 1


def test_the_house_way_needs_three_cards() -> None:
    with pytest.raises(ValueError, match="three cards"):
        hw.house_way(parse_cards("As 2d"))

"""The Three Card Lowball dealer's house way: which cards the dealer discards.

The controller computes the draw and shows it to the dealer; the dealer never decides.
From the game's rules:

- Three of a kind: discard two of the three.
- Flush, straight or straight flush: discard the two highest cards if both are ten or higher;
  otherwise discard the highest card.
- One pair: discard one card of the pair and, if the higher of the two remaining cards is ten
  or higher, that card as well. When discarding only one card of the pair, discard the pair
  card whose suit matches the singleton if one does; otherwise either.
- No pair: discard every card ten or higher; if all three are, keep the lowest.

Where the rules say "either" or "any", the controller picks deterministically (the card of
the lowest suit in c, d, h, s order), so the same hand always gets the same instruction.

>>> from controller.core.cards import parse_cards
>>> house_way(parse_cards("7h 7c 3h")).discard
(Card(7h),)
>>> house_way(parse_cards("Kd Ks 3h")).discard
(Card(Kd), Card(Ks))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from controller.core.cards import SUIT_CHARS, TEN, Card
from controller.core.rankings.three_card import is_straight

TRIPS_RULE = "three of a kind: discard two of the three"
FLUSH_OR_STRAIGHT_TWO_RULE = "flush/straight: the two highest cards are ten or higher, discard both"
FLUSH_OR_STRAIGHT_ONE_RULE = "flush/straight: discard the highest card"
PAIR_TWO_RULE = "pair: discard a pair card and the higher remaining card (ten or higher)"
PAIR_SUIT_RULE = "pair: discard the pair card matching the singleton's suit"
PAIR_EITHER_RULE = "pair: discard one pair card (neither matches the singleton's suit)"
NO_PAIR_RULE = "no pair: discard every card ten or higher"
NO_PAIR_ALL_HIGH_RULE = "no pair: all three are ten or higher, keep the lowest"
NO_PAIR_STAND_RULE = "no pair: no card ten or higher, stand"


class HouseWayDraw(NamedTuple):
    discard: tuple[Card, ...]
    rule: str


def _by_suit(card: Card) -> int:
    return SUIT_CHARS.index(card.suit)


def _highest_first(cards: Sequence[Card]) -> list[Card]:
    return sorted(cards, key=lambda card: (-card.rank, _by_suit(card)))


def house_way(hand: Sequence[Card]) -> HouseWayDraw:
    """The dealer's discard for a three-card ``hand`` (any order), with the rule applied."""
    if len(hand) != 3:
        raise ValueError(f"the house way needs the dealer's three cards, got {len(hand)}")
    ranks = [card.rank for card in hand]
    distinct = len(set(ranks))
    if distinct == 1:
        return HouseWayDraw(tuple(sorted(hand, key=_by_suit)[1:]), TRIPS_RULE)
    if distinct == 2:
        return _pair_way(hand)
    flush = len({card.suit for card in hand}) == 1
    high_first = _highest_first(hand)
    if flush or is_straight(ranks):
        if high_first[1].rank >= TEN:
            return HouseWayDraw(tuple(high_first[:2]), FLUSH_OR_STRAIGHT_TWO_RULE)
        return HouseWayDraw((high_first[0],), FLUSH_OR_STRAIGHT_ONE_RULE)
    high = [card for card in high_first if card.rank >= TEN]
    if len(high) == 3:
        return HouseWayDraw(tuple(high[:2]), NO_PAIR_ALL_HIGH_RULE)
    return HouseWayDraw(tuple(high), NO_PAIR_RULE if high else NO_PAIR_STAND_RULE)


def _pair_way(hand: Sequence[Card]) -> HouseWayDraw:
    ranks = [card.rank for card in hand]
    pair_rank = next(rank for rank in ranks if ranks.count(rank) == 2)
    pair = sorted((card for card in hand if card.rank == pair_rank), key=_by_suit)
    (singleton,) = (card for card in hand if card.rank != pair_rank)
    # After one pair card goes, the two remaining are the other pair card and the singleton.
    if max(pair_rank, singleton.rank) >= TEN:
        higher = pair[1] if pair_rank > singleton.rank else singleton
        return HouseWayDraw((pair[0], higher), PAIR_TWO_RULE)
    matching = [card for card in pair if card.suit == singleton.suit]
    if matching:
        return HouseWayDraw((matching[0],), PAIR_SUIT_RULE)
    return HouseWayDraw((pair[0],), PAIR_EITHER_RULE)

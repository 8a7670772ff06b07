"""Three-card low, the Three Card Lowball ranking.

Aces are always low (A-2-3 is a straight; Q-K-A is not). Straights and flushes count against
the player. Better (lower) to worse: no pair < one pair < flush < straight < three of a kind <
straight flush. Within a class compare from the top card down (pairs: the pair's rank, then the
kicker). The best hand is 4-2-A of at least two suits.

Hand classes name the paytable lines: ``4-2-A one color`` (all red or all black, not all one
suit), ``4-2-A two color``, ``4-3-A``, ``5-high`` .. ``K-high``, ``pair``, ``flush``,
``straight``, ``three of a kind``, ``straight flush``.

>>> from controller.core.cards import parse_cards
>>> hand_class(parse_cards("4h 2d Ah"))
'4-2-A one color'
>>> hand_class(parse_cards("3s 2d Ah"))
'straight'
>>> strength(parse_cards("4h 2d Ac")) < strength(parse_cards("4h 3d Ac"))
True
>>> strength_and_class(parse_cards("4h 2d Ac"))
(1, '4-2-A two color')
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import combinations_with_replacement
from typing import Final

from controller.core.cards import Card
from controller.core.rankings._tables import dense_strengths, prime_product
from controller.core.vocabulary import HIGH_CARD_CLASSES, HandClass, text_of

NO_PAIR, PAIR, FLUSH, STRAIGHT, TRIPS, STRAIGHT_FLUSH = range(6)
#: The class of each category but no pair (named by its top card), as plain text.
_CATEGORY_NAMES = ("", *(text_of(member) for member in (
    HandClass.PAIR, HandClass.FLUSH, HandClass.STRAIGHT, HandClass.THREE_OF_A_KIND,
    HandClass.STRAIGHT_FLUSH)))
#: The no-pair classes by top card, as plain text.
_HIGH_NAMES = {top: text_of(member) for top, member in HIGH_CARD_CLASSES.items()}
ONE_COLOR: Final = text_of(HandClass.FOUR_TWO_ACE_ONE_COLOR)
TWO_COLOR: Final = text_of(HandClass.FOUR_TWO_ACE_TWO_COLOR)
FOUR_THREE_ACE: Final = text_of(HandClass.FOUR_THREE_ACE)
#: 4-2-A before its color is known (the tables see ranks and suits, not colors): not a class.
_FOUR_TWO_ACE: Final = "4-2-A"

#: Every hand class, best first, as plain text (:class:`HandClass`'s values).
HAND_CLASSES: tuple[str, ...] = (
    ONE_COLOR, TWO_COLOR, FOUR_THREE_ACE, *_HIGH_NAMES.values(), *_CATEGORY_NAMES[1:])

#: 4-high hands (the two no-pair hands topped by a four): the progressive's "4 high".
FOUR_HIGH_CLASSES = frozenset(HAND_CLASSES[:3])
PAT_4_2_A_CLASSES = frozenset(HAND_CLASSES[:2])


def is_straight(ranks: Sequence[int]) -> bool:
    low, middle, high = sorted(ranks)
    return middle == low + 1 and high == low + 2


def order_key(description: tuple[tuple[int, ...], bool]) -> tuple[int, ...]:
    """The comparison key of (ranks, is flush): smaller is a better low hand."""
    ranks, flush = description
    descending = tuple(sorted(ranks, reverse=True))
    counts = Counter(ranks)
    if len(counts) == 1:
        return (TRIPS, descending[0])
    if len(counts) == 2:
        pair = max(counts, key=counts.__getitem__)
        (kicker,) = (rank for rank in counts if rank != pair)
        return (PAIR, pair, kicker)
    straight = is_straight(ranks)
    if straight and flush:
        return (STRAIGHT_FLUSH, descending[0])
    if straight:
        return (STRAIGHT, descending[0])
    return (FLUSH if flush else NO_PAIR, *descending)


def _class_of(ranks: tuple[int, ...], flush: bool) -> str:
    """The hand class, with ``4-2-A`` standing for both of its colour classes."""
    category, *descending = order_key((ranks, flush))
    if category != NO_PAIR:
        return _CATEGORY_NAMES[category]
    if descending == [4, 2, 1]:
        return _FOUR_TWO_ACE
    if descending == [4, 3, 1]:
        return FOUR_THREE_ACE
    return _HIGH_NAMES[descending[0]]


def _hands() -> Iterator[tuple[int, tuple[tuple[int, ...], bool]]]:
    """(lookup key, (ranks, is flush)) for every three-card hand a deck can deal."""
    for ranks in combinations_with_replacement(range(1, 14), 3):
        yield prime_product(ranks) * 2, (ranks, False)
        if len(set(ranks)) == 3:
            yield prime_product(ranks) * 2 + 1, (ranks, True)


_STRENGTH = dense_strengths(_hands(), order_key)
_CLASS = {key: _class_of(*description) for key, description in _hands()}
#: Both at once, for the showdown: one product and one lookup per hand.
_STRENGTH_AND_CLASS = {key: (strength, _CLASS[key]) for key, strength in _STRENGTH.items()}
DISTINCT_HANDS = len(set(_STRENGTH.values()))


def strength(cards: Sequence[Card]) -> int:
    """1 (4-2-A, not a flush) upward; lower is better. Exactly three cards."""
    a, b, c = cards
    return _STRENGTH[a.prime * b.prime * c.prime * 2 + (a.suit == b.suit == c.suit)]


def hand_class(cards: Sequence[Card]) -> str:
    a, b, c = cards
    name = _CLASS[a.prime * b.prime * c.prime * 2 + (a.suit == b.suit == c.suit)]
    if name == _FOUR_TWO_ACE:
        return ONE_COLOR if a.is_red == b.is_red == c.is_red else TWO_COLOR
    return name


def strength_and_class(cards: Sequence[Card]) -> tuple[int, str]:
    """``(strength(cards), hand_class(cards))`` in one lookup."""
    a, b, c = cards
    strength, name = _STRENGTH_AND_CLASS[a.prime * b.prime * c.prime * 2
                                         + (a.suit == b.suit == c.suit)]
    if name == _FOUR_TWO_ACE:
        return strength, (ONE_COLOR if a.is_red == b.is_red == c.is_red else TWO_COLOR)
    return strength, name

"""Five-card ace-to-five low, the Cali LowBall ranking.

Ace is low; straights and flushes do not count. Better (lower) to worse: no pair < one pair <
two pair < three of a kind < full house < four of a kind.

- No pair: highest card first, then the next (7-6-4-3-2 beats 8-6-5-3-A).
- One pair: the lower pair wins, then the kickers from the highest down.
- Two pair: the higher pair, then the lower pair, then the kicker.
- Trips, full house, quads: the rank of the set, then what is left from the highest down
  (two hands can share a set's rank through the community cards).

>>> from controller.core.cards import parse_cards
>>> hand_class(parse_cards("5s 4d 3c 2h As"))
'5-high'
>>> strength(parse_cards("7s 6d 4c 3h 2s")) < strength(parse_cards("8s 6d 5c 3h As"))
True
>>> hand_class(parse_cards("Js Jd 4c 3h 2s"))
'pair'
>>> strength_and_class(parse_cards("5s 4d 3c 2h As"))
(1, '5-high')
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import combinations_with_replacement

from controller.core.cards import Card
from controller.core.rankings._tables import dense_strengths, prime_product
from controller.core.vocabulary import HIGH_CARD_CLASSES, HandClass, text_of

NO_PAIR, PAIR, TWO_PAIR, TRIPS, FULL_HOUSE, QUADS = range(6)
#: The class of each category but no pair (named by its top card), as plain text.
_CATEGORY_NAMES = ("", *(text_of(member) for member in (
    HandClass.PAIR, HandClass.TWO_PAIR, HandClass.THREE_OF_A_KIND, HandClass.FULL_HOUSE,
    HandClass.FOUR_OF_A_KIND)))
#: The no-pair classes by top card, as plain text.
_HIGH_NAMES = {top: text_of(member) for top, member in HIGH_CARD_CLASSES.items()}

#: Every hand class, best first, as plain text (:class:`HandClass`'s values).
HAND_CLASSES: tuple[str, ...] = (*_HIGH_NAMES.values(), *_CATEGORY_NAMES[1:])


def order_key(ranks: tuple[int, ...]) -> tuple[int, ...]:
    """The comparison key of a rank multiset: smaller is a better low hand."""
    counts = Counter(ranks)
    # Group by multiplicity (bigger groups first), then by rank from the highest down.
    groups = sorted(counts.items(), key=lambda item: (-item[1], -item[0]))
    shape = tuple(count for _, count in groups)
    category = {(1, 1, 1, 1, 1): NO_PAIR, (2, 1, 1, 1): PAIR, (2, 2, 1): TWO_PAIR,
                (3, 1, 1): TRIPS, (3, 2): FULL_HOUSE, (4, 1): QUADS}[shape]
    if category == PAIR:
        pair = groups[0][0]
        kickers = sorted((rank for rank in ranks if rank != pair), reverse=True)
        return (category, pair, *kickers)
    return (category, *(rank for rank, _ in groups))


def _class_of(ranks: tuple[int, ...]) -> str:
    category = order_key(ranks)[0]
    if category == NO_PAIR:
        return _HIGH_NAMES[max(ranks)]
    return _CATEGORY_NAMES[category]


#: Every multiset of five ranks a deck can deal (no rank five times).
_MULTISETS = [ranks for ranks in combinations_with_replacement(range(1, 14), 5)
              if max(Counter(ranks).values()) <= 4]
_STRENGTH = dense_strengths(((prime_product(r), r) for r in _MULTISETS), order_key)
_CLASS = {prime_product(r): _class_of(r) for r in _MULTISETS}
#: Both at once, for the showdown: one product and one lookup per hand.
_STRENGTH_AND_CLASS = {key: (strength, _CLASS[key]) for key, strength in _STRENGTH.items()}
#: Number of distinct strengths (rank multisets): 6,175.
DISTINCT_HANDS = len(set(_STRENGTH.values()))


def strength(cards: Sequence[Card]) -> int:
    """1 (5-4-3-2-A) to 6,175 (K-K-K-K-Q); lower is better. Exactly five cards."""
    a, b, c, d, e = cards
    return _STRENGTH[a.prime * b.prime * c.prime * d.prime * e.prime]


def hand_class(cards: Sequence[Card]) -> str:
    """``5-high`` ... ``K-high``, ``pair``, ``two pair``, ``three of a kind``, ..."""
    a, b, c, d, e = cards
    return _CLASS[a.prime * b.prime * c.prime * d.prime * e.prime]


def strength_and_class(cards: Sequence[Card]) -> tuple[int, str]:
    """``(strength(cards), hand_class(cards))`` in one lookup."""
    a, b, c, d, e = cards
    return _STRENGTH_AND_CLASS[a.prime * b.prime * c.prime * d.prime * e.prime]


def _qualifies(ranks: tuple[int, ...]) -> bool:
    key = order_key(ranks)
    return key[0] > PAIR or (key[0] == PAIR and key[1] >= 11)


_PAIR_OF_JACKS_OR_HIGHER = frozenset(
    key for key, ranks in ((prime_product(r), r) for r in _MULTISETS) if _qualifies(ranks))


def is_pair_of_jacks_or_higher(cards: Sequence[Card]) -> bool:
    """The Cali LowBall dealer qualifier: a pair of J, Q or K, or any two pair or worse.

    A pair of aces is the lowest pair, so pairs of A through 10 do not qualify.
    """
    a, b, c, d, e = cards
    return a.prime * b.prime * c.prime * d.prime * e.prime in _PAIR_OF_JACKS_OR_HIGHER

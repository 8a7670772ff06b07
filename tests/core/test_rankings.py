"""Both rankings checked against brute force over every hand, and against pokerkit.

The reference keys below are written straight from the ranking rules, independently of the
lookup tables, and every hand of the deck is evaluated.
"""

import random
from collections import Counter
from collections.abc import Sequence
from itertools import combinations
from math import comb
from types import ModuleType

import pytest

from controller.core.cards import Card, DECK, parse_cards
from controller.core.rankings import ace_to_five, three_card


def reference_five(cards: Sequence[Card]) -> tuple[int, ...]:
    """Ace-to-five low: smaller is better."""
    ranks = [card.rank for card in cards]
    counts = Counter(ranks)
    by_count = {n: sorted((r for r, c in counts.items() if c == n), reverse=True) for n in (1, 2, 3, 4)}
    singles, pairs, trips, quads = by_count[1], by_count[2], by_count[3], by_count[4]
    if quads:
        return (5, quads[0], *singles)
    if trips and pairs:
        return (4, trips[0], pairs[0])
    if trips:
        return (3, trips[0], *singles)
    if len(pairs) == 2:
        return (2, pairs[0], pairs[1], *singles)
    if pairs:
        return (1, pairs[0], *singles)
    return (0, *singles)


def reference_three(cards: Sequence[Card]) -> tuple[int, ...]:
    ranks = sorted((card.rank for card in cards), reverse=True)
    flush = len({card.suit for card in cards}) == 1
    straight = len(set(ranks)) == 3 and ranks[0] - ranks[2] == 2
    if len(set(ranks)) == 1:
        return (4, ranks[0])
    if len(set(ranks)) == 2:
        pair = ranks[1]  # the middle card always belongs to the pair
        kicker = ranks[0] if ranks[0] != pair else ranks[2]
        return (1, pair, kicker)
    if straight and flush:
        return (5, ranks[0])
    if straight:
        return (3, ranks[0])
    return (2 if flush else 0, *ranks)


@pytest.mark.slow
def test_five_card_every_hand_matches_brute_force() -> None:
    histogram: Counter[int] = Counter()
    strength = ace_to_five.strength
    for hand in combinations(DECK, 5):
        histogram[strength(hand)] += 1
    assert sum(histogram.values()) == 2_598_960
    assert len(histogram) == ace_to_five.DISTINCT_HANDS == 6175
    # One representative per rank multiset: its reference key, and how many hands share it.
    by_ranks: dict[tuple[int, ...], tuple[Card, Card, Card, Card, Card]] = {}
    for hand in combinations(DECK, 5):
        by_ranks.setdefault(tuple(sorted(card.rank for card in hand)), hand)
    ordered = sorted(by_ranks.values(), key=reference_five)
    strengths = [strength(hand) for hand in ordered]
    assert strengths == sorted(strengths) and len(set(strengths)) == len(strengths)
    for hand in ordered:
        expected = 1
        for count in Counter(card.rank for card in hand).values():
            expected *= comb(4, count)
        assert histogram[strength(hand)] == expected


@pytest.mark.slow
def test_five_card_class_counts() -> None:
    counts = Counter(ace_to_five.hand_class(hand) for hand in combinations(DECK, 5))
    assert counts["5-high"] == 4 ** 5
    assert counts["J-high"] == comb(10, 4) * 4 ** 5
    assert sum(counts[f"{top}-high"] for top in (5, 6, 7, 8, 9, 10, "J", "Q", "K")) == 1_317_888
    assert counts["pair"] == 1_098_240
    assert counts["two pair"] == 123_552
    assert counts["three of a kind"] == 54_912
    assert counts["full house"] == 3_744
    assert counts["four of a kind"] == 624


def test_three_card_every_hand_matches_brute_force() -> None:
    hands = list(combinations(DECK, 3))
    assert len(hands) == 22_100
    ordered = sorted(hands, key=reference_three)
    for better, worse in zip(ordered, ordered[1:]):
        same = reference_three(better) == reference_three(worse)
        assert (three_card.strength(better) == three_card.strength(worse)) == same
        assert three_card.strength(better) <= three_card.strength(worse)


def test_three_card_class_counts() -> None:
    counts = Counter(three_card.hand_class(hand) for hand in combinations(DECK, 3))
    assert counts["straight flush"] == 11 * 4
    assert counts["three of a kind"] == 13 * 4
    assert counts["straight"] == 11 * (64 - 4)
    assert counts["flush"] == 4 * (comb(13, 3) - 11)
    assert counts["pair"] == 13 * 6 * 48
    # 4-2-A: 64 suit patterns - 4 flushes; one color: both cards' colors equal (2 colors x
    # 2 suits each, cubed = 16 patterns, less the 4 flushes).
    assert counts["4-2-A one color"] == 12
    assert counts["4-2-A two color"] == 48
    assert counts["4-3-A"] == 60
    assert sum(counts.values()) == 22_100


@pytest.mark.parametrize("better, worse", [
    ("7s 6d 4c 3h 2s", "8s 6d 5c 3h As"),   # the rule's example
    ("5s 4d 3c 2h As", "6s 4d 3c 2h As"),   # the wheel is the best hand
    ("Ks Qd Jc Th 9s", "As Ad 2c 3h 4s"),   # any no pair beats any pair
    ("As Ad Kc Qh Js", "2s 2d 3c 4h 5s"),   # aces are the lowest pair
    ("5s 5d 4c 3h 2s", "5s 5d 6c 3h 2s"),   # same pair: kickers from the top
    ("Ks Kd Qc Qh As", "2s 2d 2c 3h 4s"),   # two pair beats trips
    ("3s 3d 2c 2h Ks", "4s 4d 2c 2h As"),   # two pair: the higher pair decides first
    ("4s 4d 2c 2h Ks", "4s 4d 3c 3h As"),   # ... then the lower pair
    ("Ks Kd Kc Qh Js", "2s 2d 2c 3h 3s"),   # trips beat a full house
])
def test_five_card_ordering_examples(better: str, worse: str) -> None:
    assert ace_to_five.strength(parse_cards(better)) < ace_to_five.strength(parse_cards(worse))


def test_straights_and_flushes_do_not_count_in_five_card() -> None:
    assert ace_to_five.hand_class(parse_cards("5s 4s 3s 2s As")) == "5-high"


@pytest.mark.parametrize("cards, qualifies", [
    ("Js Jd 4c 3h 2s", True), ("Ks Kd 4c 3h 2s", True), ("Ts Td 4c 3h 2s", False),
    ("As Ad 4c 3h 2s", False), ("2s 2d 3c 3h 4s", True), ("2s 2d 2c 3h 4s", True),
    ("Ks Qd Jc 9h 8s", False),
])
def test_dealer_pair_of_jacks_or_higher(cards: str, qualifies: bool) -> None:
    assert ace_to_five.is_pair_of_jacks_or_higher(parse_cards(cards)) is qualifies


@pytest.mark.parametrize("better, worse", [
    ("4h 2d Ac", "4h 3d Ac"), ("4h 3d Ac", "5h 2d Ac"), ("Ks Qd 9c", "As Ad 2c"), ("As Ad 2c", "Ks Qd Jc"),
    ("As Ad 3c", "2s 2d Ac"), ("2s 2d 3c", "2s 2d 4c"), ("As Ad Kc", "2s 4s 6s"),
    ("Ks Qs 9s", "3h 2d Ac"), ("Ks Qh Jd", "As Ad Ac"), ("As Ad Ac", "3s 2s As"),
    ("4s 2s As", "3h 2d Ac"), ("Qs Kd Ah", "Qs Kd Jh"),
])
def test_three_card_ordering_examples(better: str, worse: str) -> None:
    assert three_card.strength(parse_cards(better)) < three_card.strength(parse_cards(worse))


@pytest.mark.parametrize("cards, name", [
    ("4h 2d Ah", "4-2-A one color"), ("4s 2c As", "4-2-A one color"),
    ("4h 2c Ah", "4-2-A two color"), ("4h 2h Ah", "flush"), ("4h 3c Ad", "4-3-A"),
    ("3h 2c Ad", "straight"), ("Qh Kc Ad", "K-high"), ("5h 3c Ad", "5-high"),
    ("Th 3c 2d", "10-high"), ("7h 7c Ad", "pair"), ("Jh Qh Kh", "straight flush"),
    ("9s 9h 9d", "three of a kind"),
])
def test_three_card_classes(cards: str, name: str) -> None:
    assert three_card.hand_class(parse_cards(cards)) == name


def test_five_card_agrees_with_pokerkit_on_a_random_sample() -> None:
    pokerkit = pytest.importorskip("pokerkit")
    rng = random.Random(20261121)
    disagreements = []
    for _ in range(20_000):
        cards = rng.sample(DECK, 10)
        mine, theirs = cards[:5], cards[5:]
        ours = (ace_to_five.strength(mine) > ace_to_five.strength(theirs)) - \
               (ace_to_five.strength(mine) < ace_to_five.strength(theirs))
        a = pokerkit.RegularLowHand("".join(str(card) for card in mine))
        b = pokerkit.RegularLowHand("".join(str(card) for card in theirs))
        # pokerkit orders by strength: the better low hand is the "greater" hand.
        reference = (b > a) - (b < a)
        if ours != reference:
            disagreements.append((mine, theirs))
    assert disagreements == []


@pytest.mark.parametrize("ranking, size", [(ace_to_five, 5), (three_card, 3)])
def test_strength_and_class_is_both_lookups_at_once(ranking: ModuleType, size: int) -> None:
    """The showdown's one lookup gives what strength() and hand_class() give separately."""
    rng = random.Random(11)
    for _ in range(20_000):
        cards = rng.sample(DECK, size)
        assert ranking.strength_and_class(cards) == (ranking.strength(cards),
                                                     ranking.hand_class(cards))

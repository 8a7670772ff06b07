"""Three Card Lowball's exact game math: each starting hand's draws counted against the dealer's
house way, the optimal draw, and the par sheet of any paytable and progressive.

One player against the dealer, one deck: the player's three cards and replacements and the
dealer's three cards and house-way replacements all come out of it (full card removal). Nobody
acts on a card they cannot see, so the deal is enumerated in the order that is cheapest to
count (the player's replacements, then the dealer's cards and draw), which has the same
distribution as the table's order. Hands are ranked by ``controller.core.rankings.three_card`` and
the dealer draws by ``controller.core.games.house_way`` itself, with its card choices.

For one starting hand the dealer's every deal and draw from the cards the player does not
hold is counted once, by its final strength, in total and per card and pair of cards it
uses; the draws of the player then need no further enumeration of the dealer (the dealer
deals that avoid the player's replacements are all of them, less those using one of the
replacements, plus those using both: inclusion and exclusion). What a draw gives is the
number of ways the player finishes with each hand class and wins, ties or loses
(:class:`DrawCounts`), which is the same for every paytable: one enumeration serves all.

Settlement, as the engine's: player lower -> Ante 1:1 and Bonus at its odds (push when the
class is not listed); tie -> both push; dealer lower -> both lose. Progressive, one award, the
highest: jackpot (player and dealer both dealt a pat 4-2-A), pat 4-2-A one/two colour and
lower, final hand 4-high and lower, final hand 5-high and lower.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from itertools import combinations
from math import comb, lcm
from typing import NamedTuple

from controller.core.cards import DECK, SUIT_CHARS, Card
from controller.core.games.house_way import house_way
from controller.core.rankings import three_card
from controller.core.vocabulary import HandClass, ProgressiveAward, text_of

#: Best first: where the strategy breaks an exact tie between two draws.
WIN, TIE, LOSE = 0, 1, 2


class DrawCounts(NamedTuple):
    """What one draw of one starting hand gives: per final hand class the ways the player
    wins, ties and loses, all over ``ways`` (the ways of the player's replacements and the
    dealer's deal and draw)."""

    discard: tuple[Card, ...]
    classes: dict[str, tuple[int, int, int]]
    ways: int

    def value(self, bonus: Mapping[str, Fraction]) -> Fraction:
        """Expected net of Ante and Bonus, in antes."""
        scale = bonus_scale(bonus)
        total = 0
        for name, (win, _, lose) in self.classes.items():
            odds = bonus.get(name, Fraction(0))
            total += win * (scale + odds.numerator * (scale // odds.denominator)) \
                - lose * 2 * scale
        return Fraction(total, self.ways * scale)


def bonus_scale(bonus: Mapping[str, Fraction]) -> int:
    """The lowest multiple of the ante in which every Bonus payout is whole."""
    return lcm(1, *(odds.denominator for odds in bonus.values()))


def main_net(bonus: Mapping[str, Fraction], hand_class: str,
             result: int) -> tuple[Fraction, Fraction]:
    """The Ante's and the Bonus's net, in antes, of a final ``hand_class`` that wins, ties or
    loses (:data:`WIN`, :data:`TIE`, :data:`LOSE`)."""
    if result == WIN:
        return Fraction(1), bonus.get(hand_class, Fraction(0))
    if result == TIE:
        return Fraction(0), Fraction(0)
    return Fraction(-1), Fraction(-1)


def hand_key(cards: Sequence[Card]) -> str:
    """A starting hand or discard as the strategy keys it: in rank order A to K, then suit
    order c d h s, joined by spaces (``"Ah 2c 4d"``); ``""`` for no card."""
    return " ".join(str(card) for card in sorted(
        cards, key=lambda card: (card.rank, SUIT_CHARS.index(card.suit))))


def draws(hand: Sequence[Card], deck: Sequence[Card] = DECK) -> tuple[DrawCounts, ...]:
    """Every draw of a starting ``hand`` (stand, discard one, discard two) with its counts,
    dealt from ``deck`` (the full deck; a smaller one for checking the counting)."""
    unseen = [card for card in deck if card not in hand]
    paths = _DealerPaths(unseen)
    results = []
    for kept_count in (3, 2, 1):
        for kept in combinations(hand, kept_count):
            discard = tuple(card for card in hand if card not in kept)
            results.append(_draw(kept, discard, unseen, paths))
    return tuple(results)


class _DealerPaths:
    """Every dealer deal and house-way draw from ``cards``, counted by final strength and by
    the number of cards drawn, in total, per card used and per pair of cards used (as
    cumulative counts, so that "stronger than" and "as strong as" are two look-ups)."""

    def __init__(self, cards: list[Card]) -> None:
        n = len(cards)
        size = three_card.DISTINCT_HANDS + 2
        row = 3 * size
        strength = three_card.strength
        # final_strength[(a * n + b) * n + c]: the strength of cards a, b, c (by position).
        final_strength = [0] * (n * n * n)
        for a, b, c in combinations(range(n), 3):
            value = strength((cards[a], cards[b], cards[c]))
            for x, y, z in ((a, b, c), (a, c, b), (b, a, c), (b, c, a), (c, a, b), (c, b, a)):
                final_strength[(x * n + y) * n + z] = value
        total = [0] * row
        single = [0] * (n * row)
        pairs = [0] * (n * n * row)
        position = {card: index for index, card in enumerate(cards)}
        for dealt in combinations(range(n), 3):
            i, j, k = dealt
            discard = house_way((cards[i], cards[j], cards[k])).discard
            kept = [index for index in dealt if cards[index] not in discard]
            drawn_count = len(discard)
            offset = drawn_count * size
            if drawn_count == 0:
                at = offset + final_strength[(i * n + j) * n + k]
                total[at] += 1
                for index in dealt:
                    single[index * row + at] += 1
                pairs[(i * n + j) * row + at] += 1
                pairs[(i * n + k) * row + at] += 1
                pairs[(j * n + k) * row + at] += 1
                continue
            rest = [index for index in range(n) if index != i and index != j and index != k]
            if drawn_count == 1:
                base = (kept[0] * n + kept[1]) * n
                for r in rest:
                    at = offset + final_strength[base + r]
                    total[at] += 1
                    for index in (i, j, k, r):
                        single[index * row + at] += 1
                    for low, high in ((i, j), (i, k), (j, k)):
                        pairs[(low * n + high) * row + at] += 1
                    for index in (i, j, k):
                        low, high = (index, r) if index < r else (r, index)
                        pairs[(low * n + high) * row + at] += 1
                continue
            base = kept[0] * n * n
            for first_at, r in enumerate(rest):
                for s in rest[first_at + 1:]:
                    at = offset + final_strength[base + r * n + s]
                    total[at] += 1
                    for index in (i, j, k, r, s):
                        single[index * row + at] += 1
                    used = sorted((i, j, k, r, s))
                    for first, low in enumerate(used):
                        for high in used[first + 1:]:
                            pairs[(low * n + high) * row + at] += 1
        self.position = position
        self.size = size
        self.n = n
        self.total = _cumulative(total, size)
        self.single = _cumulative(single, size)
        self.pairs = _cumulative(pairs, size)
        self.cards = n

    def against(self, strength: int, avoiding: Sequence[Card]) -> list[tuple[int, int, int]]:
        """Per number of cards the dealer draws: the dealer paths that avoid ``avoiding``
        (at most two cards) and end weaker (the player wins), as strong, or stronger."""
        at = sorted(self.position[card] for card in avoiding)
        width = self.size + 1
        tables = [(1, self.total, 0)] + [(-1, self.single, index * 3 * width) for index in at]
        if len(at) == 2:
            tables.append((1, self.pairs, (at[0] * self.n + at[1]) * 3 * width))
        result = []
        for drawn_count in range(3):
            stronger = same = everything = 0
            for sign, table, start in tables:
                base = start + drawn_count * width
                below = table[base + strength]
                stronger += sign * below
                same += sign * (table[base + strength + 1] - below)
                everything += sign * table[base + width - 1]
            result.append((everything - stronger - same, same, stronger))
        return result


def _cumulative(counts: list[int], size: int) -> list[int]:
    """Each row of ``size`` counts as ``size + 1`` running totals: entry ``s`` of a row
    counts the strengths below ``s``; its last entry is the row's total."""
    result = []
    for start in range(0, len(counts), size):
        running = 0
        result.append(0)
        for count in counts[start:start + size]:
            running += count
            result.append(running)
    return result


def _draw(kept: tuple[Card, ...], discard: tuple[Card, ...], unseen: list[Card],
          paths: _DealerPaths) -> DrawCounts:
    replaced = len(discard)
    left = paths.cards - replaced          # cards the dealer is dealt from
    dealer_draw = [comb(left - 3, drawn) for drawn in range(3)]
    common = lcm(*(ways for ways in dealer_draw if ways))
    scale = [common // ways if ways else 0 for ways in dealer_draw]
    classes: dict[str, list[int]] = {}
    for drawn in combinations(unseen, replaced):
        final = (*kept, *drawn)
        strength, name = three_card.strength_and_class(final)
        counts = classes.setdefault(name, [0, 0, 0])
        for drawn_count, outcome in enumerate(paths.against(strength, drawn)):
            for result in (WIN, TIE, LOSE):
                counts[result] += outcome[result] * scale[drawn_count]
    ways = comb(len(unseen), replaced) * comb(left, 3) * common
    return DrawCounts(discard, {name: (win, tie, lose) for name, (win, tie, lose)
                                in classes.items()}, ways)


def settle(hand: Sequence[Card], discard: Sequence[Card], drawn: Sequence[Card],
           dealer: Sequence[Card], dealer_drawn: Sequence[Card],
           bonus: Mapping[str, Fraction]) -> dict[str, Fraction]:
    """The Ante's and the Bonus's net, in antes, of one deal: the player's ``hand``, its
    ``discard`` and the ``drawn`` replacements, the dealer's three cards and the cards the
    dealer draws for the house way's discard."""
    final = (*(card for card in hand if card not in discard), *drawn)
    dealer_discard = house_way(dealer).discard
    assert len(dealer_discard) == len(dealer_drawn)
    dealer_final = (*(card for card in dealer if card not in dealer_discard), *dealer_drawn)
    strength, name = three_card.strength_and_class(final)
    dealer_strength = three_card.strength(dealer_final)
    result = WIN if strength < dealer_strength else TIE if strength == dealer_strength else LOSE
    ante, bonus_net = main_net(bonus, name, result)
    return {"ante": ante, "bonus": bonus_net}


def starting_hands(deck: Sequence[Card] = DECK) -> list[tuple[Card, ...]]:
    return list(combinations(deck, 3))


def enumerate_hands(deck: Sequence[Card] = DECK,
                    progress: Callable[[int, int], object] | None = None,
                    ) -> dict[tuple[Card, ...], tuple[DrawCounts, ...]]:
    """:func:`draws` of every starting hand of ``deck``; ``progress(done, total)`` is called
    after each hand when given."""
    hands = starting_hands(deck)
    result = {}
    for done, hand in enumerate(hands, 1):
        result[hand] = draws(hand, deck)
        if progress is not None:
            progress(done, len(hands))
    return result


class Progressive(NamedTuple):
    """The progressive side bet's settings, in cents (``awards`` by award name)."""

    wager: int
    awards: Mapping[str, int]
    contribution_rate: Fraction
    seed: int


PAT_AWARDS: dict[str, str] = {
    three_card.ONE_COLOR: text_of(ProgressiveAward.PAT_ONE_COLOR),
    three_card.TWO_COLOR: text_of(ProgressiveAward.PAT_TWO_COLOR)}
_JACKPOT = text_of(ProgressiveAward.JACKPOT)


class ThreeCardParSheet(NamedTuple):
    """Exact figures per unit of the ante (the Bonus equals it); frequencies are shares of all
    deals. The progressive's figures are per unit of its wager."""

    strategy: dict[tuple[Card, ...], DrawCounts]
    values: dict[tuple[Card, ...], dict[tuple[Card, ...], Fraction]]
    returns: dict[str, Fraction]          # ante, bonus, total
    house_edge: Fraction                  # -total / (ante + bonus); no raise: also the EoR
    variance: Fraction
    results: dict[str, Fraction]          # win, tie, lose; stand, discard 1, discard 2
    lines: dict[str, tuple[Fraction, Fraction]]   # bonus class -> (frequency, return)
    progressive_awards: dict[str, Fraction]       # award -> frequency (jackpot included)
    progressive_fixed_return: Fraction            # fixed awards per unit wagered
    progressive_jackpot: Fraction                 # jackpot frequency
    progressive: Progressive
    hands: int

    def progressive_return(self, meter: Fraction | int) -> Fraction:
        """The progressive's expected net per unit wagered with the meter at ``meter`` cents
        (one winner takes the whole meter)."""
        return (self.progressive_fixed_return - 1
                + self.progressive_jackpot * Fraction(meter) / self.progressive.wager)

    @property
    def break_even_meter(self) -> Fraction:
        """The meter (cents) at which the progressive returns what it takes."""
        return (1 - self.progressive_fixed_return) * self.progressive.wager \
            / self.progressive_jackpot

    @property
    def progressive_long_run_return(self) -> Fraction:
        """Over many jackpots: the fixed awards, the contributions every jackpot pays back and
        the seed the house adds after each, per unit wagered, less the wager."""
        return (self.progressive_fixed_return + self.progressive.contribution_rate
                + self.progressive_jackpot * Fraction(self.progressive.seed,
                                                      self.progressive.wager) - 1)


def par_sheet(counted: Mapping[tuple[Card, ...], tuple[DrawCounts, ...]],
              bonus: Mapping[str, Fraction], progressive: Progressive,
              deck: Sequence[Card] = DECK) -> ThreeCardParSheet:
    """The par sheet of the Bonus odds ``bonus`` and ``progressive`` from the counts of every
    starting hand of ``deck``. The sums are whole numbers over every hand's deals (each
    draw's ways brought to their common multiple), divided once at the end."""
    hands = len(counted)
    assert hands == comb(len(deck), 3)
    common = lcm(*{draw.ways for counts in counted.values() for draw in counts})
    strategy = {}
    values = {}
    decisions = [0, 0, 0]
    # Per final hand class: the ways it wins, ties and loses; and its wins by a hand not
    # dealt a pat 4-2-A (the 4-high and 5-high awards).
    outcomes: dict[str, list[int]] = {}
    plain_wins: dict[str, int] = {}
    pat_wins = dict.fromkeys(PAT_AWARDS.values(), 0)
    jackpot = Fraction(0)
    for hand, counts in counted.items():
        hand_values = {draw.discard: draw.value(bonus) for draw in counts}
        best = max(counts, key=lambda draw: (hand_values[draw.discard], -len(draw.discard)))
        strategy[hand] = best
        values[hand] = hand_values
        decisions[len(best.discard)] += 1
        factor = common // best.ways
        dealt = three_card.hand_class(hand)
        pat = dealt in PAT_AWARDS
        won = 0
        for name, (win, tie, lose) in best.classes.items():
            sums = outcomes.setdefault(name, [0, 0, 0])
            sums[WIN] += win * factor
            sums[TIE] += tie * factor
            sums[LOSE] += lose * factor
            if pat:
                won += win * factor
            else:
                plain_wins[name] = plain_wins.get(name, 0) + win * factor
        if pat:
            pat_wins[PAT_AWARDS[dealt]] += won
            jackpot += _dealer_pat_share(hand, deck)
    deals = hands * common
    returns = {"ante": Fraction(0), "bonus": Fraction(0)}
    second = Fraction(0)
    by_result = [0, 0, 0]
    for name, sums in outcomes.items():
        for result, ways in enumerate(sums):
            by_result[result] += ways
            ante, bonus_net = main_net(bonus, name, result)
            share = Fraction(ways, deals)
            returns["ante"] += ante * share
            returns["bonus"] += bonus_net * share
            second += (ante + bonus_net) ** 2 * share
    returns["total"] = returns["ante"] + returns["bonus"]
    results = {name: Fraction(ways, deals)
               for name, ways in zip(("win", "tie", "lose"), by_result)}
    results.update({name: Fraction(count, hands)
                    for name, count in zip(("stand", "discard 1", "discard 2"), decisions)})
    lines = {}
    for name, odds in bonus.items():
        hits = Fraction(outcomes.get(name, [0, 0, 0])[WIN], deals)
        lines[name] = (hits, hits * odds)
    award_frequency = {_JACKPOT: jackpot / hands}
    award_frequency.update({name: Fraction(ways, deals) for name, ways in pat_wins.items()})
    award_frequency[text_of(ProgressiveAward.FOUR_HIGH)] = Fraction(
        sum(plain_wins.get(name, 0) for name in three_card.FOUR_HIGH_CLASSES), deals)
    award_frequency[text_of(ProgressiveAward.FIVE_HIGH)] = Fraction(
        plain_wins.get(text_of(HandClass.FIVE_HIGH), 0), deals)
    fixed = sum((frequency * Fraction(progressive.awards[name], progressive.wager)
                 for name, frequency in award_frequency.items() if name != _JACKPOT),
                Fraction(0))
    return ThreeCardParSheet(
        strategy=strategy, values=values, returns=returns, house_edge=-returns["total"] / 2,
        variance=second - returns["total"] ** 2, results=results, lines=lines,
        progressive_awards=award_frequency, progressive_fixed_return=fixed,
        progressive_jackpot=award_frequency[_JACKPOT], progressive=progressive, hands=hands)


def _dealer_pat_share(hand: Sequence[Card], deck: Sequence[Card]) -> Fraction:
    """The chance the dealer is dealt a pat 4-2-A (any colour) against the player's hand."""
    unseen = [card for card in deck if card not in hand and card.rank in (1, 2, 4)]
    pat = sum(1 for dealt in combinations(unseen, 3)
              if three_card.hand_class(dealt) in PAT_AWARDS)
    return Fraction(pat, comb(len(deck) - 3, 3))

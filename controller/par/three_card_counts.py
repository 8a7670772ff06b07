"""Three Card Lowball's counts for every starting hand at once: the whole deck's dealer deals
and house-way draws counted once, then every draw of every starting hand answered from them.

What :func:`controller.par.three_card_lowball.draws` counts for one starting hand, this counts
for all of them, exactly and with the same numbers (the suite compares both), with numpy:

- A dealer *path* is a deal of three cards and the house way's draw to it; it *uses* the three
  dealt cards and the drawn ones. A player's draw leaves the player holding a final hand ``F``
  and the removed cards ``X`` (the three dealt to the player and the replacements): the dealer
  paths that can follow are those that use no card of ``X``. By inclusion and exclusion, the
  paths avoiding ``X`` are the alternating sum, over every subset ``Y`` of ``X``, of the paths
  using all of ``Y``.
- The paths using all of ``Y`` are counted once for the deck, per number of cards the dealer
  draws and per final strength (as running totals, so "stronger than ``F``" and "as strong"
  are two look-ups): in full for ``Y`` of up to three cards and for four cards when the dealer
  draws two; as the list of its paths when ``Y`` is what the path uses (four cards and one
  drawn, five cards and two drawn: at most four and ten paths).
- A query (``F``, ``X``) serves every starting hand it belongs to: the player who ends with
  ``F`` having drawn two kept one of its three cards, so one query answers three draws.

No card is treated as another (no suit symmetry): the house way's choices between cards of a
rank (which three-of-a-kind card and which pair card stays) look at the suits, so the counts
are taken for every card as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations
from math import comb, lcm

import numpy as np

from controller.core.cards import DECK, Card
from controller.core.games.house_way import house_way
from controller.par.three_card_lowball import DrawCounts
from controller.core.rankings import three_card

#: The draws of a starting hand (its three cards by their place in the deck), in the order
#: of ``three_card_lowball.draws``: the positions of the discarded cards.
DISCARDS = ((), (2,), (1,), (0,), (1, 2), (0, 2), (0, 1))
CLASSES = three_card.HAND_CLASSES
#: How many query rows one step of the two-card draws takes (memory, not results).
CHUNK_ROWS = 400_000


def count_hands(deck: Sequence[Card] = DECK,
                progress: Callable[[int, int], None] | None = None,
                ) -> dict[tuple[Card, ...], tuple[DrawCounts, ...]]:
    """Every starting hand of ``deck`` with the counts of its seven draws, equal to
    ``three_card_lowball.draws(hand, deck)``; ``progress(done, total)`` is called as the
    two-card draws are counted."""
    counts = _Counting(tuple(deck))
    counts.stand()
    counts.discard_one()
    counts.discard_two(progress)
    return counts.draw_counts()


def _binomials(n: int) -> np.ndarray:
    return np.array([[comb(m, k) for m in range(n + 1)] for k in range(6)], dtype=np.int64)


class _Counting:
    def __init__(self, deck: tuple[Card, ...]) -> None:
        self.deck = deck
        n = self.n = len(deck)
        self.binomial = _binomials(n)
        triples = np.array(list(combinations(range(n), 3)), dtype=np.int64).reshape(-1, 3)
        self.triples = triples
        self.triple_index = self.index(triples)
        size = len(triples)
        strength = np.zeros(size, dtype=np.int64)
        hand_class = np.zeros(size, dtype=np.int64)
        drawn = np.zeros(size, dtype=np.int64)
        kept = np.zeros((size, 2), dtype=np.int64)
        class_at = {name: at for at, name in enumerate(CLASSES)}
        for row, positions in enumerate(triples.tolist()):
            cards = tuple(deck[position] for position in positions)
            at = self.triple_index[row]
            value, name = three_card.strength_and_class(cards)
            strength[at], hand_class[at] = value, class_at[name]
            discard = house_way(cards).discard
            drawn[row] = len(discard)
            if discard:
                stays = [p for p, card in zip(positions, cards) if card not in discard]
                kept[row, :len(stays)] = stays
        self.strength, self.hand_class = strength, hand_class
        self.bins = int(strength.max()) + 2
        self._count_dealer(triples, drawn, kept)
        # Per number of replacements r: the dealer is dealt from n - 3 - r cards and draws d
        # from what is left; each path weighs common / C(stub, d), as in three_card_lowball.
        self.weights = []
        self.ways = []
        for replaced in range(3):
            left = n - 3 - replaced
            dealer_draw = [comb(left - 3, d) for d in range(3)]
            common = lcm(*(ways for ways in dealer_draw if ways))
            self.weights.append(np.array([common // ways if ways else 0
                                          for ways in dealer_draw], dtype=np.int64))
            self.ways.append(comb(n - 3, replaced) * comb(left, 3) * common)
        self.totals = np.zeros((size, len(DISCARDS), len(CLASSES), 3), dtype=np.int64)

    def index(self, sorted_positions: np.ndarray) -> np.ndarray:
        """The index of each row of ascending positions among the sets of its size."""
        index: np.ndarray = sum(self.binomial[column + 1][sorted_positions[:, column]]
                                for column in range(sorted_positions.shape[1]))
        return index

    def set_index(self, *columns: np.ndarray) -> np.ndarray:
        return self.index(np.sort(np.stack(columns, axis=1), axis=1))

    # -- the dealer's paths ----------------------------------------------------------------

    def _count_dealer(self, triples: np.ndarray, drawn: np.ndarray, kept: np.ndarray) -> None:
        n, bins = self.n, self.bins
        b = self.binomial
        # using[size][d]: paths drawing d cards that use all of a set of `size` cards, per
        # final strength; exact[4] (d = 1) and exact[5] (d = 2): the strengths of the paths
        # using exactly that set (0: no path).
        # (A path drawing two uses a set of four cards with at most 48 * 10 others.)
        self.using = {size: np.zeros((3, int(b[size][n]), bins),
                                     dtype=np.int32 if size == 3 else np.int64)
                      for size in range(4)}
        self.using[4] = np.zeros((1, int(b[4][n]), bins), dtype=np.uint16)
        exact = {4: (1, 4), 5: (2, 10)}
        keys: dict[int, list[np.ndarray]] = {4: [], 5: []}
        values: dict[int, list[np.ndarray]] = {4: [], 5: []}

        def add(used: np.ndarray, strength: np.ndarray, d: int) -> None:
            for size in range(min(used.shape[1], 4) + 1):
                table = self.using[size]
                layer = 0 if size == 4 else d
                if size == 4 and d != 2:
                    continue
                flat = table[layer].reshape(-1)
                for subset in combinations(range(used.shape[1]), size):
                    at = self.index(used[:, subset]) if size else np.zeros(len(used), np.int64)
                    np.add.at(flat, at * bins + strength, 1)
            for size, (paths_d, _) in exact.items():
                if used.shape[1] == size and d == paths_d:
                    keys[size].append(self.index(used))
                    values[size].append(strength)

        rows = np.flatnonzero(drawn == 0)
        add(triples[rows], self.strength[self.triple_index[rows]], 0)
        rows = np.flatnonzero(drawn == 1)
        deal = np.repeat(triples[rows], n, axis=0)
        stays = np.repeat(kept[rows], n, axis=0)
        card = np.tile(np.arange(n), len(rows))
        fresh = (deal != card[:, None]).all(axis=1)
        deal, stays, card = deal[fresh], stays[fresh], card[fresh]
        add(np.sort(np.column_stack((deal, card)), axis=1),
            self.strength[self.set_index(stays[:, 0], stays[:, 1], card)], 1)
        pairs = np.array(list(combinations(range(n), 2)), dtype=np.int64).reshape(-1, 2)
        rows = np.flatnonzero(drawn == 2)
        step = max(1, CHUNK_ROWS // max(1, len(pairs)))
        for start in range(0, len(rows), step):
            part = rows[start:start + step]
            deal = np.repeat(triples[part], len(pairs), axis=0)
            stays = np.repeat(kept[part, 0], len(pairs))
            draw = np.tile(pairs, (len(part), 1))
            fresh = ((deal[:, :, None] != draw[:, None, :]).all(axis=(1, 2)))
            deal, stays, draw = deal[fresh], stays[fresh], draw[fresh]
            add(np.sort(np.column_stack((deal, draw)), axis=1),
                self.strength[self.set_index(stays, draw[:, 0], draw[:, 1])], 2)
        self.exact = {}
        for size, (_, most) in exact.items():
            table = np.zeros((int(b[size][n]), most), dtype=np.int64)
            if keys[size]:
                key = np.concatenate(keys[size])
                value = np.concatenate(values[size])
                order = np.argsort(key, kind="stable")
                key, value = key[order], value[order]
                slot = np.arange(len(key)) - np.searchsorted(key, key, side="left")
                table[key, slot] = value
            self.exact[size] = table
        # Running totals: entry s counts the paths ending stronger than strength s.
        for size, paths in self.using.items():
            running = np.zeros(paths.shape[:2] + (bins + 1,), dtype=paths.dtype)
            np.cumsum(paths, axis=2, dtype=paths.dtype, out=running[:, :, 1:])
            self.using[size] = running

    def _using(self, size: int, d: int, at: np.ndarray, strength: np.ndarray) -> np.ndarray:
        """Paths drawing ``d`` that use all of the sets ``at`` (of ``size`` cards): those
        ending stronger than ``strength``, as strong or stronger, and all, as (rows, 3)."""
        if size == 4 and d == 1:
            return self._exactly(4, at, strength)
        if size == 4 and d == 0:
            return np.zeros((len(at), 3), dtype=np.int64)
        table = self.using[size][0 if size == 4 else d]
        width = table.shape[1]
        flat = table.reshape(-1)
        base = at * width
        return np.stack((flat[base + strength], flat[base + strength + 1],
                         flat[base + width - 1]), axis=1).astype(np.int64)

    def _exactly(self, size: int, at: np.ndarray, strength: np.ndarray) -> np.ndarray:
        found = self.exact[size][at]
        present = found > 0
        level = strength[:, None]
        return np.stack(((present & (found < level)).sum(axis=1),
                         (present & (found <= level)).sum(axis=1),
                         present.sum(axis=1)), axis=1).astype(np.int64)

    # -- the alternating sums --------------------------------------------------------------

    def avoiding_final(self, final: np.ndarray, strength: np.ndarray) -> np.ndarray:
        """Per d: the paths that avoid the final hands ``final`` (rows of three positions),
        as (rows, 3 d, 3)."""
        result = np.zeros((len(final), 3, 3), dtype=np.int64)
        zero = np.zeros(len(final), dtype=np.int64)
        for d in range(3):
            total = self._using(0, d, zero, strength)
            for size in range(1, 4):
                sign = (-1) ** size
                for subset in combinations(range(3), size):
                    total += sign * self._using(size, d, self.index(final[:, subset]), strength)
            result[:, d] = total
        return result

    def using_one(self, final: np.ndarray, strength: np.ndarray, card: np.ndarray) -> np.ndarray:
        """Per d: the paths that avoid ``final`` and use ``card``, as (rows, 3 d, 3)."""
        result = np.zeros((len(final), 3, 3), dtype=np.int64)
        for d in range(3):
            total = self._using(1, d, card, strength)
            for size in range(1, 4):
                sign = (-1) ** size
                for subset in combinations(range(3), size):
                    columns = [final[:, column] for column in subset]
                    total += sign * self._using(size + 1, d, self.set_index(*columns, card),
                                                strength)
            result[:, d] = total
        return result

    def using_two(self, final: np.ndarray, strength: np.ndarray, first: np.ndarray,
                  second: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """The weighted paths that avoid ``final`` and use both ``first`` and ``second``,
        as (rows, 3)."""
        total = np.zeros((len(final), 3), dtype=np.int64)
        for d in range(3):
            if not weights[d]:
                continue
            part = self._using(2, d, self.set_index(first, second), strength)
            for size in (1, 2):
                sign = (-1) ** size
                for subset in combinations(range(3), size):
                    columns = [final[:, column] for column in subset]
                    part += sign * self._using(size + 2, d,
                                               self.set_index(*columns, first, second),
                                               strength)
            if d == 2:
                part -= self._exactly(5, self.set_index(final[:, 0], final[:, 1], final[:, 2],
                                                        first, second), strength)
            total += weights[d] * part
        return total

    # -- the player's draws ----------------------------------------------------------------

    def _add(self, hand: np.ndarray, draw: np.ndarray, hand_class: np.ndarray,
             counts: np.ndarray) -> None:
        """Adds the (lose-by, tie-by, all) weighted ``counts`` of each row to the draw
        ``draw`` of the starting hand ``hand`` (its index) for the final ``hand_class``."""
        below, same, everything = counts[:, 0], counts[:, 1] - counts[:, 0], counts[:, 2]
        by_result = np.stack((everything - counts[:, 1], same, below), axis=1)
        at = ((hand * len(DISCARDS) + draw) * len(CLASSES) + hand_class) * 3
        flat = self.totals.reshape(-1)
        for result in range(3):
            np.add.at(flat, at + result, by_result[:, result])

    def stand(self) -> None:
        final = self.triples
        at = self.triple_index
        strength = self.strength[at]
        avoid = self.avoiding_final(final, strength)
        # self.avoid[final index]: per d, the paths avoiding the final.
        self.avoid = np.zeros_like(avoid)
        self.avoid[at] = avoid
        self._add(at, np.zeros(len(at), dtype=np.int64), self.hand_class[at],
                  np.einsum("rdt,d->rt", avoid, self.weights[0]))

    def discard_one(self) -> None:
        n = self.n
        rows = np.repeat(np.arange(len(self.triples)), n)
        card = np.tile(np.arange(n), len(self.triples))
        final = self.triples[rows]
        fresh = (final != card[:, None]).all(axis=1)
        rows, card, final = rows[fresh], card[fresh], final[fresh]
        at = self.triple_index[rows]
        strength = self.strength[at]
        # self.one[final index, card]: per d, the paths avoiding the final and using card.
        self.one = np.zeros((len(self.triples), n, 3, 3), dtype=np.int64)
        step = CHUNK_ROWS
        for start in range(0, len(rows), step):
            part = slice(start, start + step)
            self.one[at[part], card[part]] = self.using_one(final[part], strength[part],
                                                            card[part])
        counts = np.einsum("rdt,d->rt", self.avoid[at] - self.one[at, card], self.weights[1])
        for replaced in range(3):
            kept = [final[:, column] for column in range(3) if column != replaced]
            hand = np.sort(np.stack((*kept, card), axis=1), axis=1)
            place = (hand < card[:, None]).sum(axis=1)
            self._add(self.index(hand), 3 - place, self.hand_class[at], counts)

    def discard_two(self, progress: Callable[[int, int], None] | None) -> None:
        n = self.n
        weights = self.weights[2]
        avoid = np.einsum("rdt,d->rt", self.avoid, weights)
        one = np.einsum("rcdt,d->rct", self.one, weights)
        pairs = np.array(list(combinations(range(n), 2)), dtype=np.int64).reshape(-1, 2)
        finals = len(self.triples)
        step = max(1, CHUNK_ROWS // max(1, len(pairs)))
        for start in range(0, finals, step):
            rows = np.repeat(np.arange(start, min(finals, start + step)), len(pairs))
            first = np.tile(pairs[:, 0], len(rows) // len(pairs))
            second = np.tile(pairs[:, 1], len(rows) // len(pairs))
            final = self.triples[rows]
            fresh = (final != first[:, None]).all(axis=1) & (final != second[:, None]).all(axis=1)
            rows, first, second, final = rows[fresh], first[fresh], second[fresh], final[fresh]
            at = self.triple_index[rows]
            strength = self.strength[at]
            counts = (avoid[at] - one[at, first] - one[at, second]
                      + self.using_two(final, strength, first, second, weights))
            for column in range(3):
                keep = final[:, column]
                hand = np.sort(np.stack((keep, first, second), axis=1), axis=1)
                place = (hand < keep[:, None]).sum(axis=1)
                self._add(self.index(hand), 4 + place, self.hand_class[at], counts)
            if progress is not None:
                progress(min(finals, start + step), finals)

    def draw_counts(self) -> dict[tuple[Card, ...], tuple[DrawCounts, ...]]:
        deck = self.deck
        result = {}
        totals = self.totals[self.triple_index].tolist()
        for positions, draws in zip(self.triples.tolist(), totals):
            hand = tuple(deck[position] for position in positions)
            counted = []
            for discard, classes in zip(DISCARDS, draws):
                found = {CLASSES[at]: tuple(ways) for at, ways in enumerate(classes)
                         if any(ways)}
                ways = self.ways[len(discard)]
                assert sum(sum(value) for value in found.values()) == ways, (hand, discard)
                counted.append(DrawCounts(tuple(hand[at] for at in discard), found, ways))
            result[hand] = tuple(counted)
        return result

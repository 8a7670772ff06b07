"""Shared machinery for the lookup-table rankings.

A low hand's strength depends on its ranks (and, for three cards, whether it is a flush), so
each ranking enumerates every rank multiset once, orders them by an explicit comparison key,
and stores the dense position (1 = best) in a dict keyed by the product of one prime per rank.
The product identifies the multiset exactly (unique factorisation) and costs four multiplies.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

from controller.core.cards import RANK_PRIMES


def prime_product(ranks: Iterable[int]) -> int:
    product = 1
    for rank in ranks:
        product *= RANK_PRIMES[rank]
    return product


Description = TypeVar("Description", bound=Hashable)


def dense_strengths(
    hands: Iterable[tuple[int, Description]], order_key: Callable[[Description], tuple[int, ...]]
) -> dict[int, int]:
    """Map each hand's lookup key to its dense strength (1 = best) under ``order_key``.

    ``hands`` yields (lookup key, description); equal order keys share a strength.
    """
    described = sorted(hands, key=lambda item: order_key(item[1]))
    strengths: dict[int, int] = {}
    strength = 0
    previous: tuple[int, ...] | None = None
    for lookup_key, description in described:
        key = order_key(description)
        if key != previous:
            strength += 1
            previous = key
        strengths[lookup_key] = strength
    return strengths

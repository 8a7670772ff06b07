"""RFID tag ids of cards: which tag belongs to which card.

A tagged deck comes with its registration list; the simulators use :func:`deck_tag`, a stable
id derived from the card's deck index (``04A1B200`` + index, 32 bits so the same id fits the
serial shoe's hex field and the USB report's four tag bytes).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from controller.core.cards import DECK, Card

SIMULATED_TAG_BASE = 0x04A1B200


def deck_tag(card: Card) -> str:
    """The simulated deck's tag id for ``card``: eight uppercase hex digits."""
    return f"{SIMULATED_TAG_BASE + card.index:08X}"


class TagRegistry:
    """Tag id -> card, for checking that the card a shoe named is the card its tag says."""

    def __init__(self, pairs: Mapping[str, Card] | Iterable[tuple[str, Card]] = ()) -> None:
        items = pairs.items() if isinstance(pairs, Mapping) else pairs
        self._cards: dict[str, Card] = {}
        for tag, card in items:
            self.register(tag, card)

    @classmethod
    def simulated_deck(cls) -> TagRegistry:
        return cls((deck_tag(card), card) for card in DECK)

    def register(self, tag: str, card: Card) -> None:
        key = tag.upper()
        known = self._cards.get(key)
        if known is not None and known != card:
            raise ValueError(f"tag {key} is already registered to {known}, not {card}")
        self._cards[key] = card

    def card_for(self, tag: str) -> Card | None:
        return self._cards.get(tag.upper())

    def __contains__(self, tag: object) -> bool:
        return isinstance(tag, str) and tag.upper() in self._cards

    def __len__(self) -> int:
        return len(self._cards)

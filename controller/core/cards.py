"""Playing cards: one standard 52-card deck, no joker.

Cards are written rank + suit: ranks ``A 2 3 4 5 6 7 8 9 T J Q K``, suits ``c d h s``.
``10`` is accepted on input as ``T`` and case is ignored (``as``, ``10D``); printing always
gives the canonical two-character form (``As``, ``Td``).

There are exactly 52 :class:`Card` objects; :func:`parse_card` returns one of them, so cards
compare and hash by value and cost nothing to copy.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from controller.errors import LowballError

RANK_CHARS = "A23456789TJQK"
SUIT_CHARS = "cdhs"
RED_SUITS = frozenset("dh")

ACE, TEN, JACK, QUEEN, KING = 1, 10, 11, 12, 13
#: One prime per rank (index 1 = ace .. 13 = king): the product of a hand's rank primes
#: identifies its ranks exactly, which the rankings use as a lookup key.
RANK_PRIMES: tuple[int, ...] = (0, 2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)


class CardError(LowballError, ValueError):
    """A card could not be read: the message names the text and what was wrong with it."""


@dataclass(frozen=True, slots=True)
class Card:
    """One card. ``rank`` is 1 (ace) to 13 (king); ``suit`` is one of ``c d h s``."""

    rank: int
    suit: str
    #: The rank's prime (:data:`RANK_PRIMES`), stored so hand lookups need no table access.
    prime: int = field(init=False, repr=False, compare=False)
    #: Position 0-51 in a fresh deck ordered by suit (c, d, h, s) then rank (A..K).
    index: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.rank not in range(1, 14) or self.suit not in SUIT_CHARS or len(self.suit) != 1:
            raise CardError(f"no such card: rank {self.rank!r}, suit {self.suit!r}")
        object.__setattr__(self, "prime", RANK_PRIMES[self.rank])
        object.__setattr__(self, "index", SUIT_CHARS.index(self.suit) * 13 + self.rank - 1)

    def __hash__(self) -> int:
        return self.index

    def __reduce__(self) -> tuple[type[Card], tuple[int, str]]:
        # Pickled by value, which also works when this class is compiled (setup.py).
        return Card, (self.rank, self.suit)

    @property
    def is_red(self) -> bool:
        return self.suit in RED_SUITS

    def __str__(self) -> str:
        return RANK_CHARS[self.rank - 1] + self.suit

    def __repr__(self) -> str:
        return f"Card({self})"


#: The 52 cards in deck order (clubs A..K, diamonds, hearts, spades).
DECK: tuple[Card, ...] = tuple(Card(rank, suit) for suit in SUIT_CHARS for rank in range(1, 14))

_BY_TEXT: dict[str, Card] = {str(card): card for card in DECK}


def parse_card(text: object) -> Card:
    """Read one card such as ``As``, ``Td`` or ``10d``; raise :class:`CardError` otherwise."""
    if not isinstance(text, str):
        raise CardError(f"a card must be written as text like 'As', not {type(text).__name__}")
    stripped = text.strip()
    rank_text = stripped[:-1].upper()
    card = _BY_TEXT.get(("T" if rank_text == "10" else rank_text) + stripped[-1:].lower())
    if card is not None:
        return card
    raise CardError(_explain(text))


def _explain(text: str) -> str:
    stripped = text.strip()
    if not stripped:
        return "empty card: expected rank+suit such as 'As' or '10d'"
    rank_text, suit_text = stripped[:-1], stripped[-1:]
    if rank_text.upper() not in {*RANK_CHARS, "10"}:
        return (f"unknown card {text!r}: rank {rank_text!r} is not one of "
                f"A 2 3 4 5 6 7 8 9 T(10) J Q K")
    return f"unknown card {text!r}: suit {suit_text!r} is not one of c d h s"


def parse_cards(texts: Iterable[str] | str) -> tuple[Card, ...]:
    """Read several cards, from a list or from one string (``"As 7d Kc"`` or ``"As,7d"``)."""
    if isinstance(texts, str):
        texts = texts.replace(",", " ").split()
    return tuple(parse_card(text) for text in texts)


def format_cards(cards: Iterable[Card]) -> str:
    return " ".join(str(card) for card in cards)


def find_duplicate(cards: Sequence[Card]) -> Card | None:
    """The first card that appears twice in ``cards``, or None."""
    seen: set[Card] = set()
    for card in cards:
        if card in seen:
            return card
        seen.add(card)
    return None

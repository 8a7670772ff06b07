"""Cards as they are printed on their faces (``10♥``, ``Q♠``), for the texts people read.

On the wire, in the journal and in every data field a card is written ``Th`` (rank + suit
letter, :mod:`controller.core.cards`); a text the table writes for people names cards the same
way, so that one pattern finds them (the table side's redaction,
:func:`controller.core.hidden_cards.without_cards`). Where a person reads the text (the
dealer's screen, ``dealer status``, ``watch``) each card is shown as printed on the card:
:func:`printed_text`. A terminal that cannot print the suits gets the suit's letter
(``10h``).

Pure: the standard library only.

>>> printed_card("Th"), printed_card("9d"), printed_card("As", ascii_only=True)
('10♥', '9♦', 'As')
>>> printed_text("duplicate card 9D: already dealt to spot 2")
'duplicate card 9♦: already dealt to spot 2'
"""

from __future__ import annotations

import re
from typing import Final

from controller.core.hidden_cards import CARD_TEXT

#: Each suit's symbol as printed on the cards.
SUIT_FACES: Final = {"c": "\u2663", "d": "\u2666", "h": "\u2665", "s": "\u2660"}
_FACE_SUITS: Final = {face: suit for suit, face in SUIT_FACES.items()}
_SPELLED: Final = re.compile(r"^(10|[A2-9TJQK])(.)$", re.IGNORECASE)


def printed_card(card: str, *, ascii_only: bool = False) -> str:
    """One card as printed: ``Th`` -> ``10♥`` (``ascii_only``: ``10h``); anything that is not
    a card is returned as it is."""
    match = _SPELLED.match(card)
    if match is None:
        return card
    rank, suit = match[1].upper(), match[2]
    suit = _FACE_SUITS.get(suit, suit.lower())
    if suit not in SUIT_FACES:
        return card
    rank = "10" if rank == "T" else rank
    return rank + (suit if ascii_only else SUIT_FACES[suit])


def printed_text(text: str, *, ascii_only: bool = False) -> str:
    """``text`` with every card written in it as printed (``card Th`` -> ``card 10♥``)."""
    return CARD_TEXT.sub(lambda match: printed_card(match[0], ascii_only=ascii_only), text)

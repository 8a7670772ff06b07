"""What the CMS topic family may see: hole-card confidentiality (WAC 230-16-152).

Washington's rules forbid sending card-specific live game data off-site. The table therefore
publishes two families (:data:`controller.wire.FAMILIES`) on separate sockets:

* ``surveillance.<table>.<type>``: every journaled record live, exactly as journaled;
* ``cms.<table>.<type>``: every journaled record, but while its hand is in play

  - a record that *is* card content (:data:`CARD_TYPES`: ``card_dealt``, ``shoe_card``,
    ``hand_shown``, ``house_way``) is **held**, and published right after that hand's
    ``hand_settled`` or ``hand_voided``, with its own journal seq and bytes;
  - a record that merely *mentions* a card (a ``decision_made`` discard, the ``decide``
    command's arguments, a fault's detail) is **redacted**: every list of cards becomes ``[]``
    and every card written in a text becomes ``**``. It keeps its seq; the redacted bytes
    differ from the journal's (the hash chain is a surveillance feature);
  - everything else is sent as is.

A card read with no hand in play (``hand_id`` null) belongs to no hand that could settle: it
never reaches the CMS family. The snapshot a CMS client gets is redacted the same way.

These functions are pure; :class:`controller.publisher.EventPublisher` applies them, live and
on replay, with the hand in play as it stands when the message is sent.
"""

from __future__ import annotations

import json
import re
from typing import Any

from controller import wire

#: Records that are card content: held on the CMS family until their hand is over.
CARD_TYPES = frozenset({"card_dealt", "shoe_card", "hand_shown", "house_way"})
#: Records that end a hand: the held records follow them on the CMS family.
HAND_ENDS = frozenset({"hand_settled", "hand_voided"})
#: A card written in a text (``As``, ``Td``), not inside a longer word or number.
CARD_TEXT = re.compile(r"(?<![A-Za-z0-9])[A2-9TJQK][cdhs](?![A-Za-z0-9])")
_CARD = re.compile(r"^[A2-9TJQK][cdhs]$")
#: A quick "nothing to redact" on a record's bytes: a card's rank and suit, not followed by a
#: letter or digit. Every card :func:`redact` finds in the decoded text is there in the bytes
#: too (ranks and suits are never escaped, and what follows a card is a quote, a backslash
#: escape, a non-ASCII byte or an ASCII non-alphanumeric), so a record these bytes do not
#: match has nothing to redact. No look-behind: in the bytes a card may follow an escape
#: (``\tAs``, ``\u00e9As``) whose last character is a letter or digit.
_CARD_BYTES = re.compile(rb"[A2-9TJQK][cdhs](?![A-Za-z0-9])")


def redact(value: Any) -> Any:
    """``value`` with every list of cards emptied and every card in a text replaced by
    ``**`` (dicts and lists walked)."""
    if isinstance(value, str):
        return CARD_TEXT.sub("**", value)
    if isinstance(value, list):
        if value and all(isinstance(item, str) and _CARD.match(item) for item in value):
            return []
        return [redact(item) for item in value]
    if isinstance(value, dict):
        return {key: redact(item) for key, item in value.items()}
    return value


def in_play(hand_id: str | None, open_hand: str | None) -> bool:
    """Whether a record of ``hand_id`` is still confidential while ``open_hand`` is in play
    (a record of no hand is treated as confidential: it never settles)."""
    return hand_id is None or hand_id == open_hand


def cms_message(kind: str, hand_id: str | None, message: bytes,
                open_hand: str | None) -> bytes | None:
    """The bytes the CMS family gets for one journaled record now; None when it is held."""
    if hand_id is not None and hand_id != open_hand:
        return message  # its hand is over: cards may go
    if kind in CARD_TYPES:
        return None
    if not _CARD_BYTES.search(message):
        return message  # nothing in the record looks like a card (the common case)
    return redacted(message)


def redacted(message: bytes) -> bytes:
    """The record's bytes with the cards in its ``data`` redacted (the same bytes when there
    are none). Decided on the decoded text, where a card after a tab or an accented letter is
    still a card."""
    envelope = json.loads(message)
    data = envelope["data"]
    hidden = redact(data)
    if hidden == data:
        return message
    return wire.canonical_json({**envelope, "data": hidden})


def cms_snapshot(state: dict[str, Any]) -> dict[str, Any]:
    """The table snapshot as the CMS family may see it (no card of the hand in play)."""
    return redact(state)

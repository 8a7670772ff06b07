"""What the CMS topic family may see: hole-card confidentiality (WAC 230-16-152).

Washington's rules forbid sending card-specific live game data off-site. The table therefore
publishes two families (:data:`controller.stream.wire.FAMILIES`) on separate sockets:

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

A settlement belongs to a player: ``wager_settled`` and ``progressive_awarded`` (and each wager
of ``wagers_locked``) name the seat's ``player`` on this family too, as journaled. A player id
is never redacted, even one that reads like a card (``"4c"``): the dealer gives it with the
wager, before the hand's first card exists, so it cannot carry one.

A card read with no hand in play (``hand_id`` null) belongs to no hand that could settle: it
never reaches the CMS family. The snapshot a CMS client gets is redacted the same way.

These functions are pure; :class:`controller.stream.publisher.EventPublisher` applies them, live and
on replay, with the hand in play as it stands when the message is sent.
"""

from __future__ import annotations

import json
import re
from typing import Any

from controller.stream import wire

#: Records that are card content: held on the CMS family until their hand is over.
CARD_TYPES = frozenset({"card_dealt", "shoe_card", "hand_shown", "house_way"})
#: A card written in a text, in any spelling the table reads as one
#: (:func:`controller.core.cards.parse_card`: ``As``, ``as``, ``AS``, ``10d``, ``Td``), not inside a
#: longer word or number. A dealer's ``discard:kh`` is a card as much as ``discard:Kh``.
_CARD_SPELLING = "(?:10|[A2-9TJQKajqkt])[cdhsCDHS]"
CARD_TEXT = re.compile(f"(?<![A-Za-z0-9]){_CARD_SPELLING}(?![A-Za-z0-9])")
_CARD = re.compile(r"^[A2-9TJQK][cdhs]$")
#: A quick "nothing to redact" on a record's bytes. Every card :func:`redact` finds in the
#: decoded text is there in the bytes too, after a byte that is not a letter or digit or
#: after a JSON escape (``\tAs``, ``\u00e9As``: ranks and suits are never escaped), and
#: followed by a quote, an escape, a non-ASCII byte or an ASCII non-alphanumeric. A key is
#: never a card (``"ts":`` is the envelope's time).
_CARD_BYTES = re.compile(
    rb"(?:(?<![A-Za-z0-9])|(?<=\\[bfnrt])|(?<=\\u[0-9a-fA-F]{4}))"
    + _CARD_SPELLING.encode() + rb'(?![A-Za-z0-9])(?!":)')


#: Keys whose text is never card content (see the module's docstring): kept as they are.
UNREDACTED_KEYS = frozenset({"player", "players"})


def _player_text(value: Any) -> bool:
    """A player id, or a map of seats to player ids (the snapshot's)."""
    return isinstance(value, str) or (
        isinstance(value, dict) and all(isinstance(item, str) for item in value.values()))


def redact(value: Any) -> Any:
    """``value`` with every list of cards emptied and every card in a text replaced by
    ``**`` (dicts and lists walked; a player id kept)."""
    if isinstance(value, str):
        return CARD_TEXT.sub("**", value)
    if isinstance(value, list):
        if value and all(isinstance(item, str) and _CARD.match(item) for item in value):
            return []
        return [redact(item) for item in value]
    if isinstance(value, dict):
        return {key: item if key in UNREDACTED_KEYS and _player_text(item) else redact(item)
                for key, item in value.items()}
    return value


def cms_message(kind: str, hand_id: str | None, message: bytes,
                open_hand: str | None) -> bytes | None:
    """The bytes the CMS family gets for one journaled record now; None when it is held."""
    if kind in SURVEILLANCE_ONLY_TEXT:
        return without_device_text(message)
    if hand_id is not None and hand_id != open_hand:
        return without_tag(message) if kind == "shoe_card" else message  # cards may go
    if kind in CARD_TYPES:
        return None
    if not _CARD_BYTES.search(message):
        return message  # nothing in the record looks like a card (the common case)
    return redacted(message)


#: Records whose free text comes from a device (a shoe's fault, a device's status: raw frames,
#: an RFID tag, what the shoe's firmware says) and stays surveillance's on every other family.
SURVEILLANCE_ONLY_TEXT = frozenset({"device_fault", "device_status"})


def without_device_text(message: bytes) -> bytes:
    """A device's record with its ``detail`` left empty (the code says what happened)."""
    envelope = json.loads(message)
    if not envelope["data"].get("detail"):
        return message
    return wire.canonical_json({**envelope, "data": {**envelope["data"], "detail": ""}})


def without_tag(message: bytes) -> bytes:
    """A ``shoe_card`` with its RFID ``tag`` left empty: a tag is the deck's registration, and
    a tag matched to its card once is that card in any later text that names the tag."""
    envelope = json.loads(message)
    if not envelope["data"].get("tag"):
        return message
    return wire.canonical_json({**envelope, "data": {**envelope["data"], "tag": ""}})


def released(kind: str, message: bytes) -> bytes | None:
    """What the CMS family gets, once the hand is over, of a record it held (None: nothing)."""
    if kind not in CARD_TYPES:
        return None
    return without_tag(message) if kind == "shoe_card" else message


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
    """The table snapshot as the CMS family may see it: no card of the hand in play, nor what
    describes one (the house way's rule, the dealer's prompt during the draws, a fault's
    detail). Built from the table-side snapshot, which already hides what the table does."""
    hidden: dict[str, Any] = redact(state)  # a dict redacted is a dict
    hand = hidden.get("hand")
    if hand is not None:
        # how many cards each has (a count is no card), as dealt: the redaction empties a
        # list of cards the table side shows
        dealt = (state.get("hand") or {}).get("cards") or {}
        hidden["hand"] = {**hand, "cards": {who: [None] * len(cards) for who, cards
                                            in dealt.items()},
                          "discarded": {}, "discarded_places": {}, "house_way": None}
        hidden["expecting"] = f"hand {hand.get('hand_id')} in play"
    if hidden.get("fault") is not None:
        hidden["fault"] = {**hidden["fault"], "detail": ""}
    return hidden

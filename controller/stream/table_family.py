"""What the table family may see: what the table shows, and nothing the rules still hide.

The table family (``table.<table>.<type>``, its own PUB and ROUTER sockets, and with CURVE its
own key allow-list, the dealer terminals') is the stream of the table's side: the dealer's
console (the dealer's screen and the pit's live view) follows it; the dealer's key opens it
and the command channel, never the surveillance stream. While a hand is in play:

* a card record (``card_dealt``, ``shoe_card``) is **held**, and published right after its
  hand's ``hand_settled`` or ``hand_voided`` with its own seq and bytes, as on the CMS family
  (:mod:`controller.stream.cms_view`); a card dealt to the community (the Cali LowBall flop,
  dealt face up) is sent live;
* ``house_way`` (the Three Card Lowball dealer's hand, shown when the dealer draws) and
  ``hand_shown`` (the showdown) are sent live: their moment is the reveal;
* every other record is sent with every card written in it redacted (a discard's cards, a
  fault's detail, a command's arguments), as on the CMS family; a device's own text (a shoe
  fault's raw frame, an RFID tag) is left out, and a ``shoe_card`` goes without its tag.

What the table shows *between* records (a Three Card Lowball spot's cards while it is to draw,
the dealer's after the players' draws) is in the snapshot this family's ROUTER answers:
:func:`controller.core.table_view.snapshot` with ``table_side``, which the console asks for
after every burst of events. The rules themselves are :mod:`controller.core.hidden_cards`.

A card read with no hand in play belongs to no hand: it never reaches this family.
"""

from __future__ import annotations

import json

from controller.core.events import COMMUNITY
from controller.stream import cms_view

#: Records that are card content: held until their hand is over (but a community card).
HELD_TYPES = frozenset({"card_dealt", "shoe_card"})
#: Card content sent live: the reveal is the record.
SHOWN_TYPES = frozenset({"house_way", "hand_shown"})


def table_message(kind: str, hand_id: str | None, message: bytes,
                  open_hand: str | None) -> bytes | None:
    """The bytes the table family gets for one journaled record now; None when it is held."""
    if kind in cms_view.SURVEILLANCE_ONLY_TEXT:
        return cms_view.without_device_text(message)
    if hand_id is not None and hand_id != open_hand:
        # its hand is over: every card may go (an RFID tag never: it would name the card
        # in any later text that quotes it)
        return cms_view.without_tag(message) if kind == "shoe_card" else message
    if kind in HELD_TYPES:
        if kind == "card_dealt" and hand_id is not None and _to_community(message):
            return message
        return None
    if kind in SHOWN_TYPES and hand_id is not None:
        return message
    return cms_view.cms_message(kind, None, message, None)


def released(kind: str, message: bytes) -> bytes | None:
    """What the family gets, once the hand is over, of a record it held (None: nothing)."""
    if kind not in HELD_TYPES or (kind == "card_dealt" and _to_community(message)):
        return None
    return cms_view.without_tag(message) if kind == "shoe_card" else message


def _to_community(message: bytes) -> bool:
    return bool(json.loads(message)["data"].get("to") == COMMUNITY)

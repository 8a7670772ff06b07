"""Every spelling of a card the table reads is redacted for the CMS.

The second outside attack on the finished daemon (issue 14): each test is an attack that
worked before its fix."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from controller.core.cards import parse_card
from controller.stream import cms_view, wire

from tests.support.commands import a_hand_locked


#: Spellings the table reads as a card (``parse_card``) besides the canonical ``Kh``.
_SPELLINGS = ("kh", "KH", "kH", "10d", "10D", "td", "as", "AS")


@pytest.mark.parametrize("spelling", _SPELLINGS)
def test_every_spelling_the_table_reads_as_a_card_is_redacted_for_the_cms(spelling: str) -> None:
    """``decide`` with ``discard:kh`` is carried out (the table reads ``kh`` as the king of
    hearts), and its journaled arguments went to the CMS family as written while the hand
    was in play: the redaction knew only the canonical ``Kh``."""
    assert parse_card(spelling)  # the table takes it as a card
    hand = "TCL-01-000001"
    for arguments, reason in ((json.dumps({"decision": f"discard:{spelling}", "spot": 1}), "x"),
                              ("{}", f"unknown card {spelling!r} at spot 1")):
        event = wire.EVENT_CLASSES["command_refused"]("decide", arguments, "dealer", "dealer",
                                                      reason)
        message = wire.encode(event, table_id="TCL-01", seq=3, ts=datetime.now(UTC),
                              hand_id=hand)
        sent = cms_view.cms_message("command_refused", hand, message, hand)
        assert sent is not None
        data: Any = wire.decode_event(sent).data      # Any: command_refused's own fields
        assert spelling not in data.arguments.replace("discard", "")
        assert spelling not in data.reason.replace("unknown card", "")


def test_a_discard_spelled_in_lower_case_reaches_no_cms_client_before_the_hand_settles() -> None:
    """Through the daemon: a decide command with the cards in lower case, refused in the wrong
    state, is journaled with the hand in play; the CMS bytes of it name no card."""
    with a_hand_locked() as daemon:
        hand = daemon.table.hand_id
        assert hand is not None
        daemon.command(json.dumps({"command": "decide", "spot": 1,
                                   "decision": "discard:qs,10h"}).encode())
        record = list(daemon.journal.records())[-1]
        assert record.type == "command_refused" and record.hand_id == hand
        sent = cms_view.cms_message(record.type, record.hand_id, record.message, hand)
        assert sent is not None
        assert b"qs" not in sent and b"10h" not in sent


def test_a_garbled_card_frame_named_in_a_fault_reaches_the_cms_without_its_card() -> None:
    """The shoe spells cards in capitals (``KH,,0``); a frame refused for its count was
    published to the CMS family with the card as sent in the fault's detail."""
    hand = "TCL-01-000001"
    event = wire.EVENT_CLASSES["device_fault"](
        "shoe", "MISREAD", "card frame 'KH,,0': card count '0' is not 1-65535")
    message = wire.encode(event, table_id="TCL-01", seq=9, ts=datetime.now(UTC), hand_id=hand)
    sent = cms_view.cms_message("device_fault", hand, message, hand)
    assert sent is not None
    fault: Any = wire.decode_event(sent)      # Any: device_fault's own fields
    assert "KH" not in fault.data.detail

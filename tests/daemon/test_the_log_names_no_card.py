"""The daemon's log names no card and no RFID tag (game protection, a second look: the log's
readers, ``journalctl`` on the table PC and a log shipper, are not surveillance; the shoe's
refusal of a reused sequence number wrote both frames, cards and tags, at warning level, and
each notable record was logged with its cards). The journal keeps them, for surveillance."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Iterator

import pytest
import structlog

from controller.cli import logs

from tests.support.rig import RigFactory
from tests.support.waits import wait_for

DECK = "As 7d Kc 2h 3s 4c 5d"


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    """The daemon's log as production writes it (JSON lines, info and up), into a buffer."""
    buffer = io.StringIO()
    logs.configure(json_lines=True, level=logging.INFO, stream=buffer)
    yield buffer
    structlog.reset_defaults()


def names_a_card(text: str) -> list[str]:
    """Every card of the deck written in ``text``, in any case and as the LBS1 frame writes
    it (``CAS``: C, rank, suit)."""
    found = []
    for card in DECK.split():
        if re.search(rf"(?<![A-Za-z0-9])C?{card}(?![A-Za-z0-9])", text, re.IGNORECASE):
            found.append(card)
    return found


def test_a_refused_frame_and_the_hands_records_leave_no_card_nor_tag_in_the_log(
        rig_factory: RigFactory, log_lines: io.StringIO) -> None:
    rig = rig_factory("cali_lowball")
    assert rig.ask({"command": "open"})["ok"]
    rig.shoe.device.load(DECK)
    for wager in ("ante", "xtra_bonus"):
        assert rig.ask({"command": "place", "spot": 1, "wager": wager, "amount": 1000})["ok"]
    assert rig.ask({"command": "lock"})["ok"]
    rig.deal_one()
    model = rig.shoe.model
    wait_for(lambda: model._outstanding is None, "the first card's acknowledgement")
    with rig.shoe.lock:
        model.reuse_seq()
        model.deal(1)                                     # 7d under the SEQ of As
    wait_for(lambda: rig.events("fault"), "the conflict fault")
    wait_for(lambda: len(rig.events("shoe_card")) == 2, "7d under its new SEQ")
    tags = [event.data.tag for event in rig.events("shoe_card")]
    assert all(tags), tags                                # surveillance has them
    text = log_lines.getvalue()
    lines = [json.loads(line) for line in text.splitlines()]
    events = {line["event"] for line in lines}
    assert {"shoe reused a sequence number: refused", "device fault", "fault"} <= events
    assert names_a_card(text) == [], [line for line in lines if names_a_card(json.dumps(line))]
    assert not any(tag in text for tag in tags)


def test_a_card_in_any_value_of_a_line_is_written_as_card() -> None:
    event = {"event": "x", "detail": "spot 1 drew As and 10♦", "cards": ["Kh", "Td"],
             "nested": {"card": "2c"}, "count": 3, "word": "as much as AS"}
    assert logs.no_card(None, "info", event) == {
        "event": "x", "detail": "spot 1 drew (card) and (card)", "cards": ["(card)", "(card)"],
        "nested": {"card": "(card)"}, "count": 3, "word": "as much as (card)"}

"""Hole-card confidentiality (WAC 230-16-152): the CMS family never carries a card of a hand
before that hand's hand_settled (or hand_voided); surveillance sees every card live.

Hands are played through the real daemon (tests/support/rig.py); a raw SUB socket on the
CMS endpoint records every message in the order it arrived, and the test checks each one
against the cards the journal says each hand held.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

import pytest
import zmq
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.settings.scenario import load_scenario
from controller.stream import cms_view, wire
from controller.stream.client import StreamClient
from controller.stream.journal import Journal, JournalRecord, journal_path

from tests.support.rig import scenarios_for
from tests.support.rig import RigFactory
from tests.support.waits import DEADLINE_S, wait_for


class RawSub:
    """Every CMS message, decoded, in arrival order."""

    def __init__(self, context: zmq.Context[Any], endpoint: str, prefix: bytes) -> None:
        self.socket = context.socket(zmq.SUB)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.setsockopt(zmq.SUBSCRIBE, prefix)
        self.socket.connect(endpoint)
        self.messages: list[tuple[bytes, bytes]] = []

    def drain(self) -> list[tuple[bytes, bytes]]:
        while self.socket.poll(0):
            topic, message = self.socket.recv_multipart()
            self.messages.append((topic, message))
        return self.messages

    def heartbeats(self) -> int:
        return sum(topic.endswith(b".heartbeat") for topic, _ in self.drain())


def cards_by_hand(records: Iterable[JournalRecord]) -> dict[str, set[str]]:
    hands: dict[str, set[str]] = {}
    for record in records:
        if record.hand_id is None:
            continue
        data = json.loads(record.message)["data"]
        found = set(cms_view.CARD_TEXT.findall(json.dumps(data))) \
            if record.type in cms_view.CARD_TYPES or record.type == "decision_made" else set()
        hands.setdefault(record.hand_id, set()).update(found)
    return hands


def mentions(message: bytes, cards: set[str]) -> set[str]:
    return {card for card in cards
            if re.search(rf"(?<![A-Za-z0-9]){card}(?![A-Za-z0-9])", message.decode())}


@pytest.mark.parametrize("game", ["three_card_lowball", "cali_lowball"])
def test_a_cms_subscriber_never_receives_a_card_before_settlement(rig_factory: RigFactory,
                                                                 game: str) -> None:
    rig = rig_factory(game)
    assert rig.stream.cms_events is not None and rig.stream.cms_replay is not None
    raw = RawSub(rig.context, rig.stream.cms_events, b"cms.")
    wait_for(lambda: raw.heartbeats(), "a CMS heartbeat")
    client = StreamClient(rig.context, table_id=rig.daemon.table_id, family=wire.CMS,
                          pub_endpoint=rig.stream.cms_events,
                          replay_endpoint=rig.stream.cms_replay)
    try:
        client.sync(replay_from=0)
        assert rig.ask({"command": "open"})["ok"]
        for path in scenarios_for(game, 3):
            rig.play(load_scenario(path))
        wait_for(lambda: rig.status()["hand"] is None, "the last hand to end")
        last_seq = rig.daemon.journal.last_seq
        beats = raw.heartbeats()
        wait_for(lambda: raw.heartbeats() > beats, "a heartbeat after the last release")
        received: list[int] = []
        while (event := client.receive(timeout=0.5)) is not None or \
                len(received) < last_seq:
            if event is None:
                continue
            received.append(event.seq)
            if len(received) >= last_seq and not client.withheld:
                break
    finally:
        client.close()
    with Journal.open_readonly(journal_path(rig.tmp_path / "state")) as journal:
        records = list(journal.records())
    hands = cards_by_hand(records)
    assert len(hands) == 3 and all(hands.values())

    messages = [(topic, message) for topic, message in raw.drain()
                if not topic.endswith(b".heartbeat")]
    assert all(topic.startswith(f"cms.{rig.daemon.table_id}.".encode())
               for topic, _ in messages)
    settled_at = {json.loads(message)["hand_id"]: index
                  for index, (_, message) in enumerate(messages)
                  if json.loads(message)["type"] == "hand_settled"}
    assert set(settled_at) == set(hands)
    for hand, cards in hands.items():
        for _, message in messages[:settled_at[hand]]:
            leaked = mentions(message, cards)
            envelope = json.loads(message)
            assert not (leaked and envelope["hand_id"] == hand), \
                f"{hand}: cards {sorted(leaked)} in {envelope['type']} #{envelope['seq']}"
        # After the settlement the withheld card records arrive, with their own seq.
        released = [json.loads(message) for _, message in messages[settled_at[hand]:]
                    if json.loads(message)["hand_id"] == hand
                    and json.loads(message)["type"] == "card_dealt"]
        assert released and all(r["seq"] < json.loads(messages[settled_at[hand]][1])["seq"]
                                for r in released)
    # The CMS client saw every journaled seq exactly once (withheld ones after the hand).
    assert sorted(received) == list(range(1, last_seq + 1))
    assert not client.withheld


def test_cms_snapshot_and_replay_hide_the_hand_in_play(rig_factory: RigFactory) -> None:
    rig = rig_factory("cali_lowball")
    scenario = load_scenario(scenarios_for("cali_lowball", 1)[0])
    assert rig.ask({"command": "open"})["ok"]
    rig.start_hand(scenario)
    rig.deal_one()
    rig.deal_one()
    dealt = {str(e.data.card) for e in rig.events("card_dealt")}
    assert len(dealt) == 2
    table_id = rig.daemon.table_id
    surveillance = StreamClient(rig.context, table_id=table_id,
                                pub_endpoint=rig.stream.events,
                                replay_endpoint=rig.stream.replay)
    assert rig.stream.cms_events is not None and rig.stream.cms_replay is not None
    cms = StreamClient(rig.context, table_id=table_id, family=wire.CMS,
                       pub_endpoint=rig.stream.cms_events, replay_endpoint=rig.stream.cms_replay)
    try:
        full = surveillance.snapshot()
        assert {card for cards in full.state["hand"]["cards"].values() for card in cards} \
            == dealt
        hidden = cms.snapshot()
        assert hidden.seq == full.seq
        # as many cards as lie face down on the table, none named
        assert all(card is None for cards in hidden.state["hand"]["cards"].values()
                   for card in cards)
        assert not mentions(json.dumps(hidden.state).encode(), dealt)
        replayed = cms.replay(0)
        assert replayed and all(e.type not in cms_view.CARD_TYPES for e in replayed)
        assert not any(mentions(wire.dumps(e), dealt) for e in replayed)
        assert cms.withheld and max(cms.withheld) <= full.seq
        assert len(surveillance.replay(0)) == full.seq
    finally:
        surveillance.close()
        cms.close()


def test_redaction_empties_card_lists_and_masks_card_text() -> None:
    message = wire.encode(wire.EVENT_CLASSES["fault"]("unexpected_card", "discard:Kh,Qs",
                                                      "shoe", False),
                          table_id="TCL-01", seq=7, ts=__import__("datetime").datetime.now(
                              __import__("datetime").UTC), hand_id="TCL-01-000001")
    assert cms_view.cms_message("fault", "TCL-01-000001", message, None) == message
    hidden = cms_view.cms_message("fault", "TCL-01-000001", message, "TCL-01-000001")
    assert hidden is not None
    assert json.loads(hidden)["data"]["detail"] == "discard:**,**"
    assert wire.decode(hidden).seq == 7                      # still a valid message
    assert cms_view.redact({"cards": ["As", "Kd"], "rule": "As high"}) == \
        {"cards": [], "rule": "** high"}
    assert cms_view.cms_message("card_dealt", None, b"{}", None) is None
    assert DEADLINE_S > 0


#: Text with cards, near-cards and non-ASCII next to them, for the quick check below.
_TEXTS = st.lists(st.sampled_from(["As", "Td", "2c", "Kh", "10d", "AS", "aS", "xAs", "As1", "é",
                                   "\u2c00", "\U0001f0a1", " ", ",", ":", "\n", '"', "\\", "-",
                                   "discard", "7"]), max_size=8).map("".join) | st.text(max_size=12)


@settings(max_examples=300, deadline=None)
@given(reason=_TEXTS, arguments=_TEXTS, table_id=st.sampled_from(["TCL-01", "As-2", "T3"]))
def test_the_quick_no_card_check_agrees_with_redaction(reason: str, arguments: str,
                                                       table_id: str) -> None:
    """A record the byte check passes as card-free is one redaction would leave alone."""
    event = wire.EVENT_CLASSES["command_refused"]("decide", arguments, "dealer", "dealer", reason)
    hand = f"{table_id}-000001"
    try:
        message = wire.encode(event, table_id=table_id, seq=3, ts=datetime.now(UTC),
                              hand_id=hand)
    except UnicodeEncodeError:  # a lone surrogate is no message at all
        return
    assert cms_view.cms_message("command_refused", hand, message, hand) == \
        cms_view.redacted(message)


@pytest.mark.parametrize("reason", ["éAs", "—Kd", "x\tAs", "line1\nKd", "\u2c00Qh high",
                                    "(Td)", "9c"])
def test_a_card_after_any_character_is_redacted(reason: str) -> None:
    """The decoded text decides: a card after a tab, a newline or an accented letter is a
    card all the same (json.dumps would have written those as escapes ending in a letter)."""
    event = wire.EVENT_CLASSES["command_refused"]("decide", "{}", "dealer", "dealer", reason)
    hand = "TCL-01-000001"
    message = wire.encode(event, table_id="TCL-01", seq=3, ts=datetime.now(UTC), hand_id=hand)
    sent = cms_view.cms_message("command_refused", hand, message, hand)
    assert sent is not None and sent != message
    refused: Any = wire.decode(sent)      # Any: a command_refused envelope
    assert not cms_view.CARD_TEXT.search(refused.data.reason)
    assert "**" in refused.data.reason

"""What the table and CMS families never carry, beyond the cards themselves (game protection,
a second look): the chain hash of a record after a card they hold (the hash of a card record
is recomputed from a guess of its card: a guess that matches names the card), an RFID tag (a
tag matched to its card once names it in any later text), a device's own text (a raw frame, a
tag), and, on the CMS snapshot, what describes the dealer's hand (the house way, the prompt
of the draws, a fault's detail). A reason journaled for surveillance says something."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq

from controller.settings.validation import InputError
from controller.stream import wire
from controller.stream.cms_view import cms_snapshot
from controller.stream.journal import GENESIS_HASH
from controller.stream.table_commands import parse_command

from tests.support.rig import Rig
from tests.support.table import Driver
from tests.support.waits import DEADLINE_S, wait_for

TCL = ["8c", "2d", "Kd", "3s", "4h", "Qd", "5c", "6h", "7d", "Ad", "9h", "Th"]


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    made = Rig(tmp_path, "three_card_lowball")
    yield made
    made.close()


def heartbeats(rig: Rig, endpoint: str, after_seq: int) -> wire.Heartbeat:
    """The first heartbeat a new subscriber of ``endpoint`` gets whose seq is past
    ``after_seq``."""
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context.instance()
    sub = context.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.connect(endpoint)
    try:
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            if sub.poll(100):
                decoded = wire.decode(sub.recv_multipart()[-1])
                if isinstance(decoded, wire.Heartbeat) and decoded.seq > after_seq:
                    return decoded
        raise AssertionError(f"no heartbeat past seq {after_seq} on {endpoint}")
    finally:
        sub.close()


def locked(rig: Rig) -> None:
    rig.shoe.device.load(TCL)
    assert rig.ask({"command": "open"})["ok"]
    for spot in (1, 2):
        for wager in ("ante", "bonus"):
            assert rig.ask({"command": "place", "spot": spot, "wager": wager,
                            "amount": 1000})["ok"]
    assert rig.ask({"command": "lock"})["ok"]


def test_the_heartbeats_of_the_dealer_side_and_the_cms_pin_the_hands_first_record(
        rig: Rig) -> None:
    locked(rig)
    for _ in range(4):
        rig.deal_one()
    journal = rig.daemon.journal
    last = journal.last_seq
    (started,) = rig.events("hand_started")
    first = started.seq
    stream = rig.stream
    assert stream.table_events and stream.cms_events
    for endpoint in (stream.table_events, stream.cms_events):
        beat = heartbeats(rig, endpoint, last - 1)
        assert beat.hash_seq == first and beat.hash == journal.hash_at(first), endpoint
    whole = heartbeats(rig, stream.events, last - 1)      # surveillance: the head
    assert whole.hash_seq in (None, whole.seq) and whole.hash == journal.hash_at(whole.seq)
    # dealer status and every command reply: the same pinned hash
    told = rig.status()
    assert rig.ask({"command": "status"})["journal"]["hash_seq"] == first, told
    assert rig.ask({"command": "status"})["journal"]["hash"] != GENESIS_HASH


def test_no_tag_nor_device_text_leaves_surveillances_family(rig: Rig) -> None:
    from controller.stream.client import StreamClient
    locked(rig)
    for _ in range(6):
        rig.deal_one()
    assert rig.ask({"command": "void", "reason": "test"}, supervisor=True)["ok"]
    wait_for(lambda: rig.events("hand_voided"), "the void")
    last = rig.daemon.journal.last_seq
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    stream = rig.stream
    assert stream.table_events and stream.table_replay and stream.cms_events \
        and stream.cms_replay
    got: dict[str, list[Any]] = {}
    try:
        for family, pub, replay in ((wire.TABLE, stream.table_events, stream.table_replay),
                                    (wire.CMS, stream.cms_events, stream.cms_replay)):
            client = StreamClient(context, table_id=rig.daemon.table_id, pub_endpoint=pub,
                                  replay_endpoint=replay, family=family)
            client.sync(replay_from=0)
            got[family] = []
            deadline = time.monotonic() + DEADLINE_S
            while (client.delivered_through() or 0) < last:
                assert time.monotonic() < deadline, (family, client.delivered_through())
                envelope = client.receive(0.5)
                if envelope is not None:
                    got[family].append(envelope)
            client.close()
    finally:
        context.term()
    surveillance = rig.events("shoe_card") + rig.events("device_status")
    assert all(event.data.tag for event in rig.events("shoe_card"))
    assert all(event.data.detail for event in rig.events("device_status"))
    assert surveillance
    for family, events in got.items():
        for event in events:
            if event.type == "shoe_card":
                assert event.data.tag == "", (family, event)
            if event.type in ("device_status", "device_fault"):
                assert event.data.detail == "", (family, event)
    cms_types = {event.type for event in got[wire.CMS]}
    assert {"shoe_card", "device_status"} <= cms_types, cms_types


def test_the_cms_snapshot_tells_nothing_of_the_hand_in_play() -> None:
    d = Driver("three_card_lowball")
    d.do(command="open")
    for spot in (1, 2):
        d.do(command="place", spot=spot, wager="ante", amount=1000)
        d.do(command="place", spot=spot, wager="bonus", amount=1000)
    d.do(command="lock")
    d.cards(" ".join(TCL[:9]))
    table_side = d.table.snapshot(table_side=True)
    assert table_side["hand"]["cards"]["1"] != [None, None, None]   # spot 1 draws: shown
    seen = cms_snapshot(table_side)
    hand = seen["hand"]
    assert all(card is None for cards in hand["cards"].values() for card in cards)
    assert len(hand["cards"]["1"]) == 3
    assert hand["house_way"] is None and hand["discarded"] == {}
    assert seen["expecting"] == f"hand {hand['hand_id']} in play"


@pytest.mark.parametrize("command", ["void", "burn"])
def test_a_reason_of_only_spaces_is_refused_naming_the_reason(command: str) -> None:
    with pytest.raises(InputError, match="reason"):
        parse_command({"command": command, "reason": "   "})
    with pytest.raises(InputError, match="reason"):
        parse_command({"command": "adjust_meter", "amount": 100, "reason": "\t \n"})

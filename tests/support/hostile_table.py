"""A compromised table for the floor's tests: a real journal and the real publisher (live
stream, heartbeats, snapshots, replays) in a thread of their own, fed whatever events a test
chooses, including text no honest table writes. The floor cannot tell it from a daemon."""

from __future__ import annotations

import hashlib
import json
import queue
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import zmq

from controller.core.table_events import ConfigApplied, TableOpened
from controller.stream import wire
from controller.stream.journal import Journal, JournalRecord, chain_hash, journal_path
from controller.stream.publisher import EventPublisher


HEARTBEAT_S = 0.1


def free_endpoint() -> str:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{probe.getsockname()[1]}"


class HostileTable:
    def __init__(self, state_dir: Path, table_id: str) -> None:
        self.table_id = table_id
        #: The heartbeat's ``journal_broken_at``; the replay still serves every record (as a
        #: daemon from before the replay's ceiling did).
        self.broken_at: int | None = None
        state_dir.mkdir(parents=True, exist_ok=True)
        self.journal = Journal(journal_path(state_dir), durability="batched")
        self.cms_events, self.cms_replay = free_endpoint(), free_endpoint()
        self.context = zmq.Context()
        self._inbox: queue.Queue[tuple[list[Any], str | None, threading.Event]] = queue.Queue()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"hostile-{table_id}")
        self._thread.start()
        if not self._ready.wait(10):
            raise AssertionError("the hostile table did not bind")

    def floor_entry(self) -> dict[str, str]:
        return {"id": self.table_id, "cms_events": self.cms_events,
                "cms_replay": self.cms_replay}

    def emit(self, events: list[Any], hand_id: str | None = None) -> None:
        """Journal and publish ``events`` (as one input and its effects), from the table's
        thread; returns once they are sent."""
        done = threading.Event()
        self._inbox.put((events, hand_id, done))
        if not done.wait(10):
            raise AssertionError("the hostile table did not publish")

    def _run(self) -> None:
        publisher = EventPublisher(self.context, table_id=self.table_id,
                                   pub_endpoint=free_endpoint(), replay_endpoint=free_endpoint(),
                                   cms_pub_endpoint=self.cms_events,
                                   cms_replay_endpoint=self.cms_replay, journal=self.journal,
                                   snapshot=lambda: {"state": "OPEN", "hand_id": None})
        self._ready.set()
        poller = zmq.Poller()
        for socket in publisher.sockets:
            poller.register(socket, zmq.POLLIN)
        beat = 0.0
        try:
            while not self._stop.is_set():
                if time.monotonic() - beat > HEARTBEAT_S:
                    publisher.heartbeat("OPEN", broken_at=self.broken_at)
                    beat = time.monotonic()
                if poller.poll(20):
                    publisher.handle_replay()
                while True:
                    try:
                        events, hand_id, done = self._inbox.get_nowait()
                    except queue.Empty:
                        break
                    for record in self._append(events, hand_id):
                        publisher.publish(record)
                    done.set()
        finally:
            publisher.close()

    def _append(self, events: list[Any], hand_id: str | None) -> list[JournalRecord]:
        """Journal the events; an event given as ``(event, tamper)`` is written as
        ``tamper(its honest bytes)``: what no honest table's encoder would write."""
        if not any(isinstance(event, tuple) and callable(event[-1]) for event in events):
            return self.journal.append_all(events, table_id=self.table_id, hand_id=hand_id,
                                           ts=datetime.now(UTC))
        records = []
        for event in events:
            event, tamper = event if isinstance(event, tuple) and callable(event[-1]) \
                else (event, lambda message: message)
            seq, previous = self.journal.last_seq + 1, self.journal.last_hash
            now = datetime.now(UTC)
            message = tamper(wire.encode(event, table_id=self.table_id, seq=seq, ts=now,
                                         hand_id=hand_id))
            record = JournalRecord(seq, wire.format_ts(now), wire.EVENT_KINDS[type(event)],
                                   hand_id, message, previous, chain_hash(previous, message))
            with self.journal._connection:
                self.journal._connection.execute(
                    "INSERT INTO journal (seq, ts, type, hand_id, message, prev_hash, hash) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)", record)
            self.journal._last_seq, self.journal._last_hash = seq, record.hash
            self.journal._table_id = self.table_id
            records.append(record)
        return records

    def close(self) -> None:
        self._stop.set()
        self._thread.join(10)
        self.journal.close()
        self.context.destroy(linger=0)


def stored(dsn: str, table_id: str) -> list[int]:
    try:
        with psycopg.connect(dsn) as connection:
            return [seq for (seq,) in connection.execute(
                "SELECT seq FROM floor_events WHERE table_id = %s ORDER BY seq", (table_id,))]
    except psycopg.errors.UndefinedTable:  # the service has not migrated yet
        return []


def opened(table_id: str) -> TableOpened:
    return TableOpened(table_id=table_id, game="three_card_lowball", paytable="paytable-1",
                       paytable_status="seed")


def linked_to(pool_id: str) -> ConfigApplied:
    """The table's settings, linked to ``pool_id`` (what a table with ``[progressive.link]``
    journals when it opens): the pool counts its records from here on."""
    config = json.dumps({"game": "three_card_lowball", "progressive": {"pool": pool_id}},
                        sort_keys=True, separators=(",", ":"))
    return ConfigApplied(hashlib.sha256(config.encode()).hexdigest(), "table opened", (),
                         config)

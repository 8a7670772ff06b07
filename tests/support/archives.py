"""Archived journals (quarantined) and the journals that continue them."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import zmq

from controller.core.table_events import JournalContinued, TableClosed
from controller.daemon.journal_quarantine import quarantine
from controller.stream import wire
from controller.stream.archive import Archives
from controller.stream.client import StreamClient
from controller.stream.journal import Journal, journal_path

from tests.support.stream import TABLE, TableLoop, sample_events


def append(state: Path, count: int) -> None:
    with Journal(journal_path(state), durability="batched") as journal:
        for event in sample_events(count):
            journal.append(event, table_id=TABLE, hand_id=None)


def alter(path: Path, seq: int) -> None:
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("DROP TRIGGER IF EXISTS journal_no_update")
    (message,), = connection.execute("SELECT message FROM journal WHERE seq = ?", (seq,))
    connection.execute("UPDATE journal SET message = ? WHERE seq = ?", (message + b" ", seq))
    connection.close()


def replayed(context: zmq.Context[Any], state: Path, after: int = 0
             ) -> tuple[list[wire.EnvelopeBase], StreamClient]:
    loop = TableLoop(context, journal_path(state))
    client = StreamClient(context, table_id=TABLE, pub_endpoint=loop.pub_endpoint,
                          replay_endpoint=loop.replay_endpoint)
    try:
        return client.replay(after, timeout=10), client
    finally:
        client.close()
        loop.stop()


def _archives(state: Path, now: list[float]) -> tuple[Journal, Archives]:
    journal = Journal(journal_path(state), durability="batched")
    return journal, Archives(journal, TABLE, clock=lambda: now[0])


ARCHIVED_SEQ = 5000


def continued(archived_seq: int = ARCHIVED_SEQ, hand_number: int = 0) -> JournalContinued:
    return JournalContinued(
        archived="quarantine/journal-x-broken-at-seq-9.sqlite3", archived_seq=archived_seq,
        archived_hash="ab" * 32, first_bad_seq=9, broken="altered", meter=500_000,
        meter_from="meter_changed seq 8", verified_meter=500_000,
        verified_meter_from="meter_changed seq 8", meter_held=True, by="sam", reason="test",
        hand_number=hand_number)


def successor(path: Path, records: int = 0) -> Journal:
    journal = Journal(path, durability="batched", first_seq=ARCHIVED_SEQ + 1)
    journal.append(continued(), table_id=TABLE, hand_id=None)
    for number in range(records):
        journal.append(TableClosed(f"closer {number}"), table_id=TABLE, hand_id=None)
    return journal

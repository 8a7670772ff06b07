"""A quarantined journal's successor goes on with the table's numbering (red team 5): its first
record, ``journal_continued``, takes the archived journal's last seq + 1. The chain check, the
running chain watch, the publisher's replay and the stream client take a journal that starts
there; nothing else may start above seq 1."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
import zmq

from controller.core.table_events import TableClosed
from controller.daemon.chain_watch import ChainWatch
from controller.daemon.journal_quarantine import quarantine
from controller.stream import wire
from controller.stream.client import StreamClient
from controller.stream.journal import GENESIS_HASH, Journal, journal_path

from tests.support.archives import ARCHIVED_SEQ, continued, successor
from tests.support.journal_files import damage_last_record
from tests.support.stream import TABLE, TableLoop, sample_events


def test_a_successor_starts_after_the_archived_journal_and_verifies(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    empty = Journal(path, durability="batched", first_seq=ARCHIVED_SEQ + 1)
    assert (empty.first_seq, empty.last_seq) == (ARCHIVED_SEQ + 1, ARCHIVED_SEQ)
    empty.close()
    with successor(path, 3) as journal:
        records = list(journal.records())
    assert [r.seq for r in records] == list(range(ARCHIVED_SEQ + 1, ARCHIVED_SEQ + 5))
    assert records[0].prev_hash == GENESIS_HASH          # the new chain starts there
    with Journal.open_readonly(path) as journal:          # reopened: where it starts is kept
        assert (journal.first_seq, journal.last_seq) == (ARCHIVED_SEQ + 1, ARCHIVED_SEQ + 4)
        assert journal.verify() == (True, 4, None, "", ARCHIVED_SEQ + 4, records[-1].hash)
    connection = sqlite3.connect(path, isolation_level=None)   # the trigger keeps the start
    with pytest.raises(sqlite3.IntegrityError, match="gapless"):
        connection.execute("INSERT INTO journal VALUES (7, 'x', 'x', NULL, x'00', 'x', 'x')")
    connection.close()
    with pytest.raises(ValueError, match="first_seq"):
        Journal(tmp_path / "other.sqlite3", first_seq=0)


@pytest.mark.parametrize("first, archived_seq", [(TableClosed("x"), None),
                                                 (continued(ARCHIVED_SEQ - 1), ARCHIVED_SEQ - 1)])
def test_only_a_journal_continued_that_names_the_seq_before_may_start_above_seq_1(
        tmp_path: Path, first: str, archived_seq: int) -> None:
    with Journal(tmp_path / "journal.sqlite3", first_seq=ARCHIVED_SEQ + 1) as journal:
        journal.append(first, table_id=TABLE, hand_id=None)
        report = journal.verify()
    assert not report.ok
    if archived_seq is None:
        assert (report.first_bad_seq, report.reason) == (
            1, f"record seq 1 to {ARCHIVED_SEQ} missing (next record is seq {ARCHIVED_SEQ + 1})")
    else:
        assert report.first_bad_seq == ARCHIVED_SEQ + 1 and "archived seq" in report.reason


def test_the_chain_watch_sweeps_a_successor_from_its_first_record(tmp_path: Path) -> None:
    journal = successor(tmp_path / "journal.sqlite3", 4)
    watch = ChainWatch(journal, journal.last_seq, journal.last_hash)
    for _ in range(3):                                    # passes over the whole chain
        assert watch.check(sweep=2) is None
    journal.close()


def test_a_client_from_before_the_successor_gets_journal_continued_then_the_rest(
        context: zmq.Context[Any], tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    successor(path).close()
    loop = TableLoop(context, path)
    clients = []
    try:
        loop.call("append", sample_events(1200), False)   # past one replay batch, not sent
        last = ARCHIVED_SEQ + 1201
        for resume in (0, ARCHIVED_SEQ - 10, ARCHIVED_SEQ):
            client = StreamClient(context, table_id=TABLE, pub_endpoint=loop.pub_endpoint,
                                  replay_endpoint=loop.replay_endpoint)
            clients.append(client)
            assert client.sync(replay_from=resume).seq == last
            events = [client.receive(timeout=5) for _ in range(1201)]
            assert [e.seq for e in events if e is not None] == \
                list(range(ARCHIVED_SEQ + 1, last + 1))
            assert events[0] is not None and wire.to_event(events[0]) == continued()
            assert client.delivered_through() == last
        # a gap the live stream reveals, from before the successor: filled the same way
        client = clients[-1]
        client.last_seq = 3                       # as if it had seen the old journal's seq 3
        loop.call("append", sample_events(1), True)
        events = [client.receive(timeout=5) for _ in range(1202)]
        assert [e.seq for e in events if e is not None] == \
            list(range(ARCHIVED_SEQ + 1, last + 2))
    finally:
        for client in clients:
            client.close()
        loop.stop()


def test_a_second_quarantine_keeps_the_hand_numbers_even_with_its_record_damaged(
        tmp_path: Path) -> None:
    """The successor's only record, its journal_continued, is the one found damaged: the hand
    numbers come from the journals archived before it."""
    with Journal(journal_path(tmp_path)) as journal:
        for number in (6, 7):
            journal.append(TableClosed("x"), table_id=TABLE, hand_id=f"{TABLE}-{number:06d}")
        journal.append(TableClosed("x"), table_id=TABLE, hand_id=None)
    damage_last_record(tmp_path)
    first = quarantine(tmp_path, "disk damage", by="sam").record
    assert (first.archived_seq, first.hand_number) == (3, 7)
    damage_last_record(tmp_path)
    second = quarantine(tmp_path, "disk damage again", by="sam").record
    assert (second.archived_seq, second.hand_number) == (4, 7)
    with Journal.open_readonly(journal_path(tmp_path)) as journal:
        assert [r.seq for r in journal.records()] == [5]

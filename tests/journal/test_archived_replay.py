"""A replay before a quarantined journal's successor is served from the archived journals
(controller/stream/archive.py): the records the quarantine verified, each checked again as it
is served, announced as from the archive; the rest named in ``replay_gap`` with why. Never a
silent skip (tests/stream/test_stream_behind_a_quarantine.py runs it on a real daemon)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq

from controller.core.table_events import TableClosed
from controller.daemon.journal_quarantine import quarantine
from controller.stream import wire
from controller.stream.archive import COPY_SUFFIX, RETRY_SECONDS, Lost, Run
from controller.stream.client import StreamClient
from controller.stream.journal import Journal, JournalRecord, journal_path

from tests.support.archives import continued
from tests.support.archives import append, alter, replayed, _archives
from tests.support.stream import TABLE, TS, TableLoop


def test_two_quarantines_back_every_verified_record_is_served_and_the_rest_named(
        context: zmq.Context[Any], tmp_path: Path) -> None:
    append(tmp_path, 5)
    alter(journal_path(tmp_path), 5)
    first = quarantine(tmp_path, "disk damage", by="sam").archived
    append(tmp_path, 1500)                                   # seqs 7 to 1506
    alter(journal_path(tmp_path), 1506)
    second = quarantine(tmp_path, "disk damage again", by="sam").archived
    events, client = replayed(context, tmp_path)
    assert [event.seq for event in events] == [*range(1, 5), *range(6, 1506), 1507]
    with Journal.open_readonly(second) as archive:  # as journaled, byte for byte
        kept = [record for record in archive.records() if record.seq < 1506]
    assert all(wire.decode_event(record.message) == event
               for record, event in zip(kept, events[4:1504], strict=True))
    names = [str(path.relative_to(tmp_path)) for path in (first, second)]
    assert [(first, last, name) for first, last, name in client.archived] == [
        (1, 4, names[0]), (6, 1505, names[1])]
    assert [(lost.first, lost.last) for lost in client.lost] == [(5, 5), (1506, 1506)]
    assert all("found, not verified" in lost.reason and name in lost.reason
               for lost, name in zip(client.lost, names, strict=True))
    # a resume in the middle of an archive chains on from the record before it
    events, client = replayed(context, tmp_path, after=700)
    assert [event.seq for event in events] == [*range(701, 1506), 1507]


def test_an_archived_journal_whose_journal_continued_is_damaged_ends_the_way_back(
        context: zmq.Context[Any], tmp_path: Path) -> None:
    append(tmp_path, 3)
    alter(journal_path(tmp_path), 3)
    quarantine(tmp_path, "disk damage", by="sam")
    alter(journal_path(tmp_path), 4)                         # the successor's only record
    second = quarantine(tmp_path, "disk damage again", by="sam").archived
    append(tmp_path, 2)
    events, client = replayed(context, tmp_path)
    assert [event.seq for event in events] == [5, 6, 7]
    before, damaged = client.lost
    assert (before.first, before.last) == (1, 3)
    assert "the journal_continued at seq 4 that names them is damaged" in before.reason
    assert (damaged.first, damaged.last) == (4, 4)
    assert "chain broke at seq 4" in damaged.reason
    assert str(second.relative_to(tmp_path)) in damaged.reason


def test_an_archive_altered_since_it_was_archived_is_served_from_its_copy_or_named(
        context: zmq.Context[Any], tmp_path: Path) -> None:
    append(tmp_path, 10)
    alter(journal_path(tmp_path), 10)
    archived = quarantine(tmp_path, "disk damage", by="sam").archived
    name = str(archived.relative_to(tmp_path))
    alter(archived, 4)                                  # its verified records no longer...
    events, client = replayed(context, tmp_path)        # ...recompute to verified_hash
    assert [event.seq for event in events] == [*range(1, 10), 11]
    assert [tuple(served) for served in client.archived] == [(1, 9, name)]
    copy = Path(f"{archived.with_suffix('')}.copy.sqlite3")
    alter(copy, 6)                                      # the copy too: nothing vouched for
    events, client = replayed(context, tmp_path)
    assert [event.seq for event in events] == [11] and not client.archived
    (lost,) = client.lost
    assert (lost.first, lost.last) == (1, 10)
    assert lost.reason.count("does not hold the records the quarantine verified") == 2
    assert name in lost.reason and str(tmp_path) not in lost.reason


def test_an_archive_altered_after_it_was_found_is_served_up_to_the_hash_kept_before_it(
        context: zmq.Context[Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import controller.stream.archive as archive

    monkeypatch.setattr(archive, "MARK_EVERY", 4)     # hashes kept for seqs 4 and 8 (and 9)
    append(tmp_path, 10)
    alter(journal_path(tmp_path), 10)
    archived = quarantine(tmp_path, "disk damage", by="sam").archived
    loop = TableLoop(context, journal_path(tmp_path))
    client = StreamClient(context, table_id=TABLE, pub_endpoint=loop.pub_endpoint,
                          replay_endpoint=loop.replay_endpoint)
    try:
        assert [event.seq for event in client.replay(0, until=2, timeout=10)] == [1, 2]
        alter(archived, 6)                              # found and checked: altered since
        events = client.replay(2, timeout=10)
    finally:
        client.close()
        loop.stop()
    assert [event.seq for event in events] == [3, 4, 11]   # 5 is not tied to a kept hash
    (lost,) = client.lost
    assert (lost.first, lost.last) == (5, 10)
    assert "no longer checks at seq 6" in lost.reason
    assert "altered since it was found" in lost.reason


def test_an_archive_missing_or_outside_the_state_directory_is_named_not_read(
        context: zmq.Context[Any], tmp_path: Path) -> None:
    state = tmp_path / "state"
    append(state, 3)
    alter(journal_path(state), 3)
    archived = quarantine(state, "disk damage", by="sam").archived
    outside = tmp_path / "outside.sqlite3"
    archived.rename(outside)                        # a real journal, ending as named...
    with Journal.open_readonly(outside) as journal:
        head = journal.last_record()
    assert head is not None
    journal_path(state).unlink()
    with Journal(journal_path(state), durability="batched", first_seq=4) as successor:
        successor.append(continued(3)._replace(archived="../outside.sqlite3",
                                               archived_hash=head.hash),
                         table_id=TABLE, hand_id=None)
        successor.append(TableClosed("x"), table_id=TABLE, hand_id=None)
    events, client = replayed(context, state)         # ...but not under the state directory
    assert [event.seq for event in events] == [4, 5]
    (lost,) = client.lost
    assert (lost.first, lost.last) == (1, 3) and "is not a journal under" in lost.reason


def test_an_archive_that_cannot_be_served_is_looked_for_again_once_a_minute(
        tmp_path: Path) -> None:
    append(tmp_path, 6)
    alter(journal_path(tmp_path), 6)
    archived = quarantine(tmp_path, "disk damage", by="sam").archived
    copy = Path(f"{archived.with_suffix('')}{COPY_SUFFIX}")
    aside = tmp_path / "aside.sqlite3"
    os.replace(copy, aside)
    archived.write_bytes(b"\xa5" * 8192)             # the archive damaged, its copy away
    now = [1000.0]
    journal, archives = _archives(tmp_path, now)
    try:
        assert archives.find() == 1
        (lost,) = archives.serve(0, 6)
        assert isinstance(lost, Lost)
        assert (lost.first, lost.last) == (1, 6) and "cannot be served" in lost.reason
        os.replace(aside, copy)                       # the copy put back
        now[0] += RETRY_SECONDS - 1
        assert archives.check() == 0                  # a heartbeat: not looked for yet
        assert [type(served) for served in archives.serve(0, 6)] == [Lost]
        now[0] += 1
        (lost,) = archives.serve(0, 6)                # a minute on: looked for, not on a turn
        assert isinstance(lost, Lost) and "is being checked again" in lost.reason
        assert archives.check() == 5                  # the next heartbeat checks it
        run, gap = archives.serve(0, 6)               # found, and served
        assert isinstance(run, Run) and [record.seq for record in run.records] == [1, 2, 3, 4, 5]
        assert isinstance(gap, Lost) and (gap.first, gap.last) == (6, 6)
        assert "found, not verified" in gap.reason
    finally:
        archives.close()
        journal.close()


def test_a_file_found_not_to_be_the_archive_is_read_again_only_once_it_changed(
        tmp_path: Path, mocker: Any) -> None:
    import controller.stream.archive as archive

    append(tmp_path, 6)
    alter(journal_path(tmp_path), 6)
    archived = quarantine(tmp_path, "disk damage", by="sam").archived
    copy = Path(f"{archived.with_suffix('')}{COPY_SUFFIX}")
    aside = tmp_path / "aside.sqlite3"
    os.replace(copy, aside)
    alter(archived, 2)                               # not the one: its chain is read once
    checked = mocker.spy(archive, "_not_the_one")
    now = [1000.0]
    journal, archives = _archives(tmp_path, now)
    try:
        assert archives.find() == 1 and checked.call_count == 1
        now[0] += RETRY_SECONDS
        assert archives.check() == 0                 # the search made again, at a heartbeat
        assert [type(served) for served in archives.serve(0, 6)] == [Lost]
        assert checked.call_count == 1               # unchanged: not read again
        os.replace(aside, copy)                      # the copy put back: that one is read
        now[0] += RETRY_SECONDS
        archives.check()
        run, _ = archives.serve(0, 6)
        assert isinstance(run, Run) and checked.call_count == 2
    finally:
        archives.close()
        journal.close()


def test_an_archive_that_fails_to_read_while_served_ends_the_run_and_is_found_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import controller.stream.archive as archive

    monkeypatch.setattr(archive, "MARK_EVERY", 2)     # hashes kept for seqs 2, 4, 6 (and 7)
    append(tmp_path, 8)
    alter(journal_path(tmp_path), 8)
    quarantine(tmp_path, "disk damage", by="sam")
    now = [0.0]
    journal, archives = _archives(tmp_path, now)
    try:
        assert archives.find() == 1
        assert [type(served) for served in archives.serve(0, 1)] == [Run]
        spans = archives._spans  # a damaged page met while serving, simulated (the pages
        assert spans is not None  # read when it was found are in SQLite's cache)
        archived = spans[0].journal
        assert archived is not None
        sound = archived.records

        def failing(after_seq: int = 0, limit: int | None = None) -> Iterator[JournalRecord]:
            for record in sound(after_seq, limit):
                if record.seq == 4:
                    raise sqlite3.DatabaseError("database disk image is malformed")
                yield record

        setattr(archived, "records", failing)
        run, lost = archives.serve(0, 8)          # 3 is read, but tied to no kept hash
        assert isinstance(run, Run) and [record.seq for record in run.records] == [1, 2]
        assert isinstance(lost, Lost) and (lost.first, lost.last) == (3, 8)
        assert "cannot be read at seq 4" in lost.reason and "malformed" not in lost.reason
        now[0] += RETRY_SECONDS                   # a minute on: found again, read again
        archives.check()
        run, gap = archives.serve(0, 8)
        assert isinstance(run, Run) and [record.seq for record in run.records] == [*range(1, 8)]
        assert isinstance(gap, Lost) and (gap.first, gap.last) == (8, 8)
    finally:
        archives.close()
        journal.close()


def test_a_replay_gap_names_the_archive_by_its_name_and_the_problem_in_fixed_words(
        tmp_path: Path) -> None:
    append(tmp_path, 400)
    alter(journal_path(tmp_path), 400)
    archived = quarantine(tmp_path, "disk damage", by="sam").archived
    copy = Path(f"{archived.with_suffix('')}{COPY_SUFFIX}")
    archived.write_bytes(b"not a journal at all" * 300)  # sqlite3: "file is not a database"
    size = copy.stat().st_size
    with copy.open("r+b") as file:                   # sqlite3: "database disk image is ..."
        file.seek(4096)
        file.write(b"\xa5" * (size - 4096))
    journal, archives = _archives(tmp_path, [0.0])
    try:
        assert archives.find() == 1
        (lost,) = archives.serve(0, 399)
    finally:
        archives.close()
        journal.close()
    assert isinstance(lost, Lost)
    assert (lost.first, lost.last) == (1, 399)
    names = [str(path.relative_to(tmp_path)) for path in (archived, copy)]
    assert all(name in lost.reason for name in names), lost.reason
    assert str(tmp_path) not in lost.reason and "/tmp" not in lost.reason, lost.reason
    assert "database" not in lost.reason and "malformed" not in lost.reason, lost.reason
    assert "cannot be opened as a journal" in lost.reason


def test_an_archive_named_without_an_anchor_is_named_lost_not_served(
        context: zmq.Context[Any], tmp_path: Path) -> None:
    append(tmp_path, 5)
    alter(journal_path(tmp_path), 5)
    done = quarantine(tmp_path, "disk damage", by="sam")
    assert len(done.record.verified_hash) == 64
    journal_path(tmp_path).unlink()                  # as an older release's quarantine wrote it
    with Journal(journal_path(tmp_path), durability="batched", first_seq=6) as successor:
        successor.append(done.record._replace(verified_hash=""), table_id=TABLE, hand_id=None)
    events, client = replayed(context, tmp_path)
    assert [event.seq for event in events] == [6] and not client.archived
    (lost,) = client.lost
    assert (lost.first, lost.last) == (1, 5) and "no anchor" in lost.reason


def test_a_journal_continued_journaled_before_the_anchor_reads_without_one() -> None:
    message = wire.encode(continued(3), table_id=TABLE, seq=4, ts=TS, hand_id=None)
    older = message.replace(b',"verified_hash":""', b"")
    assert older != message
    assert getattr(wire.decode_event(older).data, "verified_hash") == ""


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the records read through Journal.links and Journal.records from now on."""
    read = [0]
    links, records = Journal.links, Journal.records

    def counted_links(self: Journal, after_seq: int, limit: int
                      ) -> Iterator[tuple[int, str, str, bytes]]:
        for link in links(self, after_seq, limit):
            read[0] += 1
            yield link

    def counted_records(self: Journal, after_seq: int = 0, limit: int | None = None
                        ) -> Iterator[JournalRecord]:
        for record in records(self, after_seq, limit):
            read[0] += 1
            yield record

    monkeypatch.setattr(Journal, "links", counted_links)
    monkeypatch.setattr(Journal, "records", counted_records)
    return read


def test_an_archive_put_back_is_checked_in_slices_at_the_heartbeat_and_named_meanwhile(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import controller.stream.archive as archive

    monkeypatch.setattr(archive, "SLICE", 2000)
    monkeypatch.setattr(archive, "_CHUNK", 500)
    append(tmp_path, 5000)
    alter(journal_path(tmp_path), 5000)                # 1-4999 verified
    archived = quarantine(tmp_path, "disk damage", by="sam").archived
    copy = Path(f"{archived.with_suffix('')}{COPY_SUFFIX}")
    aside = tmp_path / "aside.sqlite3"
    os.replace(archived, aside)
    copy.unlink()
    now = [1000.0]
    journal, archives = _archives(tmp_path, now)
    try:
        assert archives.find() == 1                    # not served: looked for in a minute
        os.replace(aside, archived)                    # put back
        now[0] += RETRY_SECONDS
        read = _counting(monkeypatch)
        slices, named = [], []
        while True:
            read[0] = 0
            served = list(archives.serve(0, 1000))     # a replay on the table's turn
            assert read[0] == 0 or isinstance(served[0], Run), read[0]
            if isinstance(served[0], Run):
                break
            (lost,) = served
            assert isinstance(lost, Lost)
            named.append((lost.first, lost.last))
            assert "is being checked again" in lost.reason and "ask for them again" in \
                lost.reason
            read[0] = 0
            archives.check()                           # a heartbeat
            slices.append(read[0])
        run, *_ = served
        assert isinstance(run, Run) and [record.seq for record in run.records] == \
            [*range(1, 1001)]
    finally:
        archives.close()
        journal.close()
    assert named == [(1, 1000)] * 3
    # three heartbeats, each a slice of the chain (and the first reads the journal_continued
    # that names the archive)
    assert max(slices) <= 2000 + 1 and sum(slices) >= 4999, slices


def test_a_replay_of_an_archive_reads_the_run_and_at_most_the_hashes_kept_around_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import controller.stream.archive as archive

    monkeypatch.setattr(archive, "MARK_EVERY", 100)
    append(tmp_path, 1000)
    alter(journal_path(tmp_path), 1000)                # 1-999 verified
    quarantine(tmp_path, "disk damage", by="sam")
    journal, archives = _archives(tmp_path, [0.0])
    try:
        assert archives.find() == 1
        read = _counting(monkeypatch)
        for after, through in ((150, 350), (0, 100), (899, 999), (998, 999), (301, 302)):
            read[0] = 0
            (run,) = archives.serve(after, through)
            assert isinstance(run, Run)
            assert [record.seq for record in run.records] == [*range(after + 1, through + 1)]
            assert read[0] <= through - after + 2 * (100 - 1), (after, through, read[0])
    finally:
        archives.close()
        journal.close()


def test_an_archive_rewritten_after_it_was_found_is_served_from_its_copy_a_minute_on(
        tmp_path: Path) -> None:
    from controller.stream.journal import chain_hash

    append(tmp_path, 10)
    alter(journal_path(tmp_path), 10)
    archived = quarantine(tmp_path, "disk damage", by="sam").archived
    with Journal.open_readonly(archived) as kept:
        as_archived = {record.seq: record.message for record in kept.records()}
    now = [0.0]
    journal, archives = _archives(tmp_path, now)
    try:
        assert archives.find() == 1
        writer = sqlite3.connect(archived, isolation_level=None)   # rewritten, chained again
        try:
            writer.execute("DROP TRIGGER IF EXISTS journal_no_update")
            (prev,), = writer.execute("SELECT hash FROM journal WHERE seq = 2")
            for seq in range(3, 10):
                message = as_archived[seq] + b" "
                prev = chain_hash(prev, message)
                writer.execute("UPDATE journal SET message = ?, prev_hash = (SELECT hash FROM "
                               "journal WHERE seq = ?), hash = ? WHERE seq = ?",
                               (message, seq - 1, prev, seq))
        finally:
            writer.close()
        (lost,) = archives.serve(0, 10)
        assert isinstance(lost, Lost) and (lost.first, lost.last) == (1, 10)
        assert "no longer checks at seq 9" in lost.reason
        assert "altered since it was found" in lost.reason
        now[0] += RETRY_SECONDS
        archives.check()                               # found again: the copy is the one
        run, gap = archives.serve(0, 10)
    finally:
        archives.close()
        journal.close()
    assert isinstance(run, Run) and isinstance(gap, Lost)
    assert {record.seq: record.message for record in run.records} == \
        {seq: as_archived[seq] for seq in range(1, 10)}


def test_an_archived_record_whose_columns_no_longer_check_ends_the_run_before_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import controller.stream.archive as archive

    monkeypatch.setattr(archive, "MARK_EVERY", 4)
    append(tmp_path, 10)
    alter(journal_path(tmp_path), 10)
    archived = quarantine(tmp_path, "disk damage", by="sam").archived
    journal, archives = _archives(tmp_path, [0.0])
    try:
        assert archives.find() == 1
        writer = sqlite3.connect(archived, isolation_level=None)   # a column, not the chain
        try:
            writer.execute("DROP TRIGGER IF EXISTS journal_no_update")
            writer.execute("UPDATE journal SET type = 'table_closed' WHERE seq = 6")
        finally:
            writer.close()
        run, lost = archives.serve(0, 10)
        assert archives._retry is None             # the chain is the one verified: kept
    finally:
        archives.close()
        journal.close()
    assert isinstance(run, Run) and [record.seq for record in run.records] == [1, 2, 3, 4, 5]
    assert isinstance(lost, Lost) and (lost.first, lost.last) == (6, 10)
    assert "no longer checks at seq 6 (its message or columns" in lost.reason


def test_the_daemon_checks_an_archive_put_back_at_its_heartbeat(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import controller.stream.archive as archive
    from tests.support.daemon import run_config
    from tests.support.daemon import started

    monkeypatch.setattr(archive, "RETRY_SECONDS", 0.0)  # looked for again at once
    state = tmp_path / "state"
    config = run_config(tmp_path)
    with zmq.Context() as context:
        with started(tmp_path, config, context) as table:
            assert table.ask(command="open")["ok"]
            assert table.ask(command="place", spot=2, wager="ante", amount=700)["ok"]
            last = table.daemon.journal.last_seq
        alter(journal_path(state), last)
        archived = quarantine(state, "disk damage", by="sam").archived
        copy = Path(f"{archived.with_suffix('')}{COPY_SUFFIX}")
        aside = tmp_path / "aside.sqlite3"
        os.replace(archived, aside)
        copy.unlink()
        with started(tmp_path, config, context) as table:   # found at start: not served
            publisher = table.daemon.publisher
            assert publisher is not None
            os.replace(aside, archived)                      # put back
            (lost,) = publisher._archives.serve(0, last - 1)  # a replay: no search on it
            assert isinstance(lost, Lost) and "is being checked again" in lost.reason
            table.daemon._next_heartbeat = 0.0
            table.daemon._tick()                             # the heartbeat checks it
            (run,) = publisher._archives.serve(0, last - 1)
    assert isinstance(run, Run) and [record.seq for record in run.records] == \
        [*range(1, last)]

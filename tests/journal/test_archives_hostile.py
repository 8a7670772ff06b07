"""Red team 8: the last changes (archived replay, the claim ledger, the console's sign-in
turns, the vocabularies) attacked from outside.

Each test states the behaviour the project promises and is marked xfail (strict) while the
hole is open: a fix turns it into a pass, and strict makes the suite say so.

Red team 10: what landed in the last two sessions (the console's sign-in line and lock-outs,
the supervisor-name lookalike check, the command channel's deferred turns) attacked from
outside.

Each test states the behaviour the project promises and is marked xfail (strict) while the
hole is open: a fix turns it into a pass, and strict makes the suite say so."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import zmq

from controller.core.events import Wager
from controller.core.table_events import HandVoided
from controller.daemon.journal_quarantine import quarantine
from controller.stream.archive import COPY_SUFFIX
from controller.stream.journal import Journal, journal_path

from tests.support.archives import alter, append, replayed
from tests.support.stream import HAND, TABLE


FORGED_REFUND = 9_999_900


def _forge_verified_prefix(archived: Path, first_bad: int) -> None:
    """Rewrite the archived journal's records before ``first_bad`` as a chain of their own
    (plain sha256: anyone can), keep the records from the break on as they are, so the file
    still ends at the seq and hash ``journal_continued`` names."""
    with Journal.open_readonly(archived) as original:
        kept = list(original.records(after_seq=first_bad - 1))
    forged = archived.with_name("forged.sqlite3")
    with Journal(forged, durability="batched") as journal:
        for _ in range(1, first_bad):
            journal.append(HandVoided(HAND, "supervisor-7", "misdeal",
                                      (Wager(2, "ante", FORGED_REFUND),), 150),
                           table_id=TABLE, hand_id=HAND)
    connection = sqlite3.connect(forged, isolation_level=None)
    connection.executemany(
        "INSERT INTO journal (seq, ts, type, hand_id, message, prev_hash, hash) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)", [tuple(record) for record in kept])
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{forged}{suffix}").unlink(missing_ok=True)
    os.replace(forged, archived)


def test_an_archive_whose_verified_records_were_rewritten_is_not_served_as_verified(
        context: zmq.Context[Any], tmp_path: Path) -> None:  # noqa: F811
    append(tmp_path, 10)
    alter(journal_path(tmp_path), 8)                   # the break: seq 8
    archived = quarantine(tmp_path, "disk damage", by="sam").archived
    _forge_verified_prefix(archived, 8)
    events, client = replayed(context, tmp_path)
    refunds = [wager.amount for event in events if event.type == "hand_voided"
               for wager in getattr(event.data, "returned")]
    assert FORGED_REFUND not in refunds, (
        f"forged records served as verified from {client.archived}")


def test_the_archives_copy_is_not_read_through_a_link_out_of_the_state_directory(
        context: zmq.Context[Any], tmp_path: Path) -> None:  # noqa: F811
    state = tmp_path / "state"
    append(state, 6)
    alter(journal_path(state), 6)
    archived = quarantine(state, "disk damage", by="sam").archived
    outside = tmp_path / "elsewhere" / "journal.sqlite3"
    outside.parent.mkdir()
    os.replace(archived, outside)
    copy = Path(f"{archived.with_suffix('')}{COPY_SUFFIX}")
    copy.unlink(missing_ok=True)
    copy.symlink_to(outside)
    archived.write_bytes(b"not a journal")            # the archive itself unreadable
    events, client = replayed(context, state)
    assert not client.archived, (
        f"records served from {outside} (outside {state}): {client.archived}")
    assert [event.seq for event in events] == [7]


def test_a_damaged_archive_is_read_from_its_copy_or_named_lost(
        context: zmq.Context[Any], tmp_path: Path) -> None:  # noqa: F811
    append(tmp_path, 400)
    alter(journal_path(tmp_path), 400)
    archived = quarantine(tmp_path, "disk damage", by="sam").archived
    with archived.open("r+b") as file:             # page 1 (the header, the schema) intact
        size = file.seek(0, os.SEEK_END)
        file.seek(4096)
        file.write(b"\xa5" * (size - 4096))
    events, client = replayed(context, tmp_path)
    assert events and events[-1].seq == 401, "the new journal's records were not served"
    assert sorted([*((first, last) for first, last, _ in client.archived),
                   *((lost.first, lost.last) for lost in client.lost)])[0][0] == 1


def test_a_damaged_page_inside_an_archive_is_named_not_a_wall(
        context: zmq.Context[Any], tmp_path: Path) -> None:  # noqa: F811
    append(tmp_path, 3000)
    alter(journal_path(tmp_path), 3000)
    archived = quarantine(tmp_path, "disk damage", by="sam").archived
    size = archived.stat().st_size
    with archived.open("r+b") as file:             # one page, half way through
        file.seek(size // 4096 // 2 * 4096)
        file.write(b"\xa5" * 4096)
    events, client = replayed(context, tmp_path, after=1000)
    assert events and events[-1].seq == 3001, "the new journal's records were not served"


def test_an_archive_rewritten_and_chained_again_after_it_was_found_is_not_served(
        tmp_path: Path) -> None:
    import sqlite3

    from controller.daemon.journal_quarantine import quarantine
    from controller.stream.archive import Archives, Run
    from controller.stream.journal import Journal, chain_hash, journal_path
    from tests.support.stream import TABLE
    from tests.support.archives import alter, append

    append(tmp_path, 10)
    alter(journal_path(tmp_path), 10)
    archived = quarantine(tmp_path, "disk damage", by="sam").archived   # 1-9 verified
    with Journal.open_readonly(archived) as archive:
        as_archived = {record.seq: record.message for record in archive.records()}
    assert b'"amount":1000' in as_archived[7]          # a voided hand's wager, returned
    journal = Journal(journal_path(tmp_path), durability="batched")
    archives = Archives(journal, TABLE)
    try:
        assert archives.find() == 1                     # found and checked at the start
        # someone with the state directory's rights rewrites the returned amount and chains
        # the records after it again (the chain has no key: anyone can)
        writer = sqlite3.connect(archived, isolation_level=None)
        try:
            for (trigger,) in writer.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
                writer.execute(f"DROP TRIGGER {trigger}")
            (prev,), = writer.execute("SELECT hash FROM journal WHERE seq = 6")
            for seq in (7, 8, 9):
                message = as_archived[seq].replace(b'"amount":1000', b'"amount":100000')
                prev = chain_hash(prev, message)
                writer.execute("UPDATE journal SET message = ?, prev_hash = "
                               "(SELECT hash FROM journal WHERE seq = ?), hash = ? "
                               "WHERE seq = ?", (message, seq - 1, prev, seq))
        finally:
            writer.close()
        served = {record.seq: record.message for run in archives.serve(0, 10)
                  if isinstance(run, Run) for record in run.records}
    finally:
        archives.close()
        journal.close()
    altered = sorted(seq for seq, message in served.items() if message != as_archived[seq])
    assert not altered, (f"seq {altered} served from the archive as the quarantine verified "
                         f"them, though rewritten since: {served[7]!r}")


@pytest.mark.slow
def test_an_archive_put_back_is_not_checked_on_the_tables_turn(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import threading
    from collections.abc import Iterator

    from controller.daemon.journal_quarantine import quarantine
    from controller.stream.archive import COPY_SUFFIX, RETRY_SECONDS, Archives, Lost
    from controller.stream.journal import Journal, journal_path
    from tests.support.stream import TABLE
    from tests.support.archives import alter, append

    records = 40_000                                   # a long shift's journal
    append(tmp_path, records)
    alter(journal_path(tmp_path), records)
    archived = quarantine(tmp_path, "disk damage", by="sam").archived
    copy = Path(f"{archived.with_suffix('')}{COPY_SUFFIX}")
    aside = tmp_path / "aside.sqlite3"
    os.replace(archived, aside)                        # away (a backup run, a disk swap)...
    copy.unlink()
    now = [1000.0]
    journal = Journal(journal_path(tmp_path), durability="batched")
    archives = Archives(journal, TABLE, clock=lambda: now[0])
    try:
        assert archives.find() == 1                    # at the start: found, not served
        assert [type(served) for served in archives.serve(0, 10)] == [Lost]
        os.replace(aside, archived)                    # ...and put back
        now[0] += RETRY_SECONDS
        loop = threading.get_ident()
        read_on_turn = [0]
        links = Journal.links

        def counted(self: Journal, after_seq: int, limit: int
                    ) -> Iterator[tuple[int, str, str, bytes]]:
            for link in links(self, after_seq, limit):
                if threading.get_ident() == loop:
                    read_on_turn[0] += 1
                yield link

        monkeypatch.setattr(Journal, "links", counted)
        list(archives.serve(0, 10))                    # a subscriber's replay, on the turn
    finally:
        archives.close()
        journal.close()
    assert read_on_turn[0] < records // 2, (
        f"one replay request read {read_on_turn[0]} records of the archive's chain on the "
        f"table's turn")

"""Red team 8: the last changes (archived replay, the claim ledger, the console's sign-in
turns, the vocabularies) attacked from outside.

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
from controller.stream import wire
from controller.stream.archive import COPY_SUFFIX
from controller.stream.journal import Journal, journal_path
from tests.stream.conftest import HAND, TABLE, context  # noqa: F401 (fixture)
from tests.stream.test_archived_replay import alter, append, replayed

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


@pytest.mark.xfail(strict=True, reason=(
    "stream/archive.py:_open checks only the archived journal's last record against "
    "journal_continued (archived_seq, archived_hash), and _checked_run checks the records up "
    "to first_bad_seq - 1 only against each other: nothing ties the verified prefix to the "
    "head across the break, and journal_continued records no hash of the last verified "
    "record. A file swapped in with a re-chained prefix is served as replay_archived "
    "(verified), and the floor stores it as the table's"))
def test_an_archive_whose_verified_records_were_rewritten_is_not_served_as_verified(
        context: zmq.Context[Any], tmp_path: Path) -> None:  # noqa: F811
    append(tmp_path, 10)
    alter(journal_path(tmp_path), 8)                   # the break: seq 8
    archived = quarantine(tmp_path, "disk damage", by="sam").archived
    _forge_verified_prefix(archived, 8)
    events, client = replayed(context, tmp_path)
    refunds = [wager.amount for event in events if event.type == "hand_voided"
               for wager in event.data.returned]
    assert FORGED_REFUND not in refunds, (
        f"forged records served as verified from {client.archived}")


@pytest.mark.xfail(strict=True, reason=(
    "stream/archive.py:_open resolves the archived journal's own name and keeps it under "
    "the state directory, but builds the single-file copy's name from it and opens it "
    "without resolving: a link at <archive>.copy.sqlite3 is followed out of the state "
    "directory, and what it points to is served"))
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

"""Red team 11: what landed in the last two sessions (the quarantine's salvage of a damaged
journal, the archives' kept hashes, the supervisor-name lookalikes) attacked as a faulty disk,
a power cut and a guesser at the console.

Each test states the behaviour the project promises and is marked xfail (strict) while the
hole is open: a fix turns it into a pass, and strict makes the suite say so."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import zmq

from controller.daemon.journal_quarantine import QuarantineRefused, quarantine
from controller.stream.journal import Journal, journal_path

from tests.support.daemon import play_a_hand, play_a_voided_hand, run_config, Daemon
from tests.support.wal import PAGE, WAL_HEADER, FRAME_HEADER, assert_held_or_refused


def a_played_table(root: Path) -> Path:
    """A table's state directory after one hand played (the daemon stopped)."""
    context = zmq.Context()
    try:
        table = Daemon(root, run_config(root), context)
        table.daemon.start()
        try:
            play_a_hand(table.ask)
        finally:
            table.daemon.close()
    finally:
        context.term()
    return root / "state"


def play_hands(root: Path, config: Path, context: zmq.Context[Any], hands: int) -> int:
    """``hands`` hands played and voided on the table of ``root`` (a daemon started and
    stopped); the last seq journaled."""
    table = Daemon(root, config, context)
    table.daemon.start()
    try:
        for _ in range(hands):
            play_a_voided_hand(table.ask)
        return table.daemon.journal.last_seq
    finally:
        table.daemon.close()


def renumber_last_record(state: Path, seq: int) -> int:
    """The last record's seq as stored becomes ``seq`` (what a failing disk that wrote over the
    last leaf's cell leaves: the b-tree still in order, its rowid another number); the triggers
    are put back as they were. The last seq before."""
    connection = sqlite3.connect(journal_path(state), isolation_level=None)
    try:
        (last,), = connection.execute("SELECT MAX(seq) FROM journal")
        connection.execute("DROP TRIGGER journal_no_update")
        connection.execute("UPDATE journal SET seq = ? WHERE seq = ?", (seq, last))
        connection.execute("CREATE TRIGGER journal_no_update BEFORE UPDATE ON journal BEGIN "
                           "SELECT RAISE(ABORT, 'the journal is append-only: UPDATE refused'); "
                           "END")
    finally:
        connection.close()
    return int(last)


@pytest.mark.parametrize("stored", [2**53, 2**63 - 1], ids=["past-the-wire", "max-seq"])
def test_a_stored_end_past_any_seq_is_salvaged_or_refused_never_a_traceback(
        tmp_path: Path, stored: int) -> None:
    state = a_played_table(tmp_path)
    renumber_last_record(state, stored)
    try:
        done = quarantine(state, "a failing disk")
    except QuarantineRefused as refused:
        assert journal_path(state).is_file(), "refused, yet the journal was moved"
        assert "restore" in str(refused).lower() or "cannot" in str(refused).lower()
        return
    with Journal.open_readonly(journal_path(state)) as fresh:
        first = next(fresh.records())
    assert first.seq == done.record.archived_seq + 1
    assert first.seq < 2**53, f"the new journal's seqs begin at {first.seq}"


@pytest.mark.xfail(strict=True, reason="journal_quarantine._replayed rebuilds the hand in play "
                   "from the first or the last table opening, and a hand whose hand_started is "
                   "on a damaged page fails both: the quarantine voids nothing, though the "
                   "records read after the damage name the hand (locked, its contribution on "
                   "the meter carried over): its wagers are never returned in the record")
def test_a_hand_in_play_whose_start_is_on_a_damaged_page_is_still_voided(
        tmp_path: Path) -> None:
    config = run_config(tmp_path)
    path = journal_path(tmp_path / "state")
    with zmq.Context() as context:
        play_hands(tmp_path, config, context, 3)
        table = Daemon(tmp_path, config, context)
        table.daemon.start()
        try:
            play_a_hand(table.ask)                      # locked: the meter took its share
            in_play = table.daemon.table.hand_id
        finally:
            table.daemon.close()
    with Journal.open_readonly(path) as journal:
        records = list(journal.records())
    started = next(record for record in records
                   if record.type == "hand_started" and record.hand_id == in_play)
    data = path.read_bytes()
    page = data.find(started.hash.encode()) // PAGE    # its leaf: the disk writes over it
    after = [record for record in records if record.seq > started.seq
             and data.find(record.hash.encode()) // PAGE != page]
    assert any(record.hand_id == in_play for record in after), \
        "every record of the hand in play is on the damaged page: nothing names it"
    with path.open("r+b") as file:
        file.seek(page * PAGE)
        file.write(b"\xa5" * PAGE)
    done = quarantine(tmp_path / "state", "disk damage", by="sam")
    assert done.unreadable, "the damaged page lost no record: nothing to test"
    assert done.voided is not None and done.voided.hand_id == in_play, (
        f"hand {in_play} was in play (records {[r.seq for r in after]} name it), yet the "
        f"quarantine voided {done.voided!r}")


def test_a_continuing_journal_with_a_damaged_first_page_is_salvaged(tmp_path: Path) -> None:
    config = run_config(tmp_path)
    state = tmp_path / "state"
    path = journal_path(state)
    with zmq.Context() as context:
        play_hands(tmp_path, config, context, 3)
        # A table's first journal after a long life (200,000 records take an hour to play:
        # its last record is renumbered so): broken, and quarantined.
        renumber_last_record(state, 200_000)
        assert quarantine(state, "the first break").record.archived_seq == 200_000
        table = Daemon(tmp_path, config, context)
        table.daemon.start()
        try:
            assert table.ask(command="adjust_meter", amount=table.daemon.table.meter,
                             reason="confirmed", supervisor=True)["ok"]
        finally:
            table.daemon.close()
        play_hands(tmp_path, config, context, 4)
    with Journal.open_readonly(path) as journal:
        records = list(journal.records())
    assert records[0].seq == 200_001
    data = path.read_bytes()
    first_page = data.find(records[0].hash.encode()) // PAGE
    readable = [record for record in records
                if data.find(record.hash.encode()) // PAGE != first_page]
    assert len(readable) > 50 and len(data) // PAGE > 8
    with path.open("r+b") as file:                     # the disk fails under its first leaf
        file.seek(first_page * PAGE)
        file.write(b"\xa5" * PAGE)
    try:
        done = quarantine(state, "disk damage", by="sam")
    except QuarantineRefused as refused:
        raise AssertionError(f"{len(readable)} of {len(records)} records are on sound pages, "
                             f"yet: {refused}") from None
    assert done.records_read >= len(readable)


def test_a_root_page_that_points_to_itself_is_read_once(tmp_path: Path) -> None:
    import struct

    from controller.daemon.journal_salvage import SalvagedJournal

    config = run_config(tmp_path)
    path = journal_path(tmp_path / "state")
    with zmq.Context() as context:
        play_hands(tmp_path, config, context, 6)
    connection = sqlite3.connect(path)
    try:
        (root,), = connection.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'journal'")
    finally:
        connection.close()
    data = bytearray(path.read_bytes())
    header = (root - 1) * PAGE
    assert data[header] == 0x05, "the journal's root is a leaf: nothing to loop"
    data[header + 8:header + 12] = struct.pack(">I", root)   # its right-most child: itself
    path.write_bytes(bytes(data))
    with SalvagedJournal(path) as journal:
        most = journal._most_records()
        seen: list[int] = []
        for record in journal.records():
            seen.append(record.seq)
            assert len(seen) < 2 or seen[-1] > seen[-2], (
                f"seq {seen[-1]} read after seq {seen[-2]}: the salvage goes round the loop")
            assert len(seen) <= most, f"{len(seen)} records read from a file that holds {most}"


def test_committed_records_past_a_damaged_frame_of_the_log_hold_the_table(
        tmp_path: Path) -> None:
    context = zmq.Context()
    cut = tmp_path / "cut"
    try:
        table = Daemon(tmp_path, run_config(tmp_path), context)
        table.daemon.start()
        try:
            for _ in range(3):
                play_a_voided_hand(table.ask)
            # The power cut: the files as they are on disk (each commit synced), the log
            # not yet checkpointed into the database.
            shutil.copytree(tmp_path / "state", cut / "state")
            journaled = table.daemon.journal.last_seq
        finally:
            table.daemon.close()
        log = Path(f"{journal_path(cut / 'state')}-wal")
        data = bytearray(log.read_bytes())
        frames = (len(data) - WAL_HEADER) // (FRAME_HEADER + PAGE)
        assert frames > 10, f"the log holds {frames} frames: the cut came after a checkpoint"
        # A failing disk writes over 16 bytes of a page in the middle of the log.
        at = WAL_HEADER + frames // 2 * (FRAME_HEADER + PAGE) + FRAME_HEADER + 100
        data[at:at + 16] = b"\xa5" * 16
        log.write_bytes(bytes(data))
        Path(f"{journal_path(cut / 'state')}-shm").unlink(missing_ok=True)
        with Journal.open_readonly(journal_path(cut / "state")) as damaged:
            visible = damaged.stored_end()
        assert type(visible) is int, visible
        assert visible < journaled, "the damaged frame hid no record: nothing to test"

        assert_held_or_refused(cut, tmp_path / "table.toml", context,
                               f"records {visible + 1} to {journaled} were committed and are "
                               f"gone")
        done = quarantine(cut / "state", "a damaged log", by="sam")     # the way out
        assert done.record.archived_seq >= journaled, (
            f"the new journal continues after seq {done.record.archived_seq}: seqs up to "
            f"{journaled} were journaled and published already")
    finally:
        context.term()


def test_a_root_page_reverted_by_a_lost_write_holds_the_table(tmp_path: Path) -> None:
    config = run_config(tmp_path)
    path = journal_path(tmp_path / "state")
    with zmq.Context() as context:
        before = play_hands(tmp_path, config, context, 3)
        connection = sqlite3.connect(path)
        try:
            (root,), = connection.execute(
                "SELECT rootpage FROM sqlite_master WHERE name = 'journal'")
            (page,), = connection.execute("PRAGMA page_size")
        finally:
            connection.close()
        as_it_was = path.read_bytes()[(root - 1) * page:root * page]
        assert as_it_was[0] == 0x05, "the journal's root is a leaf: no older root to write"
        journaled = play_hands(tmp_path, config, context, 3)
        with path.open("r+b") as file:                 # the disk writes the old root back
            file.seek((root - 1) * page)
            file.write(as_it_was)
        with Journal.open_readonly(path) as reverted:
            reached = reverted.stored_end()
        assert type(reached) is int, reached
        assert before <= reached < journaled, "the old root reaches every record: nothing lost"
        assert_held_or_refused(tmp_path, config, context,
                               f"seqs {reached + 1} to {journaled} are on pages the b-tree no "
                               f"longer reaches")
    done = quarantine(tmp_path / "state", "a lost write", by="sam")   # the way out
    assert done.record.archived_seq >= journaled, (
        f"the new journal continues after seq {done.record.archived_seq}: seqs "
        f"{done.record.archived_seq + 1} to {journaled} were journaled and published already")

"""Red team 12: the journal's start-up checks (the write-ahead log read as bytes, SQLite's
quick_check) attacked as a faulty disk, a power cut and a hostile file in the state dir.

Each test states the behaviour the project promises and is marked xfail (strict) while the
hole is open: a fix turns it into a pass, and strict makes the suite say so."""

from __future__ import annotations

import os
import shutil
import sqlite3
import threading
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
import zmq

from controller.stream.journal import Journal, journal_path
from controller.stream.write_ahead_log import frames_lost

from tests.support.daemon import play_a_voided_hand, run_config
from tests.support.daemon import Daemon
from tests.support.wal import FRAME_HEADER, PAGE, WAL_HEADER, assert_held_or_refused



def power_cut_after_hands(tmp_path: Path, context: zmq.Context[Any], hands: int) -> tuple[
        Path, int]:
    """The state dir as a power cut leaves it after ``hands`` hands (each commit synced, the
    first hand checkpointed into the file, the others' frames in the log only), and the last
    seq the table journaled."""
    cut = tmp_path / "cut"
    table = Daemon(tmp_path, run_config(tmp_path), context)
    table.daemon.start()
    try:
        for hand in range(hands):
            if hand == 1:  # what SQLite's automatic checkpoint does on a table that ran a while
                with closing(sqlite3.connect(journal_path(tmp_path / "state"))) as other:
                    other.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            play_a_voided_hand(table.ask)
        shutil.copytree(tmp_path / "state", cut / "state")
        journaled = table.daemon.journal.last_seq
    finally:
        table.daemon.close()
    Path(f"{journal_path(cut / 'state')}-shm").unlink(missing_ok=True)
    return cut, journaled


def visible_seq(state: Path) -> int:
    with Journal.open_readonly(journal_path(state)) as journal:
        stored = journal.stored_end()
    assert type(stored) is int, stored
    return stored


# --- a disk that wrote over the log's header -----------------------------------------------


@pytest.mark.xfail(strict=True, reason="a log header that fails its checksum makes SQLite drop "
                                       "every committed frame; frames_lost calls that no loss")
@pytest.mark.parametrize(("at", "bit"), [(3, 0x02), (10, 0x01), (15, 0x01)],
                         ids=["magic", "page-size", "checkpoint-sequence"])
def test_committed_frames_behind_a_damaged_log_header_hold_the_table(
        tmp_path: Path, at: int, bit: int) -> None:
    context = zmq.Context()
    try:
        cut, journaled = power_cut_after_hands(tmp_path, context, 3)
        log = Path(f"{journal_path(cut / 'state')}-wal")
        data = bytearray(log.read_bytes())
        assert (len(data) - WAL_HEADER) // (FRAME_HEADER + PAGE) > 10, "checkpointed already"
        # One bit of the header flips: SQLite then reads no frame of the log at all.
        data[at] ^= bit
        log.write_bytes(bytes(data))
        visible = visible_seq(cut / "state")
        assert visible < journaled, "the damaged header hid no record: nothing to test"

        assert_held_or_refused(cut, tmp_path / "table.toml", context,
                               f"records {visible + 1} to {journaled} were committed and are "
                               f"gone with the log's header")
    finally:
        context.term()


# --- a FIFO where the log should be ----------------------------------------------------------


def test_a_fifo_as_the_log_does_not_hang_the_start(tmp_path: Path) -> None:
    database = tmp_path / "journal.sqlite3"
    database.write_bytes(b"")
    fifo = Path(f"{database}-wal")
    os.mkfifo(fifo)
    answer: list[str | None] = []
    check = threading.Thread(target=lambda: answer.append(frames_lost(database)), daemon=True)
    check.start()
    check.join(timeout=30)  # a bound on a hang, not a synchronisation: a fix returns at once
    hung = check.is_alive()
    if hung:  # a writer that closes at once gives the blocked reader its end of file
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        check.join()
    assert not hung, "the check of the log blocked on a FIFO: the daemon never starts"


# --- a power cut in the middle of the last transaction's frames --------------------------------


@pytest.mark.xfail(strict=True, reason="a disk that wrote the last transaction's commit frame "
                                       "but not a frame before it (one fsync per commit) holds "
                                       "a healthy table: that commit never returned")
def test_a_commit_frame_written_before_its_own_transactions_frames_does_not_hold_the_table(
        tmp_path: Path) -> None:
    context = zmq.Context()
    try:
        cut, journaled = power_cut_after_hands(tmp_path, context, 2)
        log = Path(f"{journal_path(cut / 'state')}-wal")
        data = bytearray(log.read_bytes())
        frames = (len(data) - WAL_HEADER) // (FRAME_HEADER + PAGE)
        commits = [frame for frame in range(frames) if int.from_bytes(
            data[WAL_HEADER + frame * (FRAME_HEADER + PAGE) + 4:][:4], "big")]
        # The cut came while the last transaction of several frames was written: the log ends
        # at its commit frame, which reached the disk; the frame before it (same transaction,
        # same un-synced batch) did not.
        last = max(after for before, after in zip(commits, commits[1:]) if after - before >= 2)
        del data[WAL_HEADER + (last + 1) * (FRAME_HEADER + PAGE):]
        at = WAL_HEADER + (last - 1) * (FRAME_HEADER + PAGE)
        data[at:at + FRAME_HEADER + PAGE] = bytes(FRAME_HEADER + PAGE)
        log.write_bytes(bytes(data))
        assert visible_seq(cut / "state") < journaled, "the torn transaction hid no record"

        after = Daemon(cut, tmp_path / "table.toml", context)
        after.daemon.start()
        try:
            status: dict[str, Any] = after.daemon.journal_status()
            assert status["broken_at"] is None, (
                f"a power cut tore the last transaction (its commit never returned), yet the "
                f"table is held: {status['broken']}")
        finally:
            after.daemon.close()
    finally:
        context.term()

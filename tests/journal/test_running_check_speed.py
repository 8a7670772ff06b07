"""Red team 13: this session's speed changes to the running chain check
(controller/daemon/chain_watch.py: a record as the daemon wrote it is not hashed again; the
sweep's batch sized by :func:`sweep_size` for a pass within :data:`PASS_S`), attacked as a
hostile process with write access to the journal's file would.

Each test states the behaviour the project promises; all three findings are fixed (a message
of another storage class is read as bytes no hash matches, :func:`as_stored`; the chain is
checked at least every second, each pass within half the minute promised)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from controller.core.table_events import TableClosed
from controller.daemon.chain_watch import FOUND_WITHIN_S, ChainWatch, check_interval, sweep_size
from controller.stream.journal import GENESIS_HASH, Journal, chain_hash, journal_path

from tests.support.running_check import TABLE, journal_of, rewrite, check


@pytest.mark.parametrize(("where", "edit"), [
    ("a record just written (the follow)", "CAST(message AS TEXT)"),
    ("a record already verified (the sweep)", "CAST(message AS TEXT)"),
    # SQLite's || makes TEXT: the plainest edit of a message crashes the check as well
    ("a record just written (the follow)", "message || ' '"),
], ids=["follow", "sweep", "follow-edited"])
def test_a_message_stored_as_text_is_a_break_not_a_crash(tmp_path: Path, where: str,
                                                         edit: str) -> None:
    journal = journal_of(tmp_path, 5)
    if "sweep" in where:
        watch = ChainWatch(journal, 0, GENESIS_HASH)
        assert watch.check() is None and watch.verified_through == 5
    else:  # the start-up check verified seq 2; 3 to 5 are the daemon's since
        watch = ChainWatch(journal, 2, journal.hash_at(2) or "")
    rewrite(tmp_path, f"UPDATE journal SET message = {edit} WHERE seq = 3", ())
    broken = watch.check()
    assert broken is not None and broken.seq == 3 and "altered" in broken.reason
    journal.close()


def test_a_message_stored_as_text_breaks_the_start_up_check_and_verify(tmp_path: Path) -> None:
    # The start-up check and `journal verify` read records whole (their bytes(message) raised
    # TypeError on TEXT, and the daemon could not start): now a break at that seq.
    journal_of(tmp_path, 5).close()
    rewrite(tmp_path, "UPDATE journal SET message = CAST(message AS TEXT) WHERE seq = 3", ())
    with Journal.open_readonly(journal_path(tmp_path)) as journal:
        report = journal.verify()
    assert not report.ok and report.first_bad_seq == 3 and "altered" in report.reason


def found_after(tmp_path: Path, records: int, appended: int, heartbeat_s: float) -> int:
    """The checks after which a record rewritten just behind the sweep (its message and
    hash, the next record left pointing at the hash it had) is found, on a journal of
    ``records`` records, verified at start, to which the table appends ``appended`` records
    a check."""
    journal = journal_of(tmp_path, records)
    watch = ChainWatch(journal, journal.last_seq, journal.last_hash)
    assert check(journal, watch, heartbeat_s) is None   # the pass reads seq 1 to swept
    swept = sweep_size(records, check_interval(heartbeat_s))
    with closing(sqlite3.connect(journal_path(tmp_path))) as other:
        prev_hash, message = other.execute("SELECT prev_hash, message FROM journal "
                                           "WHERE seq = ?", (swept,)).fetchone()
    message = bytes(message).replace(b"closer", b"opener")
    rewrite(tmp_path, "UPDATE journal SET message = ?, hash = ? WHERE seq = ?",
            (message, chain_hash(prev_hash, message), swept))
    for beats in range(1, 10 * records):
        if appended:
            journal.append_all([TableClosed("dealt on")] * appended, table_id=TABLE,
                               hand_id=None)
        broken = check(journal, watch, heartbeat_s)
        if broken is not None:
            assert broken.seq == swept + 1 and "prev_hash" in broken.reason
            journal.close()
            return beats
    raise AssertionError("the rewritten record was never found")


@pytest.mark.parametrize("appended", [0, 200], ids=["still", "dealing"])
def test_a_record_rewritten_behind_the_pass_is_found_within_a_minute(
        tmp_path: Path, appended: int) -> None:
    # (before the fix: found after 61 and 72 heartbeats, each pass lasting the whole minute)
    heartbeat_s = 1.0
    checks = found_after(tmp_path, 30_000, appended, heartbeat_s)
    assert checks * check_interval(heartbeat_s) <= FOUND_WITHIN_S, f"found after {checks}"


def test_at_the_longest_heartbeat_a_rewrite_is_still_found_within_a_minute(
        tmp_path: Path) -> None:
    # (before the fix: checked only at heartbeats, found after 3 of them: 180 s)
    heartbeat_s = 60.0
    checks = found_after(tmp_path, 10_000, 0, heartbeat_s)
    assert checks * check_interval(heartbeat_s) <= FOUND_WITHIN_S, f"found after {checks}"

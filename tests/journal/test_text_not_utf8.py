"""Red team 14: red team 13's fixes (commit 314c022) attacked as a hostile process with write
access to the journal's file would: a message stored as TEXT that is not valid UTF-8 (which
Python's sqlite3 refuses to decode, before :func:`as_stored` ever sees it), and the chain
check's new cadence (at every heartbeat and at least every :data:`CHECK_EVERY_S`).

Each test states the behaviour the project promises; all four findings are fixed (text that is
not UTF-8 read as stored, `Journal._rows`; the sweep's least and most records scaled to a
check's interval, `sweep_size`)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq

from controller.daemon.chain_watch import (
    CHECK_EVERY_S,
    SWEEP_MOST,
    ChainWatch,
    check_interval,
    sweep_size,
)
from controller.settings.table_config import Stream
from controller.stream.journal import GENESIS_HASH, Journal, journal_path

from tests.support.daemon import Daemon, config_file, started
from tests.support.running_check import journal_of, rewrite

ROOT = Path(__file__).resolve().parents[2]

#: Edits that leave a message TEXT which is not valid UTF-8: SQLite stores TEXT as it is given
#: (it never checks the encoding), and Python's sqlite3 raises OperationalError reading it.
NOT_UTF8 = {
    # any edit of a message with SQLite's || and a stray byte (a faulty device's write, a
    # hostile hand): the message as it was, plus one byte, read back as TEXT
    "edited": "CAST(message || X'ff' AS TEXT)",
    # a message replaced by bytes that were never UTF-8
    "replaced": "CAST(X'ff7b7d' AS TEXT)",
}


@pytest.fixture
def context() -> Iterator[zmq.Context[Any]]:
    context = zmq.Context()
    yield context
    context.term()


def not_utf8(state_dir: Path, edit: str, seq: int) -> None:
    rewrite(state_dir, f"UPDATE journal SET message = {edit} WHERE seq = ?", (seq,))


# --- 1. a message stored as TEXT that is not UTF-8 ---------------------------------------------

@pytest.mark.parametrize("edit", NOT_UTF8.values(), ids=NOT_UTF8.keys())
def test_a_message_not_utf8_is_a_break_in_verify_not_a_crash(tmp_path: Path, edit: str) -> None:
    journal_of(tmp_path, 5).close()
    not_utf8(tmp_path, edit, 3)
    with Journal.open_readonly(journal_path(tmp_path)) as journal:
        report = journal.verify()
    assert not report.ok and report.first_bad_seq == 3 and "altered" in report.reason


@pytest.mark.parametrize("action", ["verify", "show"])
def test_journal_verify_and_show_name_the_bad_record_without_a_traceback(
        tmp_path: Path, action: str) -> None:
    journal_of(tmp_path, 5).close()
    not_utf8(tmp_path, NOT_UTF8["edited"], 3)
    done = subprocess.run([sys.executable, "-m", "controller.cli.main", "journal", action,
                           "--state-dir", str(tmp_path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert "Traceback" not in done.stderr, done.stderr[-600:]
    if action == "verify":
        assert done.returncode in (1, 2) and "3" in done.stdout + done.stderr
    else:  # show shows (verify judges): the record as stored, escaped, no control byte
        assert done.returncode == 0, done.stderr
        (line,) = [line for line in done.stdout.splitlines() if line.split()[0] == "3"]
        assert "\\x00str\\x00" in line and "\x00" not in line, line


def test_the_daemon_starts_held_over_a_message_not_utf8(tmp_path: Path,
                                                        context: zmq.Context[Any]) -> None:
    config = config_file(tmp_path)
    with started(tmp_path, config, context) as table:
        assert table.ask(command="open")["ok"]
    not_utf8(tmp_path / "state", NOT_UTF8["edited"], 2)
    table = Daemon(tmp_path, config, context)
    try:
        table.daemon.start()
        broken = table.daemon.journal_broken
        assert broken is not None and broken.seq == 2, broken
    finally:
        table.daemon.close()


@pytest.mark.parametrize("where", ["follow", "sweep"])
def test_the_running_check_finds_a_message_not_utf8_altered_where_it_is(
        tmp_path: Path, where: str) -> None:
    journal = journal_of(tmp_path, 5)
    if where == "sweep":
        watch = ChainWatch(journal, 0, GENESIS_HASH)
        assert watch.check() is None and watch.verified_through == 5
    else:  # the start-up check verified seq 1; 2 to 5 are the daemon's since
        watch = ChainWatch(journal, 1, journal.hash_at(1) or "")
    not_utf8(tmp_path, NOT_UTF8["edited"], 3)
    broken = watch.check()
    journal.close()
    # (today: "the journal cannot be read from about seq 1 (or 2) (OperationalError: a damaged
    # page, or a failing disk)": held from a record that is sound, on a disk that is fine)
    assert broken is not None and broken.seq == 3 and "altered" in broken.reason, broken


# --- 2. the cadence ------------------------------------------------------------------------------

def test_the_check_never_reads_more_a_second_than_at_its_slowest_cadence() -> None:
    # The config accepts any heartbeat_s > 0. A check re-reads at least SWEEP_LEAST records
    # (measured: 0.74 ms on a 150,000-record journal), and runs every check_interval(heartbeat_s):
    # at 0.001 s that is three quarters of the loop's time, the table's turns starved.
    assert Stream(heartbeat_s=0.001).heartbeat_s == 0.001
    records = 150_000
    most = SWEEP_MOST / CHECK_EVERY_S  # records a second at the cadence the docs promise
    for heartbeat_s in (1.0, 0.1, 0.01, 0.001):
        interval = check_interval(heartbeat_s)
        per_second = sweep_size(records, interval) / interval
        assert per_second <= most, f"heartbeat_s {heartbeat_s}: {per_second:.0f} records/s"

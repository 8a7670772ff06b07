"""Red team 15: red team 14's fixes (commits e794c66 and f9739a2) attacked as a hostile process
with write access to the journal's file, a faulty device and a power cut would: text that is not
UTF-8 read again as stored (``Journal._rows``), ``journal show`` escaping a damaged message, and
the chain check's sweep scaled to its interval (``sweep_size``).

Each test states the behaviour the project promises. Fixed: a held table's hash that is not a
hash, `journal show` (and `--json`) escaping every column, the bytes of text that is not UTF-8
shown as stored, checks no closer than the loop's turn. Open, strict expected failures: the
retry of any failed query, and the quarantine's reading of text that is not UTF-8."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq

from controller.daemon.chain_watch import PASS_S, check_interval, sweep_size
from controller.settings.table_config import Stream
from controller.stream.journal import Journal, journal_path

from tests.support.daemon import config_file, started
from tests.support.running_check import journal_of, rewrite

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def context() -> Iterator[zmq.Context[Any]]:
    context = zmq.Context()
    yield context
    context.term()


def show(state_dir: Path, *options: str, strict_terminal: bool = False
         ) -> subprocess.CompletedProcess[bytes]:
    """``journal show`` as an operator runs it. ``strict_terminal``: stdout encodes strictly,
    as under a locale such as en_US.UTF-8 (Python uses surrogateescape only under C/POSIX)."""
    environment = dict(os.environ)
    if strict_terminal:
        environment["PYTHONIOENCODING"] = "utf-8:strict"
    return subprocess.run([sys.executable, "-m", "controller.cli.main", "journal", "show",
                           *options, "--state-dir", str(state_dir)], cwd=ROOT,
                          capture_output=True, timeout=60, env=environment)


# --- 1. journal show --json over a message that is not UTF-8 -------------------------------------

def test_show_json_over_a_message_not_utf8_ends_without_a_traceback(tmp_path: Path) -> None:
    journal_of(tmp_path, 5).close()
    rewrite(tmp_path, "UPDATE journal SET message = CAST(message || X'ff' AS TEXT) "
                      "WHERE seq = ?", (3,))
    done = show(tmp_path, "--json")
    assert b"Traceback" not in done.stderr, done.stderr[-600:]
    assert done.returncode in (0, 2), done.returncode


# --- 2. render escapes the message only ---------------------------------------------------------

@pytest.mark.parametrize("column", ["ts", "type", "hand_id"])
def test_show_over_a_column_not_utf8_ends_without_a_traceback(tmp_path: Path,
                                                              column: str) -> None:
    journal_of(tmp_path, 5).close()
    rewrite(tmp_path, f"UPDATE journal SET {column} = CAST(coalesce({column}, '') || X'ff' "
                      "AS TEXT) WHERE seq = ?", (3,))
    done = show(tmp_path, strict_terminal=True)
    assert b"Traceback" not in done.stderr, done.stderr[-600:]
    assert done.returncode == 0, done.stderr[-600:]


@pytest.mark.parametrize("column", ["ts", "type", "hand_id"])
@pytest.mark.parametrize("stored", ["char(27) || '[2J'", "X'9b'"], ids=["escape", "not-utf8"])
def test_show_lets_no_control_byte_of_any_column_reach_the_terminal(
        tmp_path: Path, column: str, stored: str) -> None:
    journal_of(tmp_path, 5).close()
    rewrite(tmp_path, f"UPDATE journal SET {column} = CAST(coalesce({column}, '') || {stored} "
                      "AS TEXT) WHERE seq = ?", (3,))
    done = show(tmp_path)
    assert done.returncode == 0, done.stderr[-600:]
    assert b"\x1b" not in done.stdout and b"\x9b" not in done.stdout, done.stdout[-400:]


# --- 3. the retry runs only a query whose text could not be decoded ----------------------------

def test_a_query_failing_for_another_reason_than_its_text_is_not_run_again(
        tmp_path: Path) -> None:
    journal_of(tmp_path, 5).close()
    with Journal.open_readonly(journal_path(tmp_path)) as journal:
        connection: sqlite3.Connection = journal._connection
        runs: list[str] = []
        connection.set_trace_callback(runs.append)
        # every statement fails as a locked database or a failing disk makes it fail: an
        # OperationalError that has nothing to do with how its text is decoded
        connection.set_progress_handler(lambda: 1, 1)
        with pytest.raises(sqlite3.OperationalError):
            journal.last_record()
        connection.set_progress_handler(None, 1)
        assert len(runs) == 1, runs


# --- 4. the sweep below a millisecond -----------------------------------------------------------

def test_a_pass_lasts_at_most_pass_s_at_any_accepted_heartbeat(
        tmp_path: Path, context: zmq.Context[Any]) -> None:
    with started(tmp_path, config_file(tmp_path), context) as table:
        # however soon the next check is due, the loop's poll sleeps at least this long
        table.daemon._next_heartbeat = table.daemon._next_chain_check = table.daemon.clock()
        least_wait_s = table.daemon._poll_timeout() / 1000
    assert least_wait_s >= 0.001
    records = 150_000
    for heartbeat_s in (0.001, 0.0005, 0.0001, 0.00001):
        assert Stream(heartbeat_s=heartbeat_s).heartbeat_s == heartbeat_s  # accepted
        interval = check_interval(heartbeat_s)
        checks_a_second = 1 / max(interval, least_wait_s)
        pass_s = records / (sweep_size(records, interval) * checks_a_second)
        assert pass_s <= PASS_S, f"heartbeat_s {heartbeat_s}: a pass lasts {pass_s:.0f} s"


# --- 5. the quarantine reads text not UTF-8 as the journal does -----------------------------------

def test_the_quarantine_names_a_record_not_utf8_altered_where_verify_does(tmp_path: Path) -> None:
    journal_of(tmp_path, 5).close()
    # any edit of a message with SQLite's || (BLOB || BLOB is TEXT) and a stray byte
    rewrite(tmp_path, "UPDATE journal SET message = message || X'ff' WHERE seq = ?", (3,))
    with Journal.open_readonly(journal_path(tmp_path)) as journal:
        report = journal.verify()
    assert report.first_bad_seq == 3 and "altered" in report.reason, report
    done = subprocess.run([sys.executable, "-m", "controller.cli.main", "journal", "quarantine",
                           "--state-dir", str(tmp_path), "--reason", "red team 15",
                           "--by", "alice"], cwd=ROOT, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr[-600:]
    out = done.stdout.decode(errors="replace")
    assert "broken at seq 3: hash does not match" in out and "damaged pages" not in out, out
    assert "closer 2" not in out, out  # the altered record's text is evidence, not a reason


# --- 6. a hash read with surrogates reaches the heartbeat ----------------------------------------

def test_a_held_table_beats_when_the_hash_before_the_break_is_not_utf8(
        tmp_path: Path, context: zmq.Context[Any]) -> None:
    with started(tmp_path, config_file(tmp_path), context) as table:
        for command in ("open", "close", "open", "close"):
            assert table.ask(command=command)["ok"]
        daemon = table.daemon
        assert daemon.chain is not None and daemon.journal.last_seq > 3
        # a pass that re-reads the chain in slices (any journal over SWEEP_LEAST records) has
        # got past seq 2 when another process rewrites seq 2's hash and seq 3's message
        assert daemon.chain.check(sweep=2) is None
        rewrite(tmp_path / "state", "UPDATE journal SET hash = CAST(hash || X'ff' AS TEXT) "
                                    "WHERE seq = ?", (2,))
        rewrite(tmp_path / "state", "UPDATE journal SET message = message || 'x' "
                                    "WHERE seq = ?", (3,))
        daemon.check_chain()
        assert daemon.journal_broken is not None and daemon.journal_broken.seq == 3
        daemon._next_heartbeat = daemon.clock()  # the next heartbeat is due
        daemon._tick()  # held, the daemon beats on: status, the break's seq, the quarantine


# --- 7. a message not UTF-8 shown with bytes the file does not hold ------------------------------

def test_show_shows_a_message_not_utf8_with_the_bytes_stored(tmp_path: Path) -> None:
    journal_of(tmp_path, 5).close()
    rewrite(tmp_path, "UPDATE journal SET message = CAST(message || X'ff' AS TEXT) "
                      "WHERE seq = ?", (3,))
    done = show(tmp_path)
    assert done.returncode == 0, done.stderr[-600:]
    (line,) = [line for line in done.stdout.splitlines() if line.split()[0] == b"3"]
    assert line.count(b"\\xff") == 1 and b"\\xed" not in line, line

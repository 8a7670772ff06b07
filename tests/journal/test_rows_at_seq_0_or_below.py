"""Red team 22: red team 21's mends (75f5f15) broken again. Another process with write access
to the journal's file edits it while the daemon is stopped (its triggers dropped and put back,
or its table rebuilt with ``seq NUMERIC``, as red teams 20 and 21 did), then the daemon starts,
a client withdraws, or a supervisor quarantines.

Holes, all mended in session 14 (each a test that passes now): the recall reads the last
records by position, from the journal's first (seq 1 and up, integers only), not only the
verified ones; a row before the journal's first record breaks the chain (at start and
while it runs); the salvage reads only rows whose seq is an integer and passes over the
rest:

* a held journal (one record altered at seq 1, every later record the daemon's own, sound):
  the command channel now recalls request ids only up to ``verified_at_start`` (0 here), so a
  request the daemon carried out at seq 7, and answered so before the restart, is answered
  *withdrawn* (never carried out) after it: the answer does not stay true across a restart;
* a row another process put at seq 0 or -1 in the journal's own table (a forged
  ``command_accepted`` copied from another table's journal): the start-up check reads from
  seq 1 and passes (older than 75f5f15, as ``journal verify`` passing is), but the recall now
  reads from ``first_seq - 1``, so a request never carried out at this table is answered
  carried out at seq 0 or -1, and stays so after the running check holds the table;
* one row at seq 2.5 (or 0.5) in a table rebuilt with ``seq NUMERIC``: the quarantine's salvage
  now stops at the first seq that is no integer and names every seq after it unreadable
  ("damaged pages"), so the sound records after it (found, not verified) are dropped: the
  meter journaled at seq 4 is no longer carried (before 75f5f15: "meter 500000 (from
  meter_changed seq 4 ...)", a supervisor confirms it); at 0.5 no record is read at all and the
  quarantine refuses (exit 2, "restore the journal from a backup") where it quarantined.

Tried and held: the journal's open, ``stored_end`` and the running check on a sound journal
of 2,000,000 records (the integer-only first/last reads walk the rowid b-tree from its end and
stop at once: 0.05 ms, 0.03 ms; open 0.7 ms); a REAL row at 1e300 or a TEXT row after the
daemon's (the quarantine keeps all six, continues at the file's size bound); rows at seq 0,
-1 or -0.5 at the quarantine (the records 1-6 kept, broken at 7 by the schema); the recall on
a continued journal and past 20,000 records (bounded by ``first_seq`` and
``verified_at_start`` as before)."""

from __future__ import annotations

from pathlib import Path

import pytest
import zmq

from tests.support.daemon import beating
from tests.support.daemon import run_config
from tests.support.daemon import started
from tests.support.seq_types import other_process
from tests.support.seq_types import cli, rebuilt
from tests.support.seq_types import copy_first_record


def test_a_request_carried_out_is_not_answered_withdrawn_after_a_restart_on_a_held_journal(
        tmp_path: Path) -> None:
    with beating(tmp_path) as (table, _):
        assert table.ask(command="open", request_id="request-0")["ok"]
        assert table.ask(command="close", request_id="request-1")["ok"]  # seq 7
        before = table.ask(command="withdraw", requests=["request-1"])
        assert before["carried_out"] == {"request-1": 7}, before
    # the record at seq 1 altered (a column only): every record from seq 2 on is the daemon's
    other_process(tmp_path / "state", [("UPDATE journal SET ts = ts || ' ' WHERE seq = 1", ())])
    with zmq.Context() as context, started(tmp_path, run_config(tmp_path), context) as table:
        broken = table.daemon.journal_broken
        assert broken is not None and broken.seq == 1
        after = table.ask(command="withdraw", requests=["request-1"])
        # carried out, or refused as unknown: never "withdrawn, nothing was carried out"
        assert "request-1" not in after.get("withdrawn", []), after


@pytest.mark.parametrize("seq", ["0", "-1"])
def test_a_row_another_process_put_at_seq_0_or_below_is_no_request_carried_out(
        tmp_path: Path, seq: str) -> None:
    other_table = tmp_path / "other"
    other_table.mkdir()
    with beating(other_table) as (table, _):  # another journal: its seq 1 accepts the forgery
        assert table.ask(command="open", request_id="forged-request")["ok"]
    with beating(tmp_path) as (table, _):
        assert table.ask(command="open", request_id="request-0")["ok"]
    copy_first_record(tmp_path / "state", other_table / "state", seq)
    with zmq.Context() as context, started(tmp_path, run_config(tmp_path), context) as table:
        reply = table.ask(command="withdraw", requests=["forged-request"])
        assert reply["ok"] and reply["carried_out"] == {}, reply
        assert reply["withdrawn"] == ["forged-request"]


@pytest.mark.parametrize("seq", ["0", "-1"])
def test_the_daemon_holds_a_journal_with_a_row_at_seq_0_or_below(
        tmp_path: Path, seq: str) -> None:
    with beating(tmp_path) as (table, _):
        assert table.ask(command="open")["ok"]
    other_process(tmp_path / "state", [
        (f"INSERT INTO journal SELECT {seq}, ts, type, hand_id, message, prev_hash, hash "
         f"FROM journal WHERE seq = 1", ())])
    with zmq.Context() as context, started(tmp_path, run_config(tmp_path), context) as table:
        assert table.daemon.journal_broken is not None


def test_a_quarantine_keeps_the_meter_journaled_after_a_real_row_amid_the_integers(
        tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    with beating(tmp_path) as (table, _):
        assert table.ask(command="open")["ok"]  # meter_changed at seq 4: 500,000 cents
        assert table.ask(command="status")["state"]["meter"] == 500_000
    rebuilt(state_dir, "NUMERIC", "INSERT INTO journal SELECT 2.5, ts, type, hand_id, message, "
                                  "prev_hash, hash FROM journal WHERE seq = 2")
    status, said = cli("journal", "quarantine", "--state-dir", str(state_dir),
                       "--reason", "rebuilt by another process", "--by", "inspector")
    assert status == 0, said
    assert "meter 500000" in said and "meter none journaled" not in said, said


def test_a_table_with_a_real_row_before_seq_1_is_quarantined(tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    with beating(tmp_path) as (table, _):
        assert table.ask(command="open")["ok"]
    rebuilt(state_dir, "NUMERIC", "INSERT INTO journal SELECT 0.5, ts, type, hand_id, message, "
                                  "prev_hash, hash FROM journal WHERE seq = 1")
    status, said = cli("journal", "quarantine", "--state-dir", str(state_dir),
                       "--reason", "rebuilt by another process", "--by", "inspector")
    assert status == 0 and "meter 500000" in said, said

"""Red team 21: seqs that are no integers, at every reader of the journal's file but the two
4dcd957 mended (the running check and the start-up check). Another process rebuilds the
journal's table with ``seq REAL``, ``TEXT``, ``BLOB`` or ``NUMERIC`` (the rows copied, the
triggers put back, as red team 20 did) and the daemon, its replies and the CLI read it.

Holes, all mended in session 14 (each a test that passes now): every read of a seq from the
file takes only a seq stored as an integer (the journal's open, its last records, the
archives' and the quarantine's reads), and one stored as anything else is a break:

* a ``seq TEXT`` table: the daemon's start raises ``TypeError`` (``ChainWatch`` is made from
  ``Journal.first_seq``, the text ``'1'`` read by ``MIN(seq)``) instead of holding the table;
* a row another process put after the daemon's, while it runs, with a TEXT or BLOB seq (a
  ``seq NUMERIC`` or ``BLOB`` table): ``ValueError`` out of the running check, out of the
  daemon's turn (``Journal.stored_last_seq`` is ``int()`` of ``MAX(seq)``);
* a ``seq REAL`` table: the held table's status reply says the journal's seq as a float
  (``Journal.last_seq`` is the last row's seq as read), and ``withdraw`` answers a request id
  recalled from a record of the rebuilt table as carried out at a float seq;
* a row another process put after the daemon's that sorts last with a BLOB or TEXT seq (a
  ``seq BLOB`` or ``NUMERIC`` table): ``TypeError`` out of the daemon's start
  (``EventPublisher.hold`` takes ``min()`` of ``Journal.last_seq`` and an int);
* a row at a huge seq (``1e300`` in a ``NUMERIC`` table, or ``2**62`` in the journal's own
  table, its triggers put back: the schema is sound): the command channel recalls the request
  ids of the records before that seq, none, so a request carried out at a verified seq is
  answered as withdrawn (never carried out) to the client that asks;
* an archived journal whose table another process rebuilt with ``seq REAL``: found to be the
  one the quarantine read (its head compared with ``==``), then serving it raises
  ``TypeError`` (a float index into its kept hashes): the replay request fails, no gap names
  the records not served;
* ``lowball-table journal show`` on a table with a BLOB seq: ``TypeError`` out of ``render``
  (a bytes value takes no ``>8`` format), a traceback instead of the record shown;
* ``lowball-table journal quarantine`` on a rebuilt table: ``ValueError`` (``REAL``: the new
  journal's first seq made from a float bound) or ``TypeError`` (``TEXT``, ``BLOB``:
  ``SalvagedJournal.records`` compares the seq with an int), a traceback and no quarantine.

Tried and held: ``journal verify`` on every rebuild (REAL, TEXT, BLOB, NUMERIC; 1.0, '1',
x'01', 1e300, 'NaN', 2**64 as REAL, -0.0; first, last and out-of-order rows: broken at an
integer seq, exit 1); ``journal show --json``; the held table's heartbeat after a restart on a
rebuilt table, continued or not (its head is the last seq before the break, an int); a
``BLOB`` or ``NUMERIC`` table holding the daemon's integers (they stay integers: the schema
check breaks it, at an integer seq); an archive rebuilt with ``seq TEXT`` (not the one: its
single-file copy served). Seen and left alone: -0.0 in a ``NUMERIC`` table is stored as 0, which
``journal show`` never lists (it reads seq > 0; verify names seq 1 missing); a row at 1e300
after the daemon's makes the running check's reason spell a 301-digit seq."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq

from controller.stream.archive import Lost, Run
from controller.stream.journal import journal_path

from tests.support.daemon import beating
from tests.support.daemon import run_config
from tests.support.daemon import Daemon, started
from tests.support.seq_types import journal_of
from tests.support.seq_types import rebuilt, cli


#: copies the record at seq 3 at another seq (``{seq}``: an SQL literal)
_ANOTHER_LAST = ("INSERT INTO journal SELECT {seq}, ts, type, hand_id, message, prev_hash, hash "
                 "FROM journal WHERE seq = 3")


@contextlib.contextmanager
def restarted_on(tmp_path: Path, column: str, *then: str) -> Iterator[Daemon]:
    """A daemon that opened its table (a request id journaled), stopped, and started again on
    a journal whose table another process rebuilt with ``seq {column}`` meanwhile."""
    with beating(tmp_path) as (table, _):
        assert table.ask(command="open", request_id="request-1")["ok"]
    rebuilt(tmp_path / "state", column, *then)
    with zmq.Context() as context, started(tmp_path, run_config(tmp_path), context) as table:
        yield table


def test_the_daemon_holds_a_table_rebuilt_with_text_seqs(tmp_path: Path) -> None:
    with restarted_on(tmp_path, "TEXT") as table:
        broken = table.daemon.journal_broken
        assert broken is not None and broken.seq == 1
        assert "not an integer" in broken.reason


@pytest.mark.parametrize(("column", "seq"), [("NUMERIC", "'NaN'"), ("BLOB", "x'01'")])
def test_the_running_check_breaks_at_a_row_after_the_daemons_whose_seq_is_no_number(
        tmp_path: Path, column: str, seq: str) -> None:
    with beating(tmp_path) as (table, _):
        assert table.ask(command="open")["ok"]
        table.daemon.check_chain()  # what each heartbeat does first
        assert table.ask(command="status")["journal"]["verified_through"] == 6
        rebuilt(tmp_path / "state", column,
                _ANOTHER_LAST.format(seq=seq).replace("seq = 3", "seq = 6"))
        table.daemon.check_chain()  # today: ValueError, out of the daemon's turn
        journal = table.ask(command="status")["journal"]
        assert (journal["broken_at"], journal["verified_through"]) == (7, 6)


def test_the_status_of_a_table_rebuilt_with_real_seqs_says_integer_seqs(
        tmp_path: Path) -> None:
    with restarted_on(tmp_path, "REAL") as table:
        status = table.ask(command="status")
        assert status["journal"]["broken_at"] == 1
        assert type(status["seq"]) is int and type(status["journal"]["seq"]) is int


def test_a_withdrawal_on_a_table_rebuilt_with_real_seqs_answers_no_float_seq(
        tmp_path: Path) -> None:
    with restarted_on(tmp_path, "REAL") as table:
        reply = table.ask(command="withdraw", requests=["request-1"])
        # (since red team 23: a held table whose journal holds records past the verified
        # ones answers no withdrawal)
        assert reply["ok"] or "cannot be told" in reply.get("error", ""), reply
        assert all(type(seq) is int for seq in reply.get("carried_out", {}).values()), reply


@pytest.mark.parametrize(("column", "seq"), [("BLOB", "x'01'"), ("NUMERIC", "'NaN'")])
def test_the_daemon_holds_a_table_whose_last_seq_is_no_number(
        tmp_path: Path, column: str, seq: str) -> None:
    # The daemon's six records are sound and stay integers; the row after them sorts last.
    with restarted_on(tmp_path, column, _ANOTHER_LAST.format(seq=seq)) as table:
        broken = table.daemon.journal_broken
        assert broken is not None and broken.seq == 7


@pytest.mark.parametrize(("column", "seq"), [("NUMERIC", "1e300"), ("INTEGER", str(2**62))])
def test_a_request_carried_out_is_answered_so_after_a_row_at_a_huge_seq(
        tmp_path: Path, column: str, seq: str) -> None:
    # INTEGER: the table made again as the journal makes it, its schema sound.
    with restarted_on(tmp_path, column, _ANOTHER_LAST.format(seq=seq)) as table:
        assert table.ask(command="status")["journal"]["verified_through"] == 6
        reply = table.ask(command="withdraw", requests=["request-1"])
        # (since red team 23: a held table whose journal holds records past the verified
        # ones answers no withdrawal: the records before may be another process's too)
        assert "request-1" not in reply.get("withdrawn", []), reply
        assert reply.get("carried_out") == {"request-1": 1} \
            or "cannot be told" in reply.get("error", ""), reply


def test_an_archive_rebuilt_with_real_seqs_is_served_or_named_lost(tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    with beating(tmp_path) as (table, _):
        assert table.ask(command="open")["ok"]
    connection = sqlite3.connect(journal_path(state_dir), isolation_level=None)
    connection.execute("DROP TRIGGER journal_no_update")
    connection.execute("UPDATE journal SET message = message || x'20' WHERE seq = 5")
    connection.close()
    status, said = cli("journal", "quarantine", "--state-dir", str(state_dir),
                       "--reason", "an altered record", "--by", "inspector")
    assert status == 0, said
    archived = next((state_dir / "quarantine").glob("journal-*-broken-at-seq-5.sqlite3"))
    archived_copy = archived.parent / "journal.sqlite3"
    archived.rename(archived_copy)  # ``rebuilt`` edits the journal of a directory
    rebuilt(archived.parent, "REAL")
    archived_copy.rename(archived)
    with beating(tmp_path) as (table, _):
        publisher = table.daemon.publisher
        assert publisher is not None and table.daemon.journal.first_seq == 7
        served = list(publisher._archives.serve(0, 6))  # today: TypeError
        assert all(type(seq) is int for part in served
                   for seq in ((part.first, part.last) if isinstance(part, Lost)
                               else [record.seq for record in part.records]))
        assert served and isinstance(served[-1], (Lost, Run))


def test_journal_show_shows_a_record_whose_seq_is_a_blob(tmp_path: Path) -> None:
    journal_of(tmp_path, 3).close()
    rebuilt(tmp_path, "BLOB", _ANOTHER_LAST.format(seq="x'01'"))
    status, shown = cli("journal", "show", "--state-dir", str(tmp_path))
    assert status == 0 and len(shown.splitlines()) == 4
    assert "b'\\x01'" in shown.splitlines()[-1]


@pytest.mark.parametrize("column", ["REAL", "TEXT", "BLOB"])
def test_a_table_rebuilt_with_seqs_that_are_no_integers_is_quarantined(
        tmp_path: Path, column: str) -> None:
    journal_of(tmp_path, 3).close()
    rebuilt(tmp_path, column, *([_ANOTHER_LAST.format(seq="x'01'")] if column == "BLOB" else []))
    status, said = cli("journal", "quarantine", "--state-dir", str(tmp_path),
                       "--reason", "rebuilt by another process", "--by", "inspector")
    # Quarantined, or refused naming why: never a traceback.
    assert status in (0, 2), said
    if status == 0:
        assert cli("journal", "verify", "--state-dir", str(tmp_path))[0] == 0

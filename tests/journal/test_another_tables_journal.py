"""Red team 24: red team 23's mends (82809ef) broken again. Another process with write access
to the journal's file edits it while the daemon is stopped (as red teams 20 to 23 did), or a
supervisor quarantines it; then the daemon starts and a client withdraws what it timed out on.

Holes: the third mended in session 14 (the daemon now refuses to start on another table's
journal, naming both ids: a config error, not a broken chain); the first two are older
than red team 23's mends and stay open, each a strict expected failure:

* a journal quarantined and continued: the requests carried out in the archived journal are
  in no record the recall reads (``journal_continued`` names none), so a client that timed out
  on one before the quarantine is answered withdrawn after it ("not carried out and never
  will be: give it again", docs/command-channel.md), though it was (seq 7 of the archive);
* a journal whose last records another process deleted (no hash recomputed: a plain DELETE):
  the start-up check finds a sound chain ending at seq 6, the table is not held, and the
  request carried out at seq 7 is answered withdrawn. Nothing the daemon keeps outside the
  journal says how far it wrote;
* the config's table id changed over a sound journal: the start-up check (now taking the
  daemon's id for every record) holds the table as "journal broken at seq 1" and tells a
  supervisor to quarantine it, but the quarantine (its check takes the first record's id)
  finds "the hash chain is sound: nothing to quarantine": held with no remedy that works.

Tried and held: a record verified at start-up damaged while the table runs, then withdrawn
(answered carried out: the recall is read before the first request); a row put at seq -1 while
the table runs (held; withdrawals still answered carried out, on a restart too; refused
commands journal nothing, so a client cannot push the file past the verified records); an
empty journal restarted (not held); a table rebuilt with REAL or TEXT seqs quarantined ("no
record can be read: cannot continue it")."""

from __future__ import annotations

from pathlib import Path

import zmq

from controller.core.table_events import TableClosed
from controller.stream.journal import Journal, journal_path

from tests.support.daemon import beating, run_config, Daemon, started
from tests.support.seq_types import cli


def test_a_sound_journal_under_a_changed_table_id_is_not_held_without_a_remedy(
        tmp_path: Path) -> None:
    with beating(tmp_path) as (table, _):
        assert table.ask(command="open", request_id="request-0")["ok"]
    path = run_config(tmp_path)
    path.write_text(path.read_text().replace('id = "TCL-01"', 'id = "TCL-02"'))
    with zmq.Context() as context:
        try:
            table = Daemon(tmp_path, path, context)
            table.daemon.start()
        except Exception as error:  # a config refused at start, naming both ids, is an answer
            assert "TCL-01" in str(error) and "TCL-02" in str(error), error
            return
        try:
            held = table.daemon.held_reason()
        finally:
            table.daemon.close()
    if held is None:
        return
    # held: what the held reason tells a supervisor to do must be possible
    assert "quarantine" in held, held
    status, said = cli("journal", "quarantine", "--state-dir", str(tmp_path / "state"),
                       "--reason", "table id changed", "--by", "inspector")
    assert status == 0, said


def test_a_journal_whose_last_record_alone_is_another_tables_is_held_not_refused(
        tmp_path: Path) -> None:
    # Only a journal that is another table's from its first record on is a config error (the
    # daemon refuses to start); one record of another table (copied in by another process) is
    # a break the start-up check holds the table at.
    with beating(tmp_path) as (table, _):
        assert table.ask(command="open")["ok"]
        last = table.daemon.journal.last_seq
    journal = Journal(journal_path(tmp_path / "state"))
    journal._table_id = None  # another process's writer, as another table's daemon writes
    journal.append(TableClosed("another table"), table_id="TCL-02", hand_id=None)
    assert (journal.first_table_id(), journal.table_id) == ("TCL-01", "TCL-02")
    journal.close()
    with zmq.Context() as context, started(tmp_path, run_config(tmp_path), context) as table:
        broken = table.daemon.journal_broken
        assert broken is not None and broken.seq == last + 1, broken

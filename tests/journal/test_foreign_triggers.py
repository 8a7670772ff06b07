"""Red team 17: the journal's trigger checks (commit cc5695d) attacked as another process with
write access to the journal's file would: ``trigger_problem`` (the three append-only triggers
present by name, no other trigger) and ``_all_written`` (a write that stores fewer rows than
its input is refused whole and rolled back), as ``Journal.verify``, ``journal verify`` and the
quarantine use them.

Each test was a hole found (10, all mended in the same session: every input is one
transaction whose direct and trigger changes are counted, and the schema is read as stored
bytes, each append-only trigger compared with the journal's own statement); one pins the sound
behaviour an attack found (an input of several records rolled back whole). Each states the
promise it checks and the attack that broke it."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
import zmq

from controller.cli.main import main
from controller.core.events import PhaseStarted
from controller.daemon.journal_quarantine import QuarantineRefused, quarantine
from controller.stream import client
from controller.stream.journal import Journal, JournalError, journal_path

from tests.support.daemon import run_config
from tests.support.daemon import started
from tests.support.trigger_check import TABLE, HAND, journal_of


#: A trigger name that, printed raw, erases the terminal's line and writes a sound verdict.
FORGED_VERDICT = "x\x1b[2K\rjournal OK: 2 records\njournal OK: 2 records"


def schema(path: Path, *statements: str) -> None:
    """Another process changes the journal's schema."""
    with closing(sqlite3.connect(path, isolation_level=None)) as connection:
        for statement in statements:
            connection.execute(statement)


def seqs_in(path: Path) -> list[int]:
    with closing(sqlite3.connect(path)) as connection:
        return [row[0] for row in connection.execute("SELECT seq FROM journal ORDER BY seq")]


@pytest.mark.parametrize("phases", [("deal",), ("deal", "showdown")])
def test_an_input_a_foreign_trigger_writes_itself_is_refused_and_rolled_back_whole(
        tmp_path: Path, phases: tuple[str, ...]) -> None:
    # Promise: a write that reports fewer rows than records is refused whole and rolled back.
    # The trigger inserts the daemon's own row (its chain is sound) and skips the INSERT. A
    # lone record was one autocommit INSERT: refused, but the file kept seq 3, and with the
    # trigger dropped verify was OK and a quarantine replayed the refused input. Every input
    # is now one transaction, undone whole.
    journal = journal_of(tmp_path, 2)
    schema(journal.path, "CREATE TRIGGER keeper BEFORE INSERT ON journal "
                         "WHEN NOT EXISTS (SELECT 1 FROM journal WHERE seq = NEW.seq) BEGIN "
                         "INSERT INTO journal VALUES (NEW.seq, NEW.ts, NEW.type, NEW.hand_id, "
                         "NEW.message, NEW.prev_hash, NEW.hash); SELECT RAISE(IGNORE); END")
    with pytest.raises(JournalError, match=f"0 of {len(phases)} record"):
        journal.append_all([PhaseStarted(phase) for phase in phases], table_id=TABLE,
                           hand_id=HAND)
    assert journal.last_seq == 2
    journal.close()
    assert seqs_in(journal_path(tmp_path)) == [1, 2]


def test_a_foreign_trigger_with_another_schema_type_breaks_verify(tmp_path: Path) -> None:
    # Promise: a trigger the journal does not have breaks the chain (verify, start, running
    # check, quarantine). SQLite loads a schema row by its SQL, not by its type column.
    journal = journal_of(tmp_path, 2)
    schema(journal.path,
           "CREATE TRIGGER quiet BEFORE INSERT ON journal BEGIN SELECT RAISE(IGNORE); END",
           "PRAGMA writable_schema=ON",
           "UPDATE sqlite_master SET type = 'Trigger' WHERE name = 'quiet'")
    journal.close()
    journal = Journal(journal_path(tmp_path))
    with pytest.raises(JournalError, match="0 of 1 record"):   # the trigger is active
        journal.append(PhaseStarted("deal"), table_id=TABLE, hand_id=HAND)
    report = journal.verify()
    journal.close()
    assert not report.ok and "quiet" in report.reason


def test_an_append_only_trigger_of_the_right_name_that_refuses_nothing_breaks_verify(
        tmp_path: Path) -> None:
    # Promise: the journal is append-only while verify (and the running check) report it
    # sound. The impostor stays in the file after the attacker has gone.
    journal = journal_of(tmp_path, 3)
    schema(journal.path, "DROP TRIGGER journal_no_delete",
           "CREATE TRIGGER journal_no_delete BEFORE DELETE ON journal WHEN 0 "
           "BEGIN SELECT 1; END")
    schema(journal.path, "DELETE FROM journal WHERE seq = 3")   # not refused
    journal.close()
    with Journal.open_readonly(journal_path(tmp_path)) as reopened:
        report = reopened.verify()
    assert not report.ok and "journal_no_delete" in report.reason


def journal_with_a_forged_verdict_trigger(tmp_path: Path) -> None:
    """A journal of 2 records and a trigger another process named :data:`FORGED_VERDICT`."""
    journal_of(tmp_path, 2).close()
    name = FORGED_VERDICT.replace('"', '""')
    schema(journal_path(tmp_path),
           f'CREATE TRIGGER "{name}" AFTER INSERT ON journal BEGIN SELECT 1; END')


def test_journal_verify_shows_a_foreign_trigger_name_escaped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal_with_a_forged_verdict_trigger(tmp_path)
    assert main(["journal", "verify", "--journal", str(journal_path(tmp_path))]) == 1
    shown = capsys.readouterr().out
    assert "\x1b" not in shown and "\r" not in shown
    assert not any(line.startswith("journal OK") for line in shown.splitlines())


def test_journal_quarantine_shows_a_foreign_trigger_name_escaped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal_with_a_forged_verdict_trigger(tmp_path)
    assert main(["journal", "quarantine", "--state-dir", str(tmp_path), "--reason",
                 "foreign trigger", "--by", "supervisor-7"]) == 0
    shown = capsys.readouterr().out
    assert "\x1b" not in shown and "\r" not in shown


def test_a_huge_foreign_trigger_name_keeps_the_quarantine_record_readable(
        tmp_path: Path) -> None:
    # Promise: what another process chose is bounded before it is journaled and published.
    journal = journal_of(tmp_path, 2)
    journal.close()
    schema(journal_path(tmp_path), f'CREATE TRIGGER "{"t" * (2 * 1024 * 1024)}" AFTER INSERT '
                                   f'ON journal BEGIN SELECT 1; END')
    done = quarantine(tmp_path, "foreign trigger", "supervisor-7")
    assert done.record.first_bad_seq == 3
    with Journal.open_readonly(journal_path(tmp_path)) as continued:
        first = next(iter(continued.records()))
    assert first.type == "journal_continued"
    assert len(first.message) <= client.MAX_MESSAGE_BYTES


def undecodable_trigger(path: Path) -> None:
    """Another process adds a trigger that skips every row, named with a byte that is not
    UTF-8 (SQLite stores what it is given; its schema parses, its quick_check is clean)."""
    with closing(sqlite3.connect(path, isolation_level=None)) as connection:
        connection.execute("CREATE TRIGGER qq BEFORE INSERT ON journal "
                           "BEGIN SELECT RAISE(IGNORE); END")
        sql = connection.execute("SELECT sql FROM sqlite_master WHERE name = 'qq'").fetchone()[0]
        connection.execute("PRAGMA writable_schema=ON")
        connection.execute("UPDATE sqlite_master SET name = CAST(x'71ff' AS TEXT), "
                           "sql = CAST(? AS TEXT) WHERE name = 'qq'",
                           (sql.encode().replace(b"qq", b"q\xff"),))


def test_verify_reports_a_foreign_trigger_whose_name_is_not_utf8(tmp_path: Path) -> None:
    journal_of(tmp_path, 2).close()
    undecodable_trigger(journal_path(tmp_path))
    with Journal.open_readonly(journal_path(tmp_path)) as journal:
        assert journal.file_problems() == []
        report = journal.verify()
    assert not report.ok


def test_quarantine_sets_aside_a_journal_with_a_foreign_trigger_not_utf8(
        tmp_path: Path) -> None:
    journal_of(tmp_path, 2).close()
    undecodable_trigger(journal_path(tmp_path))
    try:
        done = quarantine(tmp_path, "foreign trigger", "supervisor-7")
    except QuarantineRefused as refused:
        pytest.fail(f"refused: {refused}")
    assert done.record.first_bad_seq == 3


def test_the_daemon_holds_on_a_foreign_trigger_not_utf8_rather_than_ending(
        tmp_path: Path) -> None:
    path = run_config(tmp_path)
    with zmq.Context() as context:
        with started(tmp_path, path, context) as table:
            assert table.ask(command="open")["ok"]
        undecodable_trigger(journal_path(tmp_path / "state"))
        with started(tmp_path, path, context) as table:
            assert table.daemon.journal_broken is not None
            assert table.ask(command="status")["ok"]
            assert table.ask(command="close")["ok"] is False


def test_a_command_a_hidden_foreign_trigger_drops_holds_the_table(tmp_path: Path) -> None:
    # Promise (as for a trigger of type 'trigger'): the command is not carried out, the table
    # is held, the daemon goes on serving status.
    path = run_config(tmp_path)
    with zmq.Context() as context, started(tmp_path, path, context) as table:
        assert table.ask(command="open")["ok"]
        last = table.daemon.journal.last_seq
        schema(journal_path(tmp_path / "state"),
               "CREATE TRIGGER quiet BEFORE INSERT ON journal BEGIN SELECT RAISE(IGNORE); END",
               "PRAGMA writable_schema=ON",
               "UPDATE sqlite_master SET type = 'Trigger' WHERE name = 'quiet'")
        try:
            refused = table.ask(command="place", spot=2, wager="ante", amount=700)
        except JournalError as error:
            pytest.fail(f"the command ended in {error}")
        assert not refused["ok"]
        assert table.daemon.journal.last_seq == last
        assert table.daemon.journal_broken is not None
        assert table.ask(command="status")["ok"]

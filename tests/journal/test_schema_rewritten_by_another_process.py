"""Red team 19: red teams 17 and 18's fixes (commits c2842b6 and 84e1226) attacked as another
process with write access to the journal's file would: ``Journal._insert`` (every input one
transaction, refused unless the direct row count and ``total_changes`` both equal its records),
``trigger_problem`` (the schema read as stored bytes, a foreign trigger known by a statement
that starts ``CREATE [TEMP] TRIGGER``) and ``READ_ERRORS`` (SQLite's error quoting text that is
not UTF-8, which Python raises as ``UnicodeDecodeError``, taken as a file that cannot be read).

Each test states the promise it checks and the attack that broke it: 8 holes, 7 mended in the
same session (comments inside ``CREATE TRIGGER``, the table's own statement compared too, every
reader and writer of the file taking ``UnicodeDecodeError`` as a file it cannot read, ``journal
show`` of columns of any storage class, a record's own ``prev_hash`` that is no hash); one is
open, a strict expected failure (a table rewritten under the open journal is held by the next
check, the append in between not refused). Tried and held: a schema row whose name
column differs from the trigger its statement makes, or two rows of one name (SQLite calls the
schema malformed: the journal cannot be opened); leading comments or blanks before CREATE
(SQLite runs only a statement that begins "cr"); a journal made before c2842b6 (the schema's
text is unchanged since the seq before the first became a parameter)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
import zmq

from controller.core.events import PhaseStarted
from controller.daemon.chain_watch import ChainWatch
from controller.stream.journal import (
    _SCHEMA,
    APPLICATION_ID,
    FORMAT_VERSION,
    GENESIS_HASH,
    Journal,
    JournalError,
    journal_path,
)
from controller.stream.publisher import EventPublisher

from tests.support.trigger_check import HAND, TABLE, journal_of



def schema_row(path: Path, kind: str, name: bytes, sql: bytes) -> None:
    """Another process writes a row of the schema itself (``PRAGMA writable_schema``), its
    text stored as the bytes given, and bumps the schema's version so that every connection
    loads the schema again."""
    with closing(sqlite3.connect(path, isolation_level=None)) as connection:
        connection.execute("PRAGMA writable_schema=ON")
        connection.execute("INSERT INTO sqlite_master VALUES (?, CAST(? AS TEXT), 'journal', 0, "
                           "CAST(? AS TEXT))", (kind, name, sql))
        version = connection.execute("PRAGMA schema_version").fetchone()[0]
        connection.execute(f"PRAGMA schema_version={int(version) + 1}")


def seqs_in(path: Path) -> list[int]:
    with closing(sqlite3.connect(path)) as connection:
        return [row[0] for row in connection.execute("SELECT seq FROM journal ORDER BY seq")]


@pytest.mark.parametrize("between", [b"/**/", b"--\n", b" /* x */\n"])
def test_a_foreign_trigger_with_a_comment_in_its_statement_breaks_verify(
        tmp_path: Path, between: bytes) -> None:
    # Promise: a trigger the journal does not have breaks verify (and the start, the running
    # check, the quarantine). SQLite loads a schema row whose SQL begins "cr" by running it,
    # and its parser skips comments between tokens; the check's regex does not.
    journal = journal_of(tmp_path, 2)
    schema_row(journal.path, "trigger", b"sneak",
               b"CREATE" + between + b"TRIGGER sneak BEFORE INSERT ON journal "
               b"WHEN NEW.type = 'phase_started' "
               b"BEGIN SELECT RAISE(ABORT, 'refused by another process'); END")
    journal.close()
    with Journal(journal_path(tmp_path)) as again:
        # the trigger is live: SQLite runs it at every append
        with pytest.raises(JournalError, match="refused by another process"):
            again.append(PhaseStarted("deal"), table_id=TABLE, hand_id=HAND)
        report = again.verify()
    assert not report.ok
    assert "sneak" in report.reason


@pytest.mark.parametrize("kind, name, sql", [
    ("trigger", b"refuser",
     b"CREATE TRIGGER refuser BEFORE INSERT ON journal BEGIN SELECT RAISE(ABORT, '\xff'); END"),
    # no trigger at all: an index whose collation SQLite names when the INSERT needs it
    ("index", b"by_type", b'CREATE INDEX by_type ON journal(type COLLATE "\xff")'),
])
def test_a_schema_row_whose_refusal_is_not_utf8_fails_the_append_as_a_journal_error(
        tmp_path: Path, kind: str, name: bytes, sql: bytes) -> None:
    # Promise (append's docstring): a failed write raises JournalError, nothing written.
    # The daemon's apply holds the table on JournalError; any other exception ends it. A
    # schema row added while the daemon runs makes the INSERT fail with SQLite's message
    # quoting bytes that are not UTF-8 (a trigger's RAISE(ABORT, '\xff'), an index's unknown
    # collation '\xff'), and Python's sqlite3 raises UnicodeDecodeError.
    journal = journal_of(tmp_path, 1)
    schema_row(journal.path, kind, name, sql)
    with pytest.raises(JournalError, match="cannot append seq 2"):
        journal.append(PhaseStarted("showdown"), table_id=TABLE, hand_id=HAND)
    assert journal.last_seq == 1
    journal.close()
    assert seqs_in(journal_path(tmp_path)) == [1]


def test_a_journal_whose_table_deletes_records_by_a_replace_clause_is_broken(
        tmp_path: Path) -> None:
    # Promise: no journal that rewrites or deletes rows without an error is taken as sound.
    # Another process made the journal before the daemon's first start: the journal's own
    # triggers and header, and a table whose UNIQUE(type) ON CONFLICT REPLACE deletes the
    # earlier record of the same type at each INSERT (no DELETE trigger fires, and neither
    # the row count nor total_changes counts it). Verify, the start and the running check
    # compare the table's statement with the journal's own, and call it broken.
    path = journal_path(tmp_path)
    table_end = "hash      TEXT NOT NULL\n"
    assert table_end in _SCHEMA
    made = _SCHEMA.format(before_first=0).replace(
        table_end, "hash      TEXT NOT NULL, UNIQUE (type) ON CONFLICT REPLACE\n")
    with closing(sqlite3.connect(path, isolation_level=None)) as connection:
        connection.executescript(f"PRAGMA journal_mode=WAL; BEGIN; {made} "
                                 f"PRAGMA application_id={APPLICATION_ID}; "
                                 f"PRAGMA user_version={FORMAT_VERSION}; COMMIT;")
    with Journal(path) as journal:
        report = journal.verify()
    assert not report.ok
    assert report.reason == "the journal's table is not the statement the journal was made with"


def test_a_held_publisher_over_a_schema_not_utf8_holds_without_a_hash(tmp_path: Path) -> None:
    # Promise (hold): a file that cannot be read is held all the same, no hash vouched. The
    # break the chain watch finds (READ_ERRORS, since 84e1226) is another process's schema row
    # that SQLite calls malformed, quoting its name, which is not UTF-8.
    journal = journal_of(tmp_path, 3)
    context = zmq.Context()
    publisher = EventPublisher(context, table_id=TABLE, pub_endpoint="tcp://127.0.0.1:*",
                               replay_endpoint="tcp://127.0.0.1:*", journal=journal,
                               snapshot=lambda: {})
    try:
        schema_row(journal.path, "table", b"\xff\xfe", b"not a statement")
        with pytest.raises(UnicodeDecodeError):  # what every read of the file now raises
            journal.hash_at(1)
        publisher.hold(2)  # the seq before the break is no longer the daemon's last
        assert publisher._head() == (1, GENESIS_HASH)
    finally:
        publisher.close()
        journal.close()
        context.term()


def test_an_archive_whose_schema_is_made_not_utf8_after_it_was_found_is_named_lost(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Promise (archive.py): an archive that cannot be read while served ends the run, the
    # rest named lost ("cannot be read at seq N"), and is looked for again. Since 84e1226 a
    # schema row SQLite quotes in bytes that are not UTF-8 is a file that cannot be read
    # (READ_ERRORS) for the journal, the chain watch and the quarantine; not for the archive.
    import controller.stream.archive as archive
    from controller.daemon.journal_quarantine import quarantine
    from controller.stream.archive import Lost, Run
    from tests.support.archives import _archives, alter, append

    monkeypatch.setattr(archive, "MARK_EVERY", 2)
    append(tmp_path, 8)
    alter(journal_path(tmp_path), 8)
    quarantine(tmp_path, "disk damage", by="sam")
    journal, archives = _archives(tmp_path, [0.0])
    try:
        assert archives.find() == 1
        assert [type(served) for served in archives.serve(0, 1)] == [Run]
        spans = archives._spans
        assert spans is not None and spans[0].journal is not None
        schema_row(spans[0].journal.path, "table", b"\xff\xfe", b"not a statement")
        served = list(archives.serve(0, 8))
        assert served and isinstance(served[-1], Lost)
        assert "cannot be read" in served[-1].reason
    finally:
        archives.close()
        journal.close()


def altered(state: Path, column: str, value_sql: str, seq: int) -> None:
    """Another process stores ``value_sql`` (an SQL expression: a BLOB keeps its storage class
    whatever the column's affinity) in ``column`` of record ``seq``."""
    with closing(sqlite3.connect(journal_path(state), isolation_level=None)) as connection:
        connection.execute("DROP TRIGGER journal_no_update")
        connection.execute(f"UPDATE journal SET {column} = {value_sql} WHERE seq = ?", (seq,))


@pytest.mark.parametrize("column", ["type", "hand_id"])
def test_journal_show_prints_a_record_whose_column_is_a_blob(
        tmp_path: Path, column: str, capsys: pytest.CaptureFixture[str]) -> None:
    # Promise (84e1226, and journal show): what another process stored, of any storage class,
    # is shown escaped, never a crash; verify names the record (it does: BROKEN at seq 2).
    from controller.cli.main import main

    journal_of(tmp_path, 2).close()
    altered(tmp_path, column, "X'1b5b324a'", 2)
    assert main(["journal", "show", "--state-dir", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[1].split()[0] == "2"
    assert "\x1b" not in lines[1]


@pytest.mark.parametrize("value_sql", ["X'41'", "'\u00e9'", "CAST(X'FF' AS TEXT)"])
def test_a_quarantine_archives_a_journal_whose_prev_hash_is_no_ascii_text(
        tmp_path: Path, value_sql: str) -> None:
    # Promise (the quarantine): a journal broken by another process's edit is archived and a
    # new one continues it; the broken record is named, whatever its columns hold.
    from controller.daemon.journal_quarantine import quarantine

    journal_of(tmp_path, 3).close()
    altered(tmp_path, "prev_hash", value_sql, 2)
    done = quarantine(tmp_path, "another process's edit", by="sam")
    assert done.record.first_bad_seq == 2


@pytest.mark.xfail(strict=True, reason="a table statement rewritten while the journal is open "
                   "(writable_schema) is found by the running check within a second, which "
                   "holds the table, but the append in between is not refused: a check of the "
                   "schema at every input would cost a statement an input")
def test_an_append_whose_column_a_conflict_clause_rewrites_is_refused(tmp_path: Path) -> None:
    # Promise (_insert): an input is refused and rolled back when anything changes what it
    # writes. SQLite loads the table's statement from the schema as stored (writable_schema),
    # and a NOT NULL ... ON CONFLICT REPLACE column takes its DEFAULT for the NULL hand id of
    # a record outside a hand, uncounted: one row, one change.
    journal = journal_of(tmp_path, 1)
    with closing(sqlite3.connect(journal.path, isolation_level=None)) as connection:
        connection.execute("PRAGMA writable_schema=ON")
        connection.execute("UPDATE sqlite_master SET sql = replace(sql, 'hand_id   TEXT,', "
                           "'hand_id   TEXT NOT NULL ON CONFLICT REPLACE DEFAULT "
                           "''CALI-01-000666'',') WHERE name = 'journal'")
        version = connection.execute("PRAGMA schema_version").fetchone()[0]
        connection.execute(f"PRAGMA schema_version={int(version) + 1}")
    watch = ChainWatch(journal, 1, journal.last_hash)
    try:
        journal.append(PhaseStarted("showdown"), table_id=TABLE, hand_id=None)
    except JournalError:
        pass  # refused: what the promise asks
    broken = watch.check()  # what the daemon does within a second: the table is held
    assert broken is not None and "table is not the statement" in broken.reason
    journal.close()
    with closing(sqlite3.connect(journal_path(tmp_path))) as connection:
        stored = connection.execute("SELECT hand_id FROM journal WHERE seq = 2").fetchall()
    assert stored in ([], [(None,)]), f"the daemon's record stored with hand id {stored}"

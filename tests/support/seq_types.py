"""Journals whose seqs another process stored as something other than integers."""

from __future__ import annotations

import contextlib
import io
import sqlite3
from pathlib import Path

from controller.cli.main import main
from controller.core.table_events import TableClosed
from controller.stream.journal import Journal, journal_path


TABLE = "CALI-01"


_JOURNAL_TABLE = ("CREATE TABLE journal (seq REAL PRIMARY KEY, ts TEXT NOT NULL, "
                  "type TEXT NOT NULL, hand_id TEXT, message BLOB NOT NULL, "
                  "prev_hash TEXT NOT NULL, hash TEXT NOT NULL)")


def journal_of(state_dir: Path, records: int, per_input: int = 1) -> Journal:
    journal = Journal(journal_path(state_dir), durability="batched")
    for start in range(0, records, per_input):
        journal.append_all([TableClosed(f"closer {number}")
                            for number in range(start, min(records, start + per_input))],
                           table_id=TABLE, hand_id=None)
    return journal


def other_process(state_dir: Path, statements: list[tuple[str, tuple[object, ...]]]) -> None:
    """Another process edits the journal's file: its triggers dropped, then put back."""
    connection = sqlite3.connect(journal_path(state_dir), isolation_level=None)
    triggers = connection.execute("SELECT name, sql FROM sqlite_master "
                                  "WHERE type = 'trigger'").fetchall()
    for name, _ in triggers:
        connection.execute(f"DROP TRIGGER {name}")
    for statement, values in statements:
        connection.execute(statement, values)
    for _, sql in triggers:
        connection.execute(sql)
    connection.close()


def rebuilt(state_dir: Path, column: str, *then: str) -> None:
    """The journal's table made again with ``seq {column}`` (the same rows), then ``then``."""
    other_process(state_dir, [("ALTER TABLE journal RENAME TO kept", ()),
                              (_JOURNAL_TABLE.replace("seq REAL", f"seq {column}"), ()),
                              ("INSERT INTO journal SELECT * FROM kept", ()),
                              ("DROP TABLE kept", ()),
                              *((statement, ()) for statement in then)])


def cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        status = main(list(argv))
    return status, out.getvalue()


def copy_first_record(state_dir: Path, other_state_dir: Path, seq: int | str) -> None:
    """Another process copies the first record of another journal into this one at ``seq``
    (an SQL literal)."""
    other_process(state_dir, [
        (f"ATTACH '{journal_path(other_state_dir)}' AS other", ()),
        (f"INSERT INTO journal SELECT {seq}, ts, type, hand_id, message, prev_hash, hash "
         f"FROM other.journal WHERE seq = 1", ())])

"""The journal file's schema, and its audit: the table and triggers it must have, and what
SQLite's own check of the file finds.

A journal is append-only because its triggers refuse UPDATE and DELETE and keep seqs gapless;
a process that can write the file can drop or change them (or add its own, that skip a row),
so the daemon checks the schema as stored against the statements it makes
(:func:`schema_problem`), at start and while it runs, and asks SQLite for pages no query
reaches (:func:`file_problems`).
"""

from __future__ import annotations

import contextlib
import functools
import re
import sqlite3

from controller.stream.journal_text import READ_ERRORS, shown

#: ``PRAGMA application_id``: marks the file as a lowball-table journal ("LBTJ").
APPLICATION_ID = 0x4C42544A
FORMAT_VERSION = 1

#: The journal's table and append-only triggers; ``{before_first}``: the seq before the
#: journal's first.
SCHEMA = """
CREATE TABLE journal (
    seq       INTEGER PRIMARY KEY,
    ts        TEXT NOT NULL,
    type      TEXT NOT NULL,
    hand_id   TEXT,
    message   BLOB NOT NULL,
    prev_hash TEXT NOT NULL,
    hash      TEXT NOT NULL
);
CREATE TRIGGER journal_no_update BEFORE UPDATE ON journal
BEGIN SELECT RAISE(ABORT, 'the journal is append-only: UPDATE refused'); END;
CREATE TRIGGER journal_no_delete BEFORE DELETE ON journal
BEGIN SELECT RAISE(ABORT, 'the journal is append-only: DELETE refused'); END;
CREATE TRIGGER journal_gapless BEFORE INSERT ON journal
WHEN NEW.seq IS NOT (SELECT COALESCE(MAX(seq), {before_first}) + 1 FROM journal)
BEGIN SELECT RAISE(ABORT, 'the journal is gapless: seq must be the last seq + 1'); END;
"""
#: The checkpoints beside the chain (:mod:`controller.daemon.checkpoints`): one row per
#: checkpoint, at the seq of the journal record it follows, as append-only as the journal. A
#: journal made before checkpoints has no such table until a daemon opens it for writing.
CHECKPOINT_SCHEMA = """
CREATE TABLE checkpoint (
    seq       INTEGER PRIMARY KEY,
    state     BLOB NOT NULL,
    prev_hash TEXT NOT NULL,
    hash      TEXT NOT NULL
);
CREATE TRIGGER checkpoint_no_update BEFORE UPDATE ON checkpoint
BEGIN SELECT RAISE(ABORT, 'checkpoints are append-only: UPDATE refused'); END;
CREATE TRIGGER checkpoint_no_delete BEFORE DELETE ON checkpoint
BEGIN SELECT RAISE(ABORT, 'checkpoints are append-only: DELETE refused'); END;
"""
#: The rows whose seq is stored as an integer, as every row of the journal's own table is (a
#: rowid). A table made again by another process may hold others (3.0 = 3 in SQL, and a text
#: or a blob sorts after every number): they are no records of the journal's.
INTEGER_SEQ = "typeof(seq) = 'integer'"
#: ... and from seq 1: what lies below is no record of the journal's either.
RECORD_SEQ = f"{INTEGER_SEQ} AND seq >= 1"
#: The triggers that keep the journal append-only and gapless.
TRIGGERS = ("journal_no_update", "journal_no_delete", "journal_gapless")
#: The checkpoint table's triggers: present whenever the table is.
CHECKPOINT_TRIGGERS = ("checkpoint_no_update", "checkpoint_no_delete")
#: Of the triggers another process added, the most a reason names, and the characters of a
#: name it shows.
_NAMED_TRIGGERS, _TRIGGER_NAME_SHOWN = 5, 64
#: The characters of one of SQLite's file-check findings a reason shows.
_PROBLEM_SHOWN = 200
#: A number no journal's seq before its first is written as: where it stands in the schema,
#: the statements the journal expects take any seq.
_ANY_SEQ = 987_654_321_987_654_321


def schema_problem(connection: sqlite3.Connection) -> str | None:
    """What is wrong with the schema of the journal ``connection`` reads, or None: its table
    not the statement the journal was made with (a column's ON CONFLICT REPLACE), one of the
    append-only triggers missing or not the statement the journal was made with (one of
    that name that refuses nothing), or a trigger the journal does not have (another
    process's: one that skips a row, ``RAISE(IGNORE)``, would drop records the daemon then
    publishes; :meth:`Journal.append_all` refuses such a write too). The checkpoint table
    may be absent (a journal made before checkpoints); present, it and its triggers must be
    the journal's too.

    The schema is read as stored bytes, whatever its text holds, and a trigger is known by
    its statement, which is what SQLite runs, not by the ``type`` column another process may
    rewrite (``PRAGMA writable_schema``)."""
    expected = _expected_schema()
    found: dict[bytes, bytes] = {}
    foreign: list[bytes] = []
    for name, sql in connection.execute(
            "SELECT CAST(name AS BLOB), CAST(sql AS BLOB) FROM sqlite_master"):
        name, sql = bytes(name or b""), bytes(sql or b"")
        if name in expected:
            found[name] = sql
        elif _CREATE_TRIGGER.match(_SQL_COMMENT.sub(b" ", sql)):  # SQLite skips comments
            foreign.append(name)
    problems = []
    if (table := found.get(b"journal")) is not None and not expected[b"journal"].fullmatch(table):
        # a column's ON CONFLICT REPLACE or a UNIQUE constraint would rewrite or delete rows
        # without an error, as a trigger could
        problems.append("the journal's table is not the statement the journal was made with")
    if (checkpoints := found.get(b"checkpoint")) is not None \
            and not expected[b"checkpoint"].fullmatch(checkpoints):
        problems.append("the checkpoint table is not the statement the journal was made with")
    wanted = TRIGGERS + (CHECKPOINT_TRIGGERS if checkpoints is not None else ())
    if missing := [name for name in wanted if name.encode() not in found]:
        problems.append(f"append-only trigger(s) missing: {', '.join(missing)}")
    if changed := [name.decode() for name, sql in found.items()
                   if name not in (b"journal", b"checkpoint")
                   and not expected[name].fullmatch(sql)]:
        problems.append(f"append-only trigger(s) not the journal's: {', '.join(changed)}")
    if foreign:
        foreign.sort()
        named = ", ".join(_named(name) for name in foreign[:_NAMED_TRIGGERS])
        more = len(foreign) - _NAMED_TRIGGERS
        problems.append(f"trigger(s) the journal does not have: {named}"
                        f"{f' and {more} more' if more > 0 else ''}")
    return "; ".join(problems) or None


#: A statement that makes a trigger, as SQLite keeps it in the schema (its comments blanked:
#: ``CREATE/**/TRIGGER`` is one too).
_CREATE_TRIGGER = re.compile(rb"\s*CREATE\s+(?:TEMP\s+|TEMPORARY\s+)?TRIGGER\b", re.IGNORECASE)
_SQL_COMMENT = re.compile(rb"/\*.*?(?:\*/|\Z)|--[^\n]*", re.DOTALL)


@functools.cache
def _expected_schema() -> dict[bytes, re.Pattern[bytes]]:
    """The journal's table and each append-only trigger's statement as the journal's schema
    makes them (SQLite keeps the text as written), the gapless trigger with any seq before
    the first."""
    with contextlib.closing(sqlite3.connect(":memory:")) as connection:
        connection.executescript(SCHEMA.format(before_first=_ANY_SEQ) + CHECKPOINT_SCHEMA)
        rows = connection.execute(
            "SELECT CAST(name AS BLOB), CAST(sql AS BLOB) FROM sqlite_master").fetchall()
    return {bytes(name): re.compile(re.escape(bytes(sql)).replace(
        str(_ANY_SEQ).encode(), rb"\d+")) for name, sql in rows}


def _named(name: bytes) -> str:
    """A trigger's name as a reason may carry it: another process chose it, and the reason
    goes to replies, logs and terminals, so it is shown short and without a control
    character or a byte that is not UTF-8."""
    text = name.decode("utf-8", "backslashreplace")
    if text.isprintable() and len(text) <= _TRIGGER_NAME_SHOWN:
        return text
    return ascii(text[:_TRIGGER_NAME_SHOWN]) + ("..." if len(text) > _TRIGGER_NAME_SHOWN else "")


def file_problems(connection: sqlite3.Connection, most: int = 5) -> list[str]:
    """What SQLite's ``quick_check`` finds wrong with the journal's file (none in a sound one):
    pages no b-tree reaches (a lost write that put an older page back hides the records under
    the newer one from every query, and the chain of the rest still checks), pages in two
    places, a damaged page. The first ``most`` it names."""
    try:
        rows = connection.execute(f"PRAGMA quick_check({int(most)})").fetchall()
    except READ_ERRORS as error:
        return [f"the file cannot be checked: {type(error).__name__}"]
    found = [str(row[0]) for row in rows]
    # SQLite's words quote the file (a table's name another process chose): shown as ASCII
    return [] if found == ["ok"] else [shown(problem, _PROBLEM_SHOWN) for problem in found]


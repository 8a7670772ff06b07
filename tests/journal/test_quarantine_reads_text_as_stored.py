"""Red team 18: the two journal-reading fixes of session 13 (commits 103fa49 and 1aceed1)
attacked as another process with write access to the journal's file would: the quarantine's
salvage reading text that is not UTF-8 as stored (``SalvagedJournal``'s ``text_factory`` and
``_record``), and ``Journal._rows`` reading a failed query again only when its error carries no
SQLite error code.

Each test states the behaviour the project promises; the 6 holes found (9 tests) were mended
in the same session: the quarantine reads a message of another storage class as the journal
does, names no archived hash that is not one, shows SQLite's file-check words as ASCII, and
every reader of the file takes SQLite's error quoting text that is not UTF-8 (Python raises
``UnicodeDecodeError`` for it) as a file it cannot read. Held, tried: on Python 3.11 the decoding failure is the only
``OperationalError`` a journal query raised without ``sqlite_errorcode`` (a missing table
carries one; a failing text factory raises its own error, which is not read again); WireError
names no byte of a message that is not UTF-8. Read, not run: a column that is not UTF-8 (ts,
type, hand_id) is quoted with ``!r`` (escaped) in a break's reason, a hand id that is not UTF-8
numbers no hand (``isascii``), a trigger's name is escaped (``_named``)."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from controller.daemon.chain_watch import ChainWatch
from controller.daemon.journal_quarantine import QuarantineRefused, quarantine
from controller.stream.journal import GENESIS_HASH, Journal, JournalError, journal_path

from tests.support.running_check import journal_of, rewrite

ROOT = Path(__file__).resolve().parents[2]


def verified_break(state_dir: Path) -> int | None:
    """The first bad seq ``journal verify`` (and the daemon's start) finds."""
    with Journal.open_readonly(journal_path(state_dir)) as journal:
        return journal.verify().first_bad_seq


# --- 1. the last record's hash, not a hash, reaches journal_continued -----------------------------

@pytest.mark.parametrize("edit", ["CAST(hash || X'ff' AS TEXT)", "hash || char(27) || '[2J'"],
                         ids=["not-utf8", "escape-sequence"])
def test_the_quarantine_names_no_last_hash_that_is_not_a_hash(tmp_path: Path, edit: str) -> None:
    journal_of(tmp_path, 5).close()
    rewrite(tmp_path, f"UPDATE journal SET hash = {edit} WHERE seq = ?", (5,))
    assert verified_break(tmp_path) == 5
    done = quarantine(tmp_path, "red team 18", by="alice")
    assert done.record.first_bad_seq == 5
    # what is not a hash is no hash (as the held heartbeat's): none, as for an unreadable end
    hash_ = done.record.archived_hash
    assert hash_ == "" or re.fullmatch("[0-9a-f]{64}", hash_), ascii(hash_)
    with Journal.open_readonly(journal_path(tmp_path)) as fresh:
        assert fresh.verify().ok


# --- 2. a message stored as TEXT is sound to the salvage -----------------------------------------

@pytest.mark.parametrize("seq", [3, 5])
def test_the_quarantine_finds_a_message_stored_as_text_where_verify_does(
        tmp_path: Path, seq: int) -> None:
    journal_of(tmp_path, 5).close()
    rewrite(tmp_path, "UPDATE journal SET message = CAST(message AS TEXT) WHERE seq = ?",
            (seq,))
    assert verified_break(tmp_path) == seq
    try:
        done = quarantine(tmp_path, "red team 18", by="alice")
    except QuarantineRefused as refused:
        pytest.fail(f"verify breaks at seq {seq}, the quarantine refuses: {refused}")
    assert done.record.first_bad_seq == seq, done.record.broken


# --- 3. SQLite's check quotes a name another process chose ---------------------------------------

def foreign_table(state_dir: Path, name_sql: str) -> None:
    """Another process adds a table to the journal's file, named ``name_sql`` (an SQL text
    expression), that breaks its own NOT NULL: SQLite's quick_check names it."""
    with closing(sqlite3.connect(journal_path(state_dir), isolation_level=None)) as other:
        other.execute("CREATE TABLE evidence(x)")
        other.execute("INSERT INTO evidence VALUES (NULL)")
        other.execute("PRAGMA writable_schema=ON")
        other.execute(f"UPDATE sqlite_master SET name = {name_sql}, tbl_name = {name_sql}, "
                      f"sql = CAST('CREATE TABLE \"' || {name_sql} || '\"(x NOT NULL)' AS TEXT) "
                      f"WHERE name = 'evidence'")


def test_the_quarantine_of_a_file_check_naming_a_table_not_utf8_ends(tmp_path: Path) -> None:
    journal_of(tmp_path, 5).close()
    foreign_table(tmp_path, "CAST('ev' || X'ff' AS TEXT)")
    done = quarantine(tmp_path, "red team 18", by="alice")
    assert done.record.first_bad_seq == 6
    assert done.record.broken.isascii(), ascii(done.record.broken)


def test_the_quarantine_prints_no_control_byte_of_a_table_name(tmp_path: Path) -> None:
    journal_of(tmp_path, 5).close()
    foreign_table(tmp_path, "'ev' || char(27) || '[2J' || char(155) || 'c'")
    environment = dict(os.environ, PYTHONIOENCODING="utf-8:strict")
    done = subprocess.run([sys.executable, "-m", "controller.cli.main", "journal", "quarantine",
                           "--state-dir", str(tmp_path), "--reason", "red team 18",
                           "--by", "alice"], cwd=ROOT, capture_output=True, timeout=60,
                          env=environment)
    assert done.returncode == 0, done.stderr[-600:]
    out = done.stdout + done.stderr
    assert b"\x1b" not in out and "\x9b".encode() not in out, out[-400:]


# --- 4. SQLite's own error quotes a name that is not UTF-8 ---------------------------------------

def foreign_trigger_misnamed(state_dir: Path, name_sql: str) -> None:
    """Another process adds a trigger and renames it in the schema to ``name_sql`` (an SQL text
    expression), then bumps the schema's version so that every connection reads it again:
    SQLite finds the schema malformed, its error naming the trigger as stored."""
    with closing(sqlite3.connect(journal_path(state_dir), isolation_level=None)) as other:
        other.execute("CREATE TRIGGER foreign_t AFTER INSERT ON journal BEGIN SELECT 1; END")
        (version,) = other.execute("PRAGMA schema_version").fetchone()
        other.execute("PRAGMA writable_schema=ON")
        other.execute(f"UPDATE sqlite_master SET name = {name_sql} WHERE name = 'foreign_t'")
        other.execute(f"PRAGMA schema_version = {int(version) + 1}")


NOT_UTF8 = "CAST('foreign_t' || X'ff' AS TEXT)"


def test_the_quarantine_of_a_schema_naming_a_trigger_not_utf8_says_what_to_do(
        tmp_path: Path) -> None:
    journal_of(tmp_path, 5).close()
    foreign_trigger_misnamed(tmp_path, NOT_UTF8)
    with pytest.raises(QuarantineRefused, match="nothing moved"):
        quarantine(tmp_path, "red team 18", by="alice")


def test_a_journal_whose_schema_names_a_trigger_not_utf8_is_refused_by_name(
        tmp_path: Path) -> None:
    journal_of(tmp_path, 5).close()
    foreign_trigger_misnamed(tmp_path, NOT_UTF8)
    with pytest.raises(JournalError, match="cannot open the journal"):
        Journal.open_readonly(journal_path(tmp_path)).close()


def test_the_running_check_holds_when_the_schema_names_a_trigger_not_utf8(
        tmp_path: Path) -> None:
    journal = journal_of(tmp_path, 5)
    try:
        watch = ChainWatch(journal, 0, GENESIS_HASH)
        assert watch.check() is None and watch.verified_through == 5
        foreign_trigger_misnamed(tmp_path, NOT_UTF8)
        broken = watch.check()
        assert broken is not None and broken.seq == 6, broken
    finally:
        journal.close()

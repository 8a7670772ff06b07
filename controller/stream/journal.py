"""The table's audit journal: every event, in order, before anyone sees it.

One SQLite database per table (``<state dir>/journal.sqlite3``), WAL mode, one row per event:

====================  =========================================================================
``seq``               INTEGER PRIMARY KEY: 1, 2, 3, ... with no gap (a trigger refuses any other);
                      a journal that continues a quarantined one starts after its last seq
``ts``                the event's UTC time, as in the message (``2026-11-21T23:50:00.123456Z``)
``type``              the event's wire name (``card_dealt``), as the message was written
``hand_id``           the hand it belongs to, or NULL between hands
``message``           the canonical JSON bytes of :func:`controller.stream.wire.encode`: exactly what
                      the publisher sends, so a subscriber can check the chain from the stream
``prev_hash``         the previous record's ``hash``; 64 zeros for the first record
``hash``              ``sha256(prev_hash (ASCII hex) + message)``, hex
====================  =========================================================================

Why: the issue's rule is *journal before effect*. :meth:`Journal.append` commits, synced to
disk, before it returns, and the daemon publishes or shows an event only after that, so a
power cut can lose an event nobody saw but never show one the journal lacks. The hash chain
makes any edit, deletion or reordering of a past record detectable by :meth:`Journal.verify`;
triggers refuse UPDATE and DELETE so an edit needs deliberate tampering (dropping a trigger).
What the chain alone cannot detect is removing or adding records at the *end* (it has no
key: anyone who can write the file can chain a record on) or rewriting every hash after an
edit: compare the last seq and hash that ``lowball-table journal verify`` prints with a copy
kept elsewhere (the stream's subscribers hold the same messages). A running daemon checks the
end and the file itself (:mod:`controller.daemon.chain_watch`).

A table's seqs are unique for its whole life: the journal that continues a quarantined one
(:mod:`controller.daemon.journal_quarantine`) starts at the archived journal's last seq + 1, with
a ``journal_continued`` record that names that seq and hash (its ``prev_hash`` is 64 zeros: the
new chain starts there). So a subscriber, the floor's store or an alarm's acknowledgement that
names a seq never meets two records of one seq. :class:`ChainCheck` accepts a first record
above seq 1 only if it is such a ``journal_continued``.

Durability: ``durability="full"`` (the default, for tables) runs ``synchronous=FULL``: each
commit is fsynced. ``durability="batched"`` runs ``synchronous=NORMAL``: WAL commits are
synced at checkpoints only, so a power cut may lose the last commits (never corrupt the
database). It is for benchmarks and simulations, never for a live table.

Threads: a :class:`Journal` holds one SQLite connection, used by one thread at a time. The
daemon opens it while starting and then hands it to its main loop, which alone uses it until
it is joined; that hand-off crosses a thread start and join, so sqlite3's same-thread check
is turned off rather than forcing the daemon to open the file inside its loop.
Another process may open the same file read-only (:meth:`Journal.open_readonly`) while the
daemon writes: WAL lets readers and the writer proceed together.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import os
import re
import sqlite3
from collections import deque
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, NamedTuple

from controller.errors import LowballError
from controller.stream import wire

JOURNAL_FILE = "journal.sqlite3"
MAX_SEQ = wire.MAX_SEQ
GENESIS_HASH = "0" * 64
#: A record's hash (and prev_hash) as the daemon writes it.
_HASH = re.compile(r"[0-9a-f]{64}")
#: What reading a file another process may have written raises: SQLite's errors, and
#: ``UnicodeDecodeError`` when SQLite's own message quotes text of the file that is not UTF-8
#: (a schema entry's name), which Python's sqlite3 then cannot decode.
READ_ERRORS = (sqlite3.Error, UnicodeDecodeError)
#: ``PRAGMA application_id``: marks the file as a lowball-table journal ("LBTJ").
APPLICATION_ID = 0x4C42544A
FORMAT_VERSION = 1
_BATCH = 500
#: The records a journal keeps of its own last appends (:meth:`Journal.written_after`): a
#: second's worth of a table dealing flat out, about 3 MB (some 20 MB were every record as
#: long as a command may make it).
WRITTEN_KEPT = 5000
#: One record's INSERT. Never several rows in one statement: with the ``journal_gapless``
#: trigger, SQLite first copies a multi-row ``VALUES`` into an ephemeral table (a pager of
#: its own, fresh memory at every input), which costs the daemon more than a transaction.
_INSERT = "INSERT INTO journal (seq, ts, type, hand_id, message, prev_hash, hash) " \
          "VALUES (?, ?, ?, ?, ?, ?, ?)"
#: The files SQLite keeps beside a journal in WAL mode: the log holds committed records that
#: may not be in the database file yet, so they belong to that database and no other.
COMPANIONS = ("-wal", "-shm")
#: The new journal a quarantine writes beside the broken one, renamed into place last
#: (:mod:`controller.daemon.journal_quarantine`).
CONTINUING_SUFFIX = ".continuing"

_SCHEMA = """
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
#: The rows whose seq is stored as an integer, as every row of the journal's own table is (a
#: rowid). A table made again by another process may hold others (3.0 = 3 in SQL, and a text
#: or a blob sorts after every number): they are no records of the journal's.
INTEGER_SEQ = "typeof(seq) = 'integer'"
#: ... and from seq 1: what lies below is no record of the journal's either.
_RECORD_SEQ = f"{INTEGER_SEQ} AND seq >= 1"
#: The event type that may open a journal above seq 1 (see the module docstring).
CONTINUED = "journal_continued"
_TRIGGERS = ("journal_no_update", "journal_no_delete", "journal_gapless")
#: Of the triggers another process added, the most a reason names, and the characters of a
#: name it shows.
_NAMED_TRIGGERS, _TRIGGER_NAME_SHOWN = 5, 64
#: The characters of one of SQLite's file-check findings a reason shows.
_PROBLEM_SHOWN = 200
#: A number no journal's seq before its first is written as: where it stands in the schema,
#: the statements the journal expects take any seq.
_ANY_SEQ = 987_654_321_987_654_321


class JournalError(LowballError, RuntimeError):
    """The journal could not be opened or written; the message says which file and why."""


class JournalRecord(NamedTuple):
    seq: int
    ts: str
    type: str
    hand_id: str | None
    message: bytes
    prev_hash: str
    hash: str


class WrittenLinks(NamedTuple):
    """A journal's own last appends as it wrote them: record ``first_seq + i`` links to the
    hash ``hashes[i]``, has the hash ``hashes[i + 1]`` and the message ``messages[i]``."""
    first_seq: int
    hashes: list[str]
    messages: list[bytes]


class VerifyReport(NamedTuple):
    """``ok`` with ``records_checked``; else the first record found bad and why. A problem
    that is no single record's (a missing trigger) has ``first_bad_seq`` None."""

    ok: bool
    records_checked: int
    first_bad_seq: int | None
    reason: str
    last_seq: int = 0
    last_hash: str = GENESIS_HASH


def is_hash(text: object) -> bool:
    """Whether ``text`` is a hash as the journal writes them: 64 lowercase hexadecimal
    digits."""
    return isinstance(text, str) and _HASH.fullmatch(text) is not None


def chain_hash(prev_hash: str, message: bytes) -> str:
    """``sha256(prev_hash + message)`` in hex; ``prev_hash`` is hashed as its ASCII hex."""
    return hashlib.sha256(prev_hash.encode("ascii") + message).hexdigest()


def journal_path(state_dir: str | Path) -> Path:
    """Where the daemon keeps a table's journal under its state directory."""
    return Path(state_dir) / JOURNAL_FILE


Durability = Literal["full", "batched"]
_SYNCHRONOUS: dict[str, str] = {"full": "FULL", "batched": "NORMAL"}


class Journal:
    """The append-only, hash-chained journal of one table (see the module docstring)."""

    def __init__(self, path: str | Path, *, durability: Durability = "full",
                 readonly: bool = False, first_seq: int = 1):
        """``first_seq``: the seq a new journal starts at (above 1 only for the journal that
        continues a quarantined one, whose first record is its ``journal_continued``); an
        existing journal starts where its first record is."""
        if durability not in _SYNCHRONOUS:
            raise ValueError(f"durability must be one of {sorted(_SYNCHRONOUS)}, "
                             f"not {durability!r}")
        if type(first_seq) is not int or not 1 <= first_seq <= MAX_SEQ:
            raise ValueError(f"first_seq must be an integer from 1 to {MAX_SEQ}, "
                             f"not {first_seq!r}")
        self.path = Path(path)
        self.readonly = readonly
        self.durability = durability
        self._first_seq = first_seq
        self._connection = self._open(durability)
        try:  # a sound header over damaged pages opens, and fails here
            last = self.last_record()
            # Only a seq stored as an integer is one: a table made again by another process
            # may hold others, and the check that reads them says where (never this open).
            row = self._connection.execute(
                f"SELECT seq FROM journal WHERE {_RECORD_SEQ} ORDER BY seq LIMIT 1").fetchone()
            first = None if row is None else row[0]
        except READ_ERRORS as error:
            self._connection.close()
            raise JournalError(f"{self.path}: cannot read the journal: "
                               f"{_cause(error, self.path)}") from None
        if first is not None:
            self._first_seq = first
        #: the (device, inode) of the database file and its write-ahead log as opened: the
        #: files the connection writes, whatever is renamed over their names later
        self._opened = {} if readonly else {suffix: _identity(Path(f"{self.path}{suffix}"))
                                             for suffix in ("", "-wal")}
        self._last_seq = last.seq if last else self._first_seq - 1
        self._last_hash = last.hash if last else GENESIS_HASH
        self._table_id = _table_of(last)
        #: the last records this object appended, as it wrote them: their messages, and their
        #: hashes after the hash each links to (see :class:`WrittenLinks`). Texts and bytes
        #: only: the collector never walks them, as it would thousands of kept records.
        self._written_messages: deque[bytes] = deque(maxlen=WRITTEN_KEPT)
        self._written_hashes: deque[str] = deque([self._last_hash], maxlen=WRITTEN_KEPT + 1)

    @classmethod
    def open_readonly(cls, path: str | Path) -> Journal:
        """Open an existing journal for reading (verify, show, replay); never creates one."""
        if not Path(path).is_file():
            raise JournalError(f"no journal at {path}")
        return cls(path, readonly=True)

    def _open(self, durability: str) -> sqlite3.Connection:
        try:
            if self.readonly:
                connection = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro",
                                             check_same_thread=False,
                                             uri=True, isolation_level=None)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                if not self.path.exists():
                    _refuse_leftovers(self.path)
                connection = sqlite3.connect(self.path, isolation_level=None,
                                             check_same_thread=False)
            try:
                self._prepare(connection, durability)
            except BaseException:
                connection.close()
                raise
        except (sqlite3.Error, UnicodeDecodeError, OSError) as error:
            raise JournalError(f"{self.path}: cannot open the journal: "
                               f"{_cause(error, self.path)}") from None
        return connection

    def _prepare(self, connection: sqlite3.Connection, durability: str) -> None:
        application_id = connection.execute("PRAGMA application_id").fetchone()[0]
        tables = connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if application_id == 0 and tables == 0 and not self.readonly:
            connection.execute("PRAGMA journal_mode=WAL")
            schema = _SCHEMA.format(before_first=self._first_seq - 1)
            connection.executescript(f"BEGIN IMMEDIATE; {schema} "
                                     f"PRAGMA application_id={APPLICATION_ID}; "
                                     f"PRAGMA user_version={FORMAT_VERSION}; COMMIT;")
        elif application_id != APPLICATION_ID:
            raise JournalError(f"{self.path}: not a lowball-table journal "
                               f"(SQLite application_id {application_id:#x})")
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if version != FORMAT_VERSION:
            raise JournalError(f"{self.path}: journal format {version}, this program reads "
                               f"format {FORMAT_VERSION}")
        if not self.readonly:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute(f"PRAGMA synchronous={_SYNCHRONOUS[durability]}")

    # --- writing -------------------------------------------------------------------------------

    def append(self, event: Any, *, table_id: str, hand_id: str | None,
               ts: datetime | None = None) -> JournalRecord:
        """Journal ``event`` as the next seq and return its record once it is committed (and,
        with ``durability="full"``, synced). Publish it only after this returns.

        Raises :class:`controller.stream.wire.WireError` for an event that does not fit its wire
        model, :class:`JournalError` for a table id other than the journal's or a failed
        write; either way nothing is written and the seq is not used."""
        return self.append_all([event], table_id=table_id, hand_id=hand_id, ts=ts)[0]

    def append_all(self, events: Sequence[Any], *, table_id: str, hand_id: str | None,
                   ts: datetime | None = None) -> list[JournalRecord]:
        """Journal several events (one input and its effects) in one transaction: all of them,
        with consecutive seqs, or none (same errors as :meth:`append`). One sync for all."""
        if self.readonly:
            raise JournalError(f"{self.path}: opened read-only")
        if self._table_id is not None and table_id != self._table_id:
            raise JournalError(f"{self.path}: the journal is table {self._table_id!r}'s, "
                               f"not {table_id!r}'s")
        when = ts if ts is not None else datetime.now(UTC)
        seq, prev_hash, records, when_text = self._last_seq, self._last_hash, [], ""
        kinds, encode = wire.EVENT_KINDS, wire.encode
        messages, hashes = [], []  # kept as written once the write succeeds
        for event in events:
            seq += 1
            message = encode(event, table_id=table_id, seq=seq, ts=when, hand_id=hand_id)
            when_text = when_text or wire.format_ts(when)  # valid: the message took it
            hash_ = chain_hash(prev_hash, message)
            records.append(JournalRecord(seq, when_text, kinds[type(event)], hand_id, message,
                                         prev_hash, hash_))
            messages.append(message)
            hashes.append(hash_)
            prev_hash = hash_
        if not records:
            return records
        try:
            self._insert(records)
        except READ_ERRORS as error:  # a schema's refusal quoting text not UTF-8 too
            raise JournalError(f"{self.path}: cannot append seq {records[0].seq}"
                               f"{'' if len(records) == 1 else f'-{seq}'}: "
                               f"{_cause(error, self.path)}") from None
        self._last_seq, self._last_hash, self._table_id = seq, prev_hash, table_id
        self._written_messages.extend(messages)
        self._written_hashes.extend(hashes)
        return records

    def _insert(self, records: list[JournalRecord]) -> None:
        """One input's records in one transaction: single-row INSERTs between BEGIN
        IMMEDIATE and COMMIT (see :data:`_INSERT` for why not one statement), committed, with
        ``synchronous=FULL`` synced, when it returns. Atomic: a refused row (by a trigger, a
        full disk) undoes them all, and so does a change the input did not make (a trigger of
        another process that skips a row, ``RAISE(IGNORE)``, or writes one of its own)."""
        connection = self._connection
        connection.execute("BEGIN IMMEDIATE")
        try:
            changes = connection.total_changes
            written = connection.executemany(_INSERT, records).rowcount
            made = connection.total_changes - changes  # the triggers' changes too
            if written != len(records) or made != len(records):
                raise sqlite3.IntegrityError(
                    f"{written} of {len(records)} record(s) written, {made} change(s) in all: "
                    f"a trigger the journal does not have changed what was written")
            connection.execute("COMMIT")
        except BaseException:
            # SQLite ends the transaction itself on some errors (a full disk): a ROLLBACK
            # then would fail and hide the cause.
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise

    # --- reading -------------------------------------------------------------------------------

    @property
    def last_seq(self) -> int:
        """The last journaled seq (:attr:`first_seq` - 1 for an empty journal)."""
        return self._last_seq

    @property
    def first_seq(self) -> int:
        """The seq of the journal's first record: 1, or the seq after the last one of the
        quarantined journal it continues."""
        return self._first_seq

    @property
    def last_hash(self) -> str:
        return self._last_hash

    @property
    def table_id(self) -> str | None:
        """The table the journal belongs to (None until its first record)."""
        return self._table_id

    def last_record(self) -> JournalRecord | None:
        """The record with the highest seq stored as an integer (what another process stored
        as anything else is no seq of the journal's: the checks that read it break there)."""
        rows = self._rows("SELECT seq, ts, type, hand_id, message, prev_hash, hash FROM journal "
                          f"WHERE {_RECORD_SEQ} ORDER BY seq DESC LIMIT 1", ())
        return _record(rows[0]) if rows else None

    def first_table_id(self) -> str | None:
        """The table id the first record's message names (see :attr:`table_id`, the last's)."""
        return _table_of(next(self.records(after_seq=self._first_seq - 1, limit=1), None))

    def last_of(self, *types: str) -> JournalRecord | None:
        """The last record of one of ``types`` (event wire names), or None."""
        marks = ", ".join("?" * len(types))
        rows = self._rows("SELECT seq, ts, type, hand_id, message, prev_hash, hash FROM journal "
                          f"WHERE type IN ({marks}) ORDER BY seq DESC LIMIT 1", types)
        return _record(rows[0]) if rows else None

    def records(self, after_seq: int = 0, limit: int | None = None) -> Iterator[JournalRecord]:
        """Records with seq > ``after_seq`` in seq order, at most ``limit`` of them.

        Reads in batches, so no cursor stays open between batches and appends made while
        iterating are seen (up to ``limit``)."""
        remaining = limit
        while remaining is None or remaining > 0:
            batch = _BATCH if remaining is None else min(_BATCH, remaining)
            rows = self._rows("SELECT seq, ts, type, hand_id, message, prev_hash, hash "
                              "FROM journal WHERE seq > ? ORDER BY seq LIMIT ?",
                              (after_seq, batch))
            for row in rows:
                yield _record(row)
            if len(rows) < batch:
                return
            after_seq = rows[-1][0]
            if remaining is not None:
                remaining -= len(rows)

    def links(self, after_seq: int, limit: int) -> Iterator[tuple[int, str, str, bytes]]:
        """``(seq, prev_hash, hash, message)`` of the records with seq > ``after_seq`` in seq
        order, at most ``limit`` of them: the chain alone, for a check that hashes every
        record again (:mod:`controller.daemon.chain_watch`), read as :meth:`records` reads."""
        for rows in self.link_batches(after_seq, limit):
            yield from rows

    def link_batches(self, after_seq: int,
                     limit: int) -> Iterator[list[tuple[int, str, str, bytes]]]:
        """:meth:`links` as the lists each read returns (a list compares with another in one
        step). A column holds what the file holds: another process may have stored a text
        where the journal stores bytes, or the reverse."""
        while limit > 0:
            rows: list[tuple[int, str, str, bytes]] = self._rows(
                "SELECT seq, prev_hash, hash, message FROM journal WHERE seq > ? "
                "ORDER BY seq LIMIT ?", (after_seq, min(_BATCH, limit)))
            if rows:
                yield rows
            if len(rows) < min(_BATCH, limit):
                return
            after_seq, limit = rows[-1][0], limit - len(rows)

    def _rows(self, sql: str, parameters: Sequence[Any]) -> list[Any]:
        """The rows of a query on the journal. The daemon writes every text as UTF-8; text
        another process stored that is not (SQLite never checks) cannot be read as ``str``:
        the query is then read again with such text decoded as it is (``surrogateescape``),
        so the record that holds it breaks the chain where it is, and no reader fails on it.
        Only that failure is read again: it is Python's module's, not SQLite's, and carries
        no SQLite error code (a locked database or a failing disk does, and fails once)."""
        connection = self._connection
        try:
            return connection.execute(sql, parameters).fetchall()
        except sqlite3.OperationalError as error:
            if getattr(error, "sqlite_errorcode", None) is not None:
                raise
            connection.text_factory = as_stored_text
            try:
                return connection.execute(sql, parameters).fetchall()
            finally:
                connection.text_factory = str

    def written_after(self, seq: int) -> WrittenLinks:
        """The records this object appended after ``seq`` that it still keeps (the last
        :data:`WRITTEN_KEPT`), as it wrote them: what a check of the file compares the stored
        records with (an equal record needs no hashing again)."""
        messages = self._written_messages
        first = self._last_seq - len(messages) + 1
        skip = max(0, seq + 1 - first)
        if skip >= len(messages):
            return WrittenLinks(self._last_seq + 1, [], [])
        return WrittenLinks(first + skip, list(itertools.islice(self._written_hashes, skip, None)),
                            list(itertools.islice(messages, skip, None)))

    def stored_end(self) -> object:
        """The last seq in the file, whoever wrote it, as stored (:attr:`last_seq` is this
        object's own last append): one look at the primary key's end. Not always an int: in a
        table another process made, a seq may be stored as anything (and SQLite sorts a text
        or a blob after every number); 0 for an empty file."""
        return self._connection.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM journal").fetchone()[0]

    def rows_before_first(self) -> str | None:
        """What another process put before the journal's first record (at seq 0 or below, at
        a seq that is no integer below the first, or a lower seq of a table made again),
        which no check that reads from the first record meets: one look at the primary key's
        start. None when there is nothing."""
        stored = self._connection.execute("SELECT MIN(seq) FROM journal").fetchone()[0]
        if stored is None or (type(stored) is int and stored >= self._first_seq):
            return None
        return (f"a row at seq {shown(repr(stored), 40)}, before the journal's first record "
                f"(seq {self._first_seq}): written by another process")

    def recalled(self, count: int) -> Iterator[JournalRecord]:
        """The last ``count`` records (or a few more) in seq order, ending with the last:
        counted by position, not by seq arithmetic, so a gap or a huge seq another process
        wrote does not hide the records before it. Rows whose seq is no integer are skipped."""
        rows = self._rows(f"SELECT seq FROM journal WHERE {_RECORD_SEQ} ORDER BY seq DESC "
                          "LIMIT 1 OFFSET ?", (max(0, count - 1),))
        start = rows[0][0] if rows else self._first_seq
        for record in self.records(after_seq=max(start, self._first_seq) - 1):
            if type(record.seq) is int:
                yield record

    def hash_at(self, seq: int) -> str | None:
        """The stored hash of record ``seq``, or None if there is no such record or what it
    holds is not a hash (64 hexadecimal digits)."""
        rows = self._rows("SELECT hash FROM journal WHERE seq = ?", (seq,))
        stored = rows[0][0] if rows else None
        # what another process left there that is no hash the daemon writes is none
        return stored if is_hash(stored) else None

    def replaced_files(self) -> list[str]:
        """The journal's files (the database, its ``-wal``) whose name no longer leads to the
        file this connection opened and writes: renamed over, moved away or removed. SQLite
        keeps writing an unlinked file, and a restart reads the file at the name. Empty for a
        read-only journal."""
        return [f"{self.path.name}{suffix}" for suffix, opened in self._opened.items()
                if opened is not None and _identity(Path(f"{self.path}{suffix}")) != opened]

    def backup(self, target: str | Path) -> None:
        """A single-file copy of the records this connection reads (its log included) at
        ``target``, synced: the journal as this object wrote it, even when its file is no
        longer at its name."""
        target = Path(target)
        partial = Path(f"{target}.partial")
        partial.unlink(missing_ok=True)
        copy = sqlite3.connect(partial, isolation_level=None)
        try:
            self._connection.backup(copy)
            copy.execute("PRAGMA journal_mode=DELETE")
        finally:
            copy.close()
        fsync_path(partial)
        os.rename(partial, target)
        fsync_path(target.parent)

    def verify(self) -> VerifyReport:
        """Recompute the chain from seq 1 and check every record against its message.

        Checks, record by record (:class:`ChainCheck`): seq is the previous + 1 (a deleted
        record leaves a gap), ``prev_hash`` is the previous record's hash, ``hash`` is the hash
        of ``prev_hash`` and the message, the message parses as an event envelope whose seq,
        type, hand id, time and table id match the record. Then that the append-only triggers
        are in place."""
        check = ChainCheck()
        try:
            for record in self.records():
                check(record)
        except JournalBroken as broken:
            return VerifyReport(False, check.checked, broken.seq, broken.reason,
                                check.last_seq, check.last_hash)
        if (problem := self.schema_problem()) is not None:
            return VerifyReport(False, check.checked, None, problem, check.last_seq,
                                check.last_hash)
        return VerifyReport(True, check.checked, None, "", check.last_seq, check.last_hash)

    def schema_problem(self) -> str | None:
        """What is wrong with the journal's table or triggers, or None
        (:func:`schema_problem`)."""
        return schema_problem(self._connection)

    def file_problems(self, most: int = 5) -> list[str]:
        """What SQLite finds wrong with the file (:func:`file_problems`)."""
        return file_problems(self._connection, most)

    def close(self) -> None:
        self._connection.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def schema_problem(connection: sqlite3.Connection) -> str | None:
    """What is wrong with the schema of the journal ``connection`` reads, or None: its table
    not the statement the journal was made with (a column's ON CONFLICT REPLACE), one of the
    append-only triggers missing or not the statement the journal was made with (one of
    that name that refuses nothing), or a trigger the journal does not have (another
    process's: one that skips a row, ``RAISE(IGNORE)``, would drop records the daemon then
    publishes; :meth:`Journal.append_all` refuses such a write too).

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
    if missing := [name for name in _TRIGGERS if name.encode() not in found]:
        problems.append(f"append-only trigger(s) missing: {', '.join(missing)}")
    if changed := [name.decode() for name, sql in found.items()
                   if name != b"journal" and not expected[name].fullmatch(sql)]:
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
        connection.executescript(_SCHEMA.format(before_first=_ANY_SEQ))
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


def shown(text: str | bytes, most: int) -> str:
    """Text read from the file, as a reason, a log line or a terminal may carry it: at most
    ``most`` characters, ASCII, every other character (a control, a byte that is not UTF-8)
    escaped as Python writes it.

    >>> shown("Page 5: never used", 80), shown(b"t\\xff\\x1b[2J", 80), shown("x" * 9, 4)
    ('Page 5: never used', 't\\\\xff\\\\x1b[2J', 'xxxx...')
    """
    if isinstance(text, bytes):  # as text read as stored: a byte not UTF-8, a lone surrogate
        text = text.decode("utf-8", "surrogateescape")
    escaped = "".join(c if c.isascii() and c.isprintable() else
                      f"\\x{ord(c) - 0xDC00:02x}" if "\udc80" <= c <= "\udcff" else
                      ascii(c)[1:-1] for c in text[:most])
    return escaped + ("..." if len(text) > most else "")


def leftovers(path: Path) -> list[Path]:
    """Files beside a journal's name that hold its records when its database file is not
    there: its write-ahead log and index, or a quarantine's unfinished new journal."""
    names = [Path(f"{path}{suffix}") for suffix in (*COMPANIONS, CONTINUING_SUFFIX)]
    return [name for name in names if name.exists()]


def _refuse_leftovers(path: Path) -> None:
    """A new journal is never created over another one's files: SQLite would discard a
    write-ahead log it finds without its database, and the committed records in it."""
    found = leftovers(path)
    if found:
        raise JournalError(
            f"{path}: no journal database, but {', '.join(str(name) for name in found)} "
            f"{'is' if len(found) == 1 else 'are'} there and hold{'s' if len(found) == 1 else ''}"
            f" journaled records (an interrupted quarantine, or the database file moved "
            f"without them): a new journal would destroy them. Run `lowball-table journal "
            f"quarantine --state-dir {path.parent} --reason TEXT` to finish an interrupted "
            f"quarantine, or put the database file back beside them; never delete them")


def _identity(path: Path) -> tuple[int, int] | None:
    """The (device, inode) of the file at ``path``, or None if there is none (or what is at
    the name cannot be followed to a file: a link that loops, or leads through a file)."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def fsync_path(path: Path) -> None:
    """fsync a file or a directory (a rename is durable once its directory is synced)."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _table_of(record: JournalRecord | None) -> str | None:
    """The table id the record's message names; None if there is none, or the message does
    not parse (a damaged journal: :meth:`Journal.verify` says where)."""
    if record is None:
        return None
    try:
        return wire.decode_event(record.message).table_id
    except wire.WireError:
        return None


def _cause(error: sqlite3.Error | UnicodeDecodeError | OSError, path: Path) -> str:
    """What stopped a journal write, in words that say what to do."""
    if isinstance(error, OSError):
        return f"{error.strerror or error} ({path.parent}); the daemon's user needs to " \
               f"create and write files there"
    code = getattr(error, "sqlite_errorcode", None)
    free = _free_bytes(path.parent)
    if code == sqlite3.SQLITE_FULL or (code is not None and code & 0xFF == sqlite3.SQLITE_IOERR
                                       and free is not None and free < _DISK_FULL_BYTES):
        return f"disk full: the file system of {path.parent} has no room left " \
               f"({error}); free space there, then start the daemon again"
    if code is not None and code & 0xFF == sqlite3.SQLITE_IOERR:
        return f"{error} ({getattr(error, 'sqlite_errorname', code)}, with free space " \
               f"{free} bytes): check the disk and the file size limit (ulimit -f, " \
               f"LimitFSIZE=)"
    if code is not None and code & 0xFF in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN,
                                            sqlite3.SQLITE_PERM):
        return f"{error}: the daemon's user needs to read and write {path.parent} and the " \
               f"journal files in it"
    return str(error)


#: Less free space than this on a failed write counts as a full disk.
_DISK_FULL_BYTES = 1 << 20


def _free_bytes(directory: Path) -> int | None:
    try:
        stats = os.statvfs(directory)
    except OSError:
        return None
    return stats.f_bavail * stats.f_frsize


def _record(row: tuple[Any, ...]) -> JournalRecord:
    seq, ts, kind, hand_id, message, prev_hash, hash_ = row
    return JournalRecord(seq, ts, kind, hand_id, as_stored(message), prev_hash, hash_)


def as_stored_text(stored: bytes) -> str:
    """Text as SQLite holds it, valid UTF-8 or not (each byte that is not: a lone surrogate,
    which no hash, seq or event type the daemon wrote contains)."""
    return stored.decode("utf-8", "surrogateescape")


def _stored_bytes(text: str) -> bytes:
    """The bytes SQLite holds for ``text`` read by :func:`as_stored_text` (bytes that are not
    UTF-8 come back as they are)."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no byte escaped: there is no other way to write it
        return text.encode("utf-8", "surrogatepass")


def as_stored(message: object) -> bytes:
    """A record's message as read from the file. The daemon writes every message as a BLOB;
    a message of another storage class (TEXT, which SQLite's ``||`` makes of any edit, a
    number, NULL) was put there by another process, and is read as bytes that begin with its
    type's name between NULs: never a message's JSON, never the bytes its hash was made of,
    so every check finds the record altered where it is, and none fails on a type.

    >>> as_stored(b'{"seq":1}'), as_stored('{"seq":1}')
    (b'{"seq":1}', b'\\x00str\\x00{"seq":1}')
    """
    if type(message) is bytes:
        return message
    text = _stored_bytes(message) if isinstance(message, str) else \
        repr(message).encode("ascii", "backslashreplace")
    return b"\0" + type(message).__name__.encode("ascii") + b"\0" + text


class JournalBroken(JournalError):
    """A record breaks the hash chain: ``seq`` is the first bad one, ``reason`` says how."""

    def __init__(self, seq: int, reason: str):
        super().__init__(f"journal broken at seq {seq}: {reason}")
        self.seq, self.reason = seq, reason


class ChainCheck:
    """Checks records one at a time, in seq order from the journal's first, as they are read:
    call it with each record; it returns the record's envelope, or raises
    :class:`JournalBroken` at the first bad one. ``last_seq`` and ``last_hash`` are those of the
    last sound record. The first record is seq 1, or a ``journal_continued`` whose seq follows
    the ``archived_seq`` it names (a journal that continues a quarantined one). ``table_id``:
    the table every record must be of (a reader that knows it: the daemon); else the first
    record's."""

    def __init__(self, table_id: str | None = None) -> None:
        self.checked = 0
        self.last_seq = 0
        self.last_hash = GENESIS_HASH
        self.table_id = table_id

    def __call__(self, record: JournalRecord) -> wire.EnvelopeBase:
        expected_seq = self.last_seq + 1
        if type(record.seq) is not int:
            raise seq_not_an_integer(self.last_seq, record.seq)
        if self.checked == 0 and record.seq > expected_seq and record.type == CONTINUED:
            envelope = _checked(record, GENESIS_HASH, self.table_id)
            archived_seq = getattr(envelope.data, "archived_seq", None)
            if archived_seq != record.seq - 1:
                raise JournalBroken(record.seq, f"the journal starts at seq {record.seq} with a "
                                                f"journal_continued that names archived seq "
                                                f"{archived_seq}, not {record.seq - 1}")
            self.table_id = envelope.table_id
            self.last_seq, self.last_hash, self.checked = record.seq, record.hash, 1
            return envelope
        if record.seq != expected_seq:
            missing = (f"seq {expected_seq}" if record.seq == expected_seq + 1
                       else f"seq {expected_seq} to {record.seq - 1}")
            raise JournalBroken(expected_seq,
                                f"record {missing} missing (next record is seq {record.seq})")
        envelope = _checked(record, self.last_hash, self.table_id)
        self.table_id = envelope.table_id
        self.last_seq, self.last_hash, self.checked = record.seq, record.hash, self.checked + 1
        return envelope


def check_alone(record: JournalRecord, table_id: str | None) -> wire.EnvelopeBase:
    """A record checked on its own: its hash, message and columns, but not its link to the
    record before it (for reading a broken journal past its first bad record, where such a
    record is found, not verified); :class:`JournalBroken` if it is not sound even so."""
    return _checked(record, record.prev_hash, table_id)


def seq_not_an_integer(last_seq: int, stored: object) -> JournalBroken:
    """The break at a record read back whose seq is no ``int``: the journal's own table makes
    every seq one (a rowid), so its table was made again by another process (``==`` alone
    would take 4.0 for 4)."""
    return JournalBroken(last_seq + 1, f"the record after seq {last_seq} has the seq "
                                       f"{shown(repr(stored), 40)}, not an integer: the "
                                       f"journal's table was made again by another process")


def _checked(record: JournalRecord, prev_hash: str,
             table_id: str | None) -> wire.EnvelopeBase:
    """The envelope of a record in its place; :class:`JournalBroken` if it is not sound."""
    seq = record.seq
    if record.prev_hash != prev_hash:
        raise JournalBroken(seq, "prev_hash does not match the previous record's hash")
    if not is_hash(record.prev_hash):  # another process's text, blob or number
        raise JournalBroken(seq, "prev_hash is not a hash")
    if record.hash != chain_hash(record.prev_hash, record.message):
        raise JournalBroken(seq, "hash does not match prev_hash + message "
                                 "(the message was altered)")
    try:
        envelope = wire.decode_event(record.message)
    except wire.WireError as error:
        raise JournalBroken(seq, f"message does not parse: {error}") from None
    kind: str | None = envelope.type
    if envelope.schema_version != wire.SCHEMA_VERSION:
        # An older record is read in today's form, which may be another type than it was
        # written with (a version 1 device fault): the column holds the type as written.
        kind = wire.type_as_written(record.message)
    if (record.seq == envelope.seq and record.type == kind
            and record.hand_id == envelope.hand_id and _ts_of(record.message) == record.ts
            and (table_id is None or envelope.table_id == table_id)):
        return envelope  # the common case, without formatting the time (a third of the cost)
    mismatches = [f"{name} {column!r} but the message says {value!r}"
                  for name, column, value in (
                      ("seq", record.seq, envelope.seq),
                      ("type", record.type, kind),
                      ("hand_id", record.hand_id, envelope.hand_id),
                      ("ts", record.ts, wire.format_ts(envelope.ts)))
                  if column != value]
    if table_id is not None and envelope.table_id != table_id:
        mismatches.append(f"table_id {envelope.table_id!r} in a journal of table {table_id!r}")
    if not mismatches:  # the time is the message's, written another way
        mismatches.append(f"ts {record.ts!r} is not written as the canonical message writes it")
    raise JournalBroken(seq, "record column " + "; ".join(mismatches))


_TS_KEY = b',"ts":"'
_TS_LENGTH = len("2026-11-21T23:50:00.123456Z")


def _ts_of(message: bytes) -> str | None:
    """The envelope's ``ts`` as written in a canonical message (sorted keys: it follows
    ``data``, so its last occurrence is the envelope's), or None."""
    at = message.rfind(_TS_KEY)
    if at < 0:
        return None
    start = at + len(_TS_KEY)
    return message[start:start + _TS_LENGTH].decode("ascii", "replace")

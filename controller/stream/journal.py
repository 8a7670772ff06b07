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

This module is the journal's storage (the file, appending, reading). Its other jobs are
modules of their own, whose names are importable from here too: what a record and its link
are (:mod:`controller.stream.journal_records`), checking the chain
(:mod:`controller.stream.journal_chain`), the schema's audit
(:mod:`controller.stream.journal_schema`) and reading text another process stored
(:mod:`controller.stream.journal_text`).
"""

from __future__ import annotations

import itertools
import os
import sqlite3
from collections import deque
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, NamedTuple

from controller.stream import wire
# The journal's other jobs, each a module of its own; their names are importable from here too.
from controller.stream.journal_chain import (
    CONTINUED as CONTINUED,
    ChainCheck as ChainCheck,
    VerifyReport as VerifyReport,
    check_alone as check_alone,
    seq_not_an_integer as seq_not_an_integer,
)
from controller.stream.journal_records import (
    GENESIS_HASH as GENESIS_HASH,
    Checkpoint as Checkpoint,
    JournalBroken as JournalBroken,
    JournalError as JournalError,
    JournalRecord as JournalRecord,
    chain_hash as chain_hash,
    is_hash as is_hash,
)
from controller.stream.journal_schema import (
    APPLICATION_ID as APPLICATION_ID,
    CHECKPOINT_SCHEMA,
    FORMAT_VERSION as FORMAT_VERSION,
    INTEGER_SEQ as INTEGER_SEQ,
    RECORD_SEQ as _RECORD_SEQ,
    SCHEMA,
    file_problems as file_problems,
    schema_problem as schema_problem,
)
from controller.stream.journal_text import (
    READ_ERRORS as READ_ERRORS,
    as_stored as as_stored,
    as_stored_text as as_stored_text,
    shown as shown,
)

JOURNAL_FILE = "journal.sqlite3"
MAX_SEQ = wire.MAX_SEQ
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
#: The journal's table and triggers (:data:`controller.stream.journal_schema.SCHEMA`).
_SCHEMA = SCHEMA


class WrittenLinks(NamedTuple):
    """A journal's own last appends as it wrote them: record ``first_seq + i`` links to the
    hash ``hashes[i]``, has the hash ``hashes[i + 1]`` and the message ``messages[i]``."""
    first_seq: int
    hashes: list[str]
    messages: list[bytes]


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
            schema = _SCHEMA.format(before_first=self._first_seq - 1) + CHECKPOINT_SCHEMA
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
            if connection.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' "
                                  "AND name = 'checkpoint'").fetchone()[0] == 0:
                # a journal made before checkpoints gains their table (nothing else changes)
                connection.executescript(f"BEGIN IMMEDIATE; {CHECKPOINT_SCHEMA} COMMIT;")

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

    def write_checkpoint(self, state: bytes) -> Checkpoint:
        """Store ``state`` as the checkpoint at the last record this object appended, bound to
        it (see :class:`Checkpoint`), committed (and synced as the records are) when it
        returns; :class:`JournalError` if it cannot be written."""
        if self.readonly:
            raise JournalError(f"{self.path}: opened read-only")
        if self._last_seq < self._first_seq:
            raise JournalError(f"{self.path}: no record to checkpoint after")
        checkpoint = Checkpoint(self._last_seq, state, self._last_hash,
                                chain_hash(self._last_hash, state))
        connection = self._connection
        try:
            connection.execute("BEGIN IMMEDIATE")
            try:
                connection.execute("INSERT INTO checkpoint (seq, state, prev_hash, hash) "
                                   "VALUES (?, ?, ?, ?)", checkpoint)
                connection.execute("COMMIT")
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise
        except READ_ERRORS as error:
            raise JournalError(f"{self.path}: cannot write the checkpoint at seq "
                               f"{checkpoint.seq}: {_cause(error, self.path)}") from None
        return checkpoint

    # --- reading -------------------------------------------------------------------------------

    def checkpoints(self, most: int) -> list[Checkpoint]:
        """The newest ``most`` checkpoints at or below the last record, newest first, as
        stored (the caller checks them: see :mod:`controller.daemon.checkpoints`); none in a
        journal made before checkpoints. A column holds what the file holds: another process
        may have stored anything there."""
        try:
            rows = self._rows("SELECT seq, state, prev_hash, hash FROM checkpoint WHERE "
                              f"{INTEGER_SEQ} AND seq <= ? ORDER BY seq DESC LIMIT ?",
                              (self._last_seq, most))
        except sqlite3.OperationalError as error:
            if "no such table" in str(error):
                return []
            raise
        return [Checkpoint(seq, as_stored(state), prev_hash, hash_)
                for seq, state, prev_hash, hash_ in rows]


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



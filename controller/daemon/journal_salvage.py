"""Reading what can be read of a journal whose file is damaged (pages a failing disk wrote
over), for the quarantine (:mod:`controller.daemon.journal_quarantine`).

SQLite answers a query that reaches a damaged page with ``sqlite3.Error`` (``database disk
image is malformed``), and a damaged page under the b-tree's first or last leaf fails even
the opening look at the journal's ends. :class:`SalvagedJournal` reads the records in seq
batches as :meth:`controller.stream.journal.Journal.records` does; when a batch fails it reads
the window of seqs after the last record read one by one (``WHERE seq = ?``), notes the seqs
it cannot read (:class:`Unreadable`) and goes on past them. Once it has read one by one as
many seqs as the file can hold records (its size over :data:`MIN_RECORD_BYTES`), a window in
which no record can be read doubles the next one, of which only the first seqs are tried: a
wholly damaged file ends in bounded time whatever seqs it claims (a stored end past any seq a
journal could continue from, :data:`MAX_SEQ`, is taken for damage).

The seqs it could not read are neither verified nor found: the chain breaks at the first of
them. The stored end (``MAX(seq)``) is read apart from the records: when it cannot be read,
:meth:`SalvagedJournal.seq_bound` bounds the seqs the file can hold from its size, so the
journal that continues it never reuses one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from controller.stream.event_encoder import MAX_EVENT_INT
from controller.stream.journal import (
    APPLICATION_ID,
    FORMAT_VERSION,
    INTEGER_SEQ,
    READ_ERRORS,
    JournalError,
    JournalRecord,
    as_stored,
    as_stored_text,
    file_problems,
    schema_problem,
)
from controller.stream.write_ahead_log import frames_lost

#: The highest seq a journal continued past this one could name: ``journal_continued``
#: carries the archived last seq as an event's integer (and a journal may hold no more).
MAX_SEQ = MAX_EVENT_INT

_COLUMNS = "seq, ts, type, hand_id, message, prev_hash, hash"
#: Seqs read in one batch, and point-read when a batch fails.
WINDOW = 500
#: Seqs tried at the start of a window after a window in which none could be read.
PROBE = 16
#: No record of the journal table takes fewer bytes of the file: its two hashes alone are 128
#: characters. The file (with its log) holds at most its size / this many records.
MIN_RECORD_BYTES = 128
#: The most ranges of unreadable seqs named in a record or a message (the rest are counted).
NAMED_RANGES = 4


class Unreadable(NamedTuple):
    """Seqs ``first`` to ``last`` (inclusive) could not be read (``error``: SQLite's words),
    or were not tried, past a run of seqs that could not be read."""

    first: int
    last: int
    error: str


class SalvagedJournal:
    """A damaged journal, opened read-only, read as far as it can be (module docstring).
    :class:`JournalError` if it cannot be opened as a lowball-table journal at all."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if not self.path.is_file():
            raise JournalError(f"no journal at {self.path}")
        try:
            self._connection = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro",
                                               uri=True, isolation_level=None)
        except READ_ERRORS as error:
            raise JournalError(f"{self.path}: cannot open the journal: {error}") from None
        # Text that is not UTF-8 (another process's edit) is read as stored, as the journal
        # reads it: an altered record where it is, not an unreadable page with SQLite's error
        # quoting its text.
        self._connection.text_factory = as_stored_text
        try:
            application_id = self._one("PRAGMA application_id")
            version = self._one("PRAGMA user_version")
        except READ_ERRORS as error:
            self._connection.close()
            raise JournalError(f"{self.path}: cannot read the journal's header: "
                               f"{error}") from None
        if application_id != APPLICATION_ID or version != FORMAT_VERSION:
            self._connection.close()
            raise JournalError(f"{self.path}: not a lowball-table journal of format "
                               f"{FORMAT_VERSION} (application_id {application_id:#x}, "
                               f"format {version})")
        #: committed frames of the log SQLite drops (:func:`frames_lost`), or None
        self.log_lost = frames_lost(self.path)
        #: what SQLite's own check finds wrong with the file (:func:`file_problems`)
        self.file_problems = file_problems(self._connection, 20)
        #: ``MAX(seq)`` as stored (0: no record), or None when the end cannot be read, or
        #: cannot be trusted: the log drops committed frames, or SQLite's check finds pages
        #: its b-tree does not reach ("never used": an older page a lost write put back
        #: hides the records under the newer one, and ``MAX(seq)`` is then the end of what is
        #: left; a damaged page leaves the stored end as it was)
        untrusted = self.log_lost is not None or \
            any("never used" in problem for problem in self.file_problems)
        self.stored_last_seq: int | None = None if untrusted else self._end("MAX")
        self._first: int | None = self._end("MIN")
        if self._first is None and self.stored_last_seq:
            # its seqs run without a gap to the stored end, and the file holds so many at
            # most: the first is no lower (a journal that continues another starts high)
            self._first = max(1, self.stored_last_seq - self._most_records() + 1)
        #: the seqs the last full pass of :meth:`records` could not read
        self.unreadable: tuple[Unreadable, ...] = ()
        #: the last record that pass read
        self.last_read: JournalRecord | None = None

    def _one(self, sql: str, *parameters: Any) -> Any:
        return self._connection.execute(sql, parameters).fetchone()[0]

    def _end(self, which: str) -> int | None:
        try:  # the first or last row read as a record (an index walk that stops at once)
            value = self._one(f"SELECT COALESCE((SELECT seq FROM journal WHERE {INTEGER_SEQ} ORDER "
                              f"BY seq {'DESC' if which == 'MAX' else 'ASC'} LIMIT 1), 0)")
        except READ_ERRORS:
            return None
        # a stored end past any seq a journal could continue from is damage, not an end
        return value if type(value) is int and 0 <= value <= MAX_SEQ // 2 else None

    def stored_head(self) -> JournalRecord | None:
        """The stored last record, or None if there is none or it cannot be read."""
        try:
            row = self._connection.execute(f"SELECT {_COLUMNS} FROM journal "
                                           f"ORDER BY seq DESC LIMIT 1").fetchone()
        except READ_ERRORS:
            return None
        return None if row is None else _record(row)

    def records(self) -> Iterator[JournalRecord]:
        """Every record that can be read, in seq order; :attr:`unreadable` and
        :attr:`last_read` are set once the pass ends."""
        unreadable: list[Unreadable] = []
        limit = self.stored_last_seq if self.stored_last_seq is not None else MAX_SEQ
        after = max(self._first - 1, 0) if self._first else 0
        stride, budget = WINDOW, self._most_records() + WINDOW
        most, read_in_all = budget, 0  # no file gives more records than it can hold
        self.last_read = None
        while after < limit:
            try:
                # rows whose seq is no integer are passed over: no record after them is lost
                rows = [_record(row) for row in self._connection.execute(
                    f"SELECT {_COLUMNS} FROM journal WHERE seq > ? AND {INTEGER_SEQ} "
                    f"ORDER BY seq LIMIT ?",
                    (after, WINDOW)).fetchall()]
            except READ_ERRORS as error:
                end = min(after + stride, limit)
                tried = min(after + (WINDOW if stride == WINDOW else PROBE), end)
                budget -= tried - after
                read = False
                for seq in range(after + 1, tried + 1):
                    try:
                        row = self._connection.execute(
                            f"SELECT {_COLUMNS} FROM journal WHERE seq = ? AND {INTEGER_SEQ}",
                            (seq,)).fetchone()
                    except READ_ERRORS as point_error:
                        _note(unreadable, seq, seq, str(point_error))
                        continue
                    if row is not None:
                        read = True
                        self.last_read = _record(row)
                        yield self.last_read
                if tried < end:
                    _note(unreadable, tried + 1, end, f"not tried, past unreadable seqs "
                                                      f"({error})")
                # Seqs run without a gap: past as many seqs as the file can hold records, the
                # rest are probed, ever further apart.
                after = end
                stride = WINDOW if read or budget > 0 else min(stride * 2, MAX_SEQ)
                continue
            stride = WINDOW
            for record in rows:
                if record.seq <= after or read_in_all >= most:
                    # a b-tree that leads back (a page pointing to itself or to an earlier
                    # one) reads the same records again: damage, the rest is not read
                    _note(unreadable, after + 1, limit, "the pages lead back to records read "
                                                        "already: the rest cannot be found")
                    self.unreadable = tuple(unreadable)
                    return
                self.last_read, after, read_in_all = record, record.seq, read_in_all + 1
                yield record
            if len(rows) < WINDOW:
                break  # the b-tree's end, reached without an error
        self.unreadable = tuple(unreadable)

    def seq_bound(self) -> int:
        """The highest seq the file can hold: the stored ``MAX(seq)`` when it can be read, else
        the last record read + the most records the file and its log could hold past it
        (seqs run without a gap: the journal's trigger refuses any other). At least the last
        record read; read :meth:`records` first."""
        last = self.last_read.seq if self.last_read is not None else 0
        if self.stored_last_seq is not None:
            return max(self.stored_last_seq, last)
        return min(max(last, self._first or 0) + self._most_records(), MAX_SEQ - 1)

    def _most_records(self) -> int:
        """The most records the file and its log can hold."""
        size = 0
        for suffix in ("", "-wal"):
            try:
                size += Path(f"{self.path}{suffix}").stat().st_size
            except OSError:
                continue
        return size // MIN_RECORD_BYTES + 1

    def schema_problem(self) -> str | None:
        """What is wrong with the journal's table or triggers; None if the schema cannot be
        read (the damaged pages are the break then)."""
        try:
            return schema_problem(self._connection)
        except READ_ERRORS:
            return None

    def close(self) -> None:
        self._connection.close()

    def __enter__(self) -> SalvagedJournal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def count(unreadable: tuple[Unreadable, ...], after: int, through: int) -> int:
    """How many of the seqs after ``after`` through ``through`` ``unreadable`` names."""
    return sum(max(0, min(gap.last, through) - max(gap.first, after + 1) + 1)
               for gap in unreadable)


def described(unreadable: tuple[Unreadable, ...], through: int, open_end: bool = False) -> str:
    """``unreadable`` in words, up to seq ``through``, naming at most :data:`NAMED_RANGES`
    ranges. ``open_end``: the journal's end cannot be read, so a range that reaches
    ``through`` is named as from its first seq on (the seqs after the last record are not
    known to exist)."""
    shown = [gap for gap in unreadable if gap.first <= through]
    spans = [f"{gap.first} on" if open_end and gap.last >= through
             else f"{gap.first}" if gap.first == min(gap.last, through)
             else f"{gap.first}-{min(gap.last, through)}" for gap in shown[:NAMED_RANGES]]
    more = f" and {len(shown) - NAMED_RANGES} more range(s)" if len(shown) > NAMED_RANGES else ""
    error = shown[0].error if shown else ""
    return (f"seqs unreadable (damaged pages: {error[:80]}): {', '.join(spans)}{more}")


def _note(unreadable: list[Unreadable], first: int, last: int, error: str) -> None:
    if unreadable and unreadable[-1].last + 1 == first:
        unreadable[-1] = unreadable[-1]._replace(last=last)
    else:
        unreadable.append(Unreadable(first, last, error))


def _record(row: tuple[Any, ...]) -> JournalRecord:
    seq, ts, kind, hand_id, message, prev_hash, hash_ = row
    # a message of another storage class is read as the journal reads it (as_stored): bytes
    # no hash matches, so the quarantine finds the record altered where verify does
    return JournalRecord(seq, ts, kind, hand_id, as_stored(message), prev_hash, hash_)

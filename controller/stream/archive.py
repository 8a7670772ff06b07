"""The journals a quarantine set aside, served read-only to a subscriber that was behind.

A quarantined journal's successor starts at the archived journal's last seq + 1 and holds
nothing before its ``journal_continued``. The records before it were written, journaled and
published before the break: they are the evidence, and a subscriber that had not read them
yet (the floor's store, a surveillance officer's watch) must get them, or be told exactly
which are gone and why. :class:`Archives` serves them from the archived journal that
``journal_continued`` names (and from the one that journal continues, and so on):

- the records up to the archived journal's first bad record (``first_bad_seq`` - 1: the
  chain the quarantine verified), each checked again as it is served (its hash, its message,
  its link to the record before), in runs announced as from the archive (:class:`Run`);
- the rest, and anything that cannot be served (an archive missing, unreadable, or not the
  journal ``journal_continued`` names by its last seq and hash), as one :class:`Lost` range
  with the reason and the file that keeps them: never skipped silently.

The archives are found once, on the first request for a seq before the journal's first, and
stay open read-only (a quarantine runs with the daemon stopped: they do not change under it).
A name is followed only to a file under the journal's own directory.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from controller.stream.journal import (
    CONTINUED,
    GENESIS_HASH,
    Journal,
    JournalBroken,
    JournalError,
    JournalRecord,
    check_alone,
)

#: The most archived journals followed back (each is a supervisor's quarantine).
MAX_ARCHIVES = 64
#: The single-file copy a quarantine keeps beside the archived journal (read if it is not).
COPY_SUFFIX = ".copy.sqlite3"


class Run(NamedTuple):
    """Records of the archived journal ``archived``, in seq order, each checked."""

    archived: str
    records: list[JournalRecord]


class Lost(NamedTuple):
    """The seqs ``first`` to ``last`` are not served: ``reason`` says why."""

    first: int
    last: int
    reason: str


class _Span(NamedTuple):
    """One archived journal: its seqs ``first`` to ``last``, served through ``verified``."""

    first: int
    last: int
    verified: int
    archived: str
    #: why the seqs after ``verified`` (or all of them, without a journal) are not served
    why: str
    journal: Journal | None


class Archives:
    """The archived journals ``journal`` continues (used from the publisher's thread)."""

    def __init__(self, journal: Journal, table_id: str):
        self._journal = journal
        self._table_id = table_id
        self._spans: list[_Span] | None = None
        #: why the seqs before the oldest archived journal found are not served
        self._before_oldest = "the table's journal does not continue a quarantined one"

    def serve(self, after: int, through: int) -> Iterator[Run | Lost]:
        """The archived records after ``after`` through ``through`` (a seq before the
        journal's first), in seq order: runs of checked records, and what is lost, every seq
        of the range in one or the other."""
        spans = self._find() if self._spans is None else self._spans
        for span in sorted(spans, key=lambda span: span.first):
            if after >= through:
                return
            if span.last <= after:
                continue
            if span.first > after + 1:  # below the oldest archive found
                end = min(span.first - 1, through)
                yield Lost(after + 1, end, f"no archived journal holds seq {after + 1} to "
                                            f"{end}: {self._before_oldest}")
                after = end
                if after >= through:
                    return
            end = min(span.last, through)
            served = after
            if span.journal is not None and after < span.verified:
                run, served, problem = _checked_run(span, after, min(span.verified, end),
                                                    self._table_id)
                if run:
                    yield Run(span.archived, run)
                if problem is not None:
                    yield Lost(served + 1, end, problem)
                    after = end
                    continue
            if served < end:
                yield Lost(served + 1, end, span.why)
            after = end
        if after < through:
            yield Lost(after + 1, through, f"no archived journal holds seq {after + 1} to "
                                           f"{through}: {self._before_oldest}")

    def _find(self) -> list[_Span]:
        """Follow ``journal_continued`` back from the journal, archive by archive."""
        spans: list[_Span] = []
        base = self._journal.path.parent.resolve()
        current: Journal | None = self._journal
        while current is not None and len(spans) < MAX_ARCHIVES:
            first = next(current.records(after_seq=current.first_seq - 1, limit=1), None)
            if first is None or first.type != CONTINUED:
                if spans:
                    self._before_oldest = (f"the archived journal {spans[-1].archived} "
                                           f"continues none")
                break
            try:
                data = check_alone(first, self._table_id).data
            except JournalBroken as error:
                self._before_oldest = (f"the journal_continued at seq {first.seq} that names "
                                       f"them is damaged ({error.reason})")
                break
            archived, last = str(getattr(data, "archived")), int(getattr(data, "archived_seq"))
            first_bad = int(getattr(data, "first_bad_seq"))
            kept = f"the records are kept in {archived}"
            journal, problem = _open(base, archived, last, str(getattr(data, "archived_hash")))
            if journal is None:
                spans.append(_Span(1, last, 0, archived, f"{problem}; {kept}", None))
                self._before_oldest = problem
                break
            spans.append(_Span(journal.first_seq, last, min(first_bad - 1, last), archived,
                               f"the archived journal's chain broke at seq {first_bad} "
                               f"({getattr(data, 'broken')}): from there on its records are "
                               f"found, not verified; {kept}", journal))
            current = journal
        else:
            if current is not None and spans:
                self._before_oldest = f"more than {MAX_ARCHIVES} archived journals"
        self._spans = spans
        return spans

    def close(self) -> None:
        for span in self._spans or ():
            if span.journal is not None:
                span.journal.close()
        self._spans = None


def _open(base: Path, archived: str, last: int, last_hash: str) -> tuple[Journal | None, str]:
    """The archived journal ``archived`` names under ``base``, if it is the one that ends at
    seq ``last`` with ``last_hash`` (its single-file copy if the file cannot be read); else
    None and why."""
    path = (base / archived).resolve()
    if not path.is_relative_to(base) or path.suffix != ".sqlite3":
        return None, f"the archived journal {archived!r} is not a journal under {base}"
    problem = f"the archived journal {archived} cannot be read"
    for candidate in (path, Path(f"{path.with_suffix('')}{COPY_SUFFIX}")):
        try:
            journal = Journal.open_readonly(candidate)
        except JournalError as error:
            problem = str(error)
            continue
        head = journal.last_record()
        if head is not None and (head.seq, head.hash) == (last, last_hash):
            return journal, ""
        journal.close()
        problem = (f"the archived journal {candidate.relative_to(base)} is not the one "
                   f"journal_continued names (it ends at seq {head.seq if head else 0}, "
                   f"not at seq {last} with hash {last_hash[:12]}...)")
    return None, problem


def _checked_run(span: _Span, after: int, through: int, table_id: str
                 ) -> tuple[list[JournalRecord], int, str | None]:
    """The records of ``span`` after ``after`` through ``through``, each checked on its own
    and against the record before; the last seq served and, if a record fails, why the rest
    of the span is not served."""
    journal = span.journal
    assert journal is not None
    prev = GENESIS_HASH if after < span.first else journal.hash_at(after)
    run: list[JournalRecord] = []
    expected = max(after, span.first - 1) + 1
    for record in journal.records(after_seq=after, limit=through - after):
        problem = None
        if record.seq != expected:
            problem = f"record seq {expected} is missing"
        elif record.prev_hash != prev:
            problem = "its prev_hash does not match the record before"
        else:
            try:
                check_alone(record, table_id)
            except JournalBroken as error:
                problem = error.reason
        if problem is not None:
            return run, expected - 1, (f"the archived journal {span.archived} no longer checks "
                                       f"at seq {expected} ({problem}): altered since it was "
                                       f"archived; the records are kept there")
        run.append(record)
        prev, expected = record.hash, expected + 1
    if expected <= through:
        return run, expected - 1, (f"the archived journal {span.archived} ends at seq "
                                   f"{expected - 1}, before seq {through}")
    return run, through, None


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
- the rest, and anything that cannot be served, as one :class:`Lost` range with the reason
  and the file that keeps them: never skipped silently.

A file is served from only if it is the journal the quarantine read: it ends at the seq and
hash ``journal_continued`` names (``archived_seq``, ``archived_hash``), and the chain of its
records from its first to ``first_bad_seq`` - 1, recomputed from their messages, ends at the
hash the quarantine verified there (``verified_hash``). The chain alone has no key (anyone
who can write the file can chain records of their own), so the last record alone ties
nothing before the break to the quarantine's reading: the anchor does. The archive is tried,
then its single-file copy; each is taken only where it resolves to a file under the state
directory (the journal's own), never through a link out of it. A ``journal_continued`` with
no anchor (written by an older release) names its archive's records lost: nothing vouches
for them.

The archives are found and checked when the daemon starts (:meth:`Archives.find`; checking
a long chain takes seconds, which must not come out of the table's turn), or else on the
first request for a seq before the journal's first, and stay open read-only (a quarantine
runs with the daemon stopped: they do not change under it). When one cannot be served
(missing, unreadable, not the one named), the search is made again on a request at least
:data:`RETRY_SECONDS` later, from that archive on, so a file put back is served without a
restart; a file already found not to be the one is not read again while it is unchanged. A reason names an archive by its name
under the state directory and says what is wrong in fixed words: never a path outside it,
never an error's own text.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

from controller.stream.journal import (
    COMPANIONS,
    CONTINUED,
    GENESIS_HASH,
    Journal,
    JournalBroken,
    JournalError,
    JournalRecord,
    chain_hash,
    check_alone,
)

#: The most archived journals followed back (each is a supervisor's quarantine).
MAX_ARCHIVES = 64
#: The single-file copy a quarantine keeps beside the archived journal (read if it is not).
COPY_SUFFIX = ".copy.sqlite3"
#: The least time between two searches for an archive that could not be served.
RETRY_SECONDS = 60.0
_HEX = frozenset("0123456789abcdef")


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


class _Candidate(NamedTuple):
    """A file that may hold the archived journal: its name under the state directory."""

    name: str
    path: Path


class Archives:
    """The archived journals ``journal`` continues (used from the publisher's thread).

    ``clock``: seconds, for the time between two searches (:data:`RETRY_SECONDS`)."""

    def __init__(self, journal: Journal, table_id: str, *,
                 clock: Callable[[], float] = time.monotonic):
        self._journal = journal
        self._table_id = table_id
        self._clock = clock
        self._spans: list[_Span] | None = None
        #: when a search that left an archive unserved may be made again, and from which span
        self._retry: tuple[float, int] | None = None
        #: why the seqs before the oldest archived journal found are not served
        self._before_oldest = "the table's journal does not continue a quarantined one"
        #: files found not to be the archive named, by identity (see :func:`_opened`) -> why: a search made again reads none of them again unless
        #: it changed (checking a large archive's chain takes seconds of the publisher's turn)
        self._refused: dict[tuple[int, ...], str] = {}

    def serve(self, after: int, through: int) -> Iterator[Run | Lost]:
        """The archived records after ``after`` through ``through`` (a seq before the
        journal's first), in seq order: runs of checked records, and what is lost, every seq
        of the range in one or the other."""
        for span_index, span in sorted(enumerate(self._found()), key=lambda at: at[1].first):
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
                run, served, problem, unreadable = _checked_run(
                    span, after, min(span.verified, end), self._table_id)
                if run:
                    yield Run(span.archived, run)
                if unreadable:  # the file was damaged since it was found: look again later
                    self._retry_later(span_index)
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

    def find(self) -> int:
        """Look for the archived journals now (the daemon does at start, so that the first
        request does not pay for checking their chains); how many were found."""
        return len(self._found())

    def _found(self) -> list[_Span]:
        """The spans found, searched for at the first call, and again from an archive that
        could not be served once :data:`RETRY_SECONDS` have passed."""
        if self._spans is None:
            self._spans = []
            self._search()
        elif self._retry is not None and self._clock() >= self._retry[0]:
            kept = self._retry[1]
            for span in self._spans[kept:]:
                if span.journal is not None:
                    span.journal.close()
            del self._spans[kept:]
            self._retry = None
            self._search()
        return self._spans

    def _retry_later(self, span_index: int) -> None:
        start = min(span_index, self._retry[1]) if self._retry is not None else span_index
        self._retry = (self._clock() + RETRY_SECONDS, start)

    def _search(self) -> None:
        """Follow ``journal_continued`` back, archive by archive, from the last span found
        (or the table's journal), appending to the spans."""
        spans = self._spans
        assert spans is not None
        base = self._journal.path.parent.resolve()
        current = spans[-1].journal if spans else self._journal
        while current is not None and len(spans) < MAX_ARCHIVES:
            try:
                first = next(current.records(after_seq=current.first_seq - 1, limit=1), None)
            except sqlite3.Error:
                self._before_oldest = (f"the archived journal {spans[-1].archived} cannot be "
                                       f"read to its first record" if spans else
                                       "the table's journal cannot be read to its first record")
                self._retry_later(len(spans))
                break
            if first is None or first.type != CONTINUED:
                if spans:
                    self._before_oldest = (f"the archived journal {spans[-1].archived} "
                                           f"continues none")
                break
            try:
                data = check_alone(first, self._table_id).data
            except JournalBroken:
                self._before_oldest = (f"the journal_continued at seq {first.seq} that names "
                                       f"them is damaged (it does not check on its own)")
                break
            if spans and first.seq > spans[-1].verified:  # its anchor is not anchored itself
                self._before_oldest = (f"the journal_continued at seq {first.seq} that names "
                                       f"them is past the break of {spans[-1].archived}: "
                                       f"found, not verified")
                break
            span, retry = _span(base, first.seq, data, self._refused)
            spans.append(span)
            if span.journal is None:
                self._before_oldest = span.why
                if retry:
                    self._retry_later(len(spans) - 1)
                break
            current = span.journal
        else:
            if current is not None and spans:
                self._before_oldest = f"more than {MAX_ARCHIVES} archived journals"

    def close(self) -> None:
        for span in self._spans or ():
            if span.journal is not None:
                span.journal.close()
        self._spans, self._retry = None, None


def _span(base: Path, seq: int, data: object,
          refused: dict[tuple[int, ...], str]) -> tuple[_Span, bool]:
    """The archived journal the ``journal_continued`` at ``seq`` (its ``data``) names, opened
    if it can be served; and whether a later search may find it (a file that is missing,
    unreadable or not the one named may be put back). ``refused``: the files found not to be
    the one before, not checked again while unchanged (kept here, bounded)."""
    archived, last = str(getattr(data, "archived")), int(getattr(data, "archived_seq"))
    first_bad = int(getattr(data, "first_bad_seq"))
    anchor = str(getattr(data, "verified_hash", ""))
    name = archived if not Path(archived).is_absolute() else "that journal_continued names"
    kept = f"the records are kept in {name}"
    path = _under(base, archived)
    if path is None:
        return _Span(1, last, 0, name, f"the archived journal {name} is not a journal under "
                                        f"the state directory", None), False
    if len(anchor) != 64 or not _HEX.issuperset(anchor):
        return _Span(1, last, 0, name, f"the journal_continued at seq {seq} records no anchor "
                                        f"for the archived journal (no verified_hash: an "
                                        f"older release's quarantine), so none of its records "
                                        f"can be vouched for; {kept}", None), False
    verified = min(first_bad - 1, last)
    problems = []
    copy = path.with_name(f"{path.with_suffix('').name}{COPY_SUFFIX}")
    for candidate in (_Candidate(archived, path),
                      _Candidate(str(Path(archived).with_name(copy.name)), copy)):
        # each is resolved on its own: a link in place of the archive does not move the copy
        journal, problem, identity = _opened(base, candidate.path)
        if journal is not None:
            wrong = refused.get(identity) if identity is not None else None
            if wrong is None:
                wrong = _not_the_one(journal, last, str(getattr(data, "archived_hash")),
                                     verified, anchor)
                if wrong is not None and identity is not None:
                    if len(refused) >= 4 * MAX_ARCHIVES:
                        refused.clear()
                    refused[identity] = wrong
            if wrong is None:
                return _Span(journal.first_seq, last, verified, name,
                             f"the archived journal's chain broke at seq {first_bad} "
                             f"({getattr(data, 'broken')}): from there on its records are "
                             f"found, not verified; {kept}", journal), False
            journal.close()
            problem = wrong
        problems.append(f"{candidate.name} {problem}")
    return _Span(1, last, 0, name, f"the archived journal cannot be served: "
                                   f"{'; '.join(problems)}; {kept}", None), True


def _under(base: Path, archived: str) -> Path | None:
    """The path ``archived`` names under ``base``, if it is a journal's name there (read as
    written: where it leads is each file's own check, :func:`_opened`)."""
    if "\0" in archived:
        return None
    path = Path(os.path.normpath(base / archived))
    if not path.is_relative_to(base) or path == base or path.suffix != ".sqlite3":
        return None
    return path


def _opened(base: Path, path: Path
            ) -> tuple[Journal | None, str, tuple[int, ...] | None]:
    """The journal at ``path``, opened read-only, if the name leads to a file under ``base``,
    and the file's identity (device, inode, size and modification time, its log's size and
    modification time); else None and what is
    wrong, in fixed words. SQLite follows links itself and takes no
    no-follow flag from Python: the file is opened by its resolved name (no link in it), its
    log and index must not be links, and it must be the same file before and after."""
    try:
        resolved = path.resolve(strict=True)
    except FileNotFoundError:
        return None, "is missing", None
    except (OSError, RuntimeError, ValueError):
        return None, "cannot be found (a broken link, or one that loops)", None
    if not resolved.is_relative_to(base):
        return None, "leads out of the state directory", None
    try:
        before = os.lstat(resolved)
        if any(os.path.islink(f"{resolved}{suffix}") for suffix in COMPANIONS):
            return None, "has a link beside it for its log: not read", None
    except OSError:
        return None, "is missing", None
    if not stat.S_ISREG(before.st_mode):
        return None, "is not a file", None
    try:
        journal = Journal.open_readonly(resolved)
    except JournalError:
        return None, "cannot be opened as a journal (not one, or damaged)", None
    try:
        after = os.lstat(resolved)
    except OSError:
        after = None
    if after is None or (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino):
        journal.close()
        return None, "was replaced while it was opened", None
    try:
        log = os.lstat(f"{resolved}-wal")
        logged = (log.st_size, log.st_mtime_ns)
    except OSError:
        logged = (-1, -1)
    return journal, "", (after.st_dev, after.st_ino, after.st_size, after.st_mtime_ns, *logged)


def _not_the_one(journal: Journal, last: int, last_hash: str, verified: int,
                 anchor: str) -> str | None:
    """None if ``journal`` is the one the quarantine read: it ends at seq ``last`` with
    ``last_hash``, and its chain from its first record through seq ``verified``, recomputed
    from the messages, ends at ``anchor``; else what is wrong. Reads every verified record
    once (sha256 of each message, no parsing): a damaged page fails it here, not mid-replay."""
    try:
        head = journal.last_record()
        if head is None or (head.seq, head.hash) != (last, last_hash):
            return (f"is not the one journal_continued names (it ends at seq "
                    f"{head.seq if head else 0}, not at seq {last} with the hash named)")
        prev, expected = GENESIS_HASH, journal.first_seq
        for seq, prev_hash, hash_, message in journal.links(journal.first_seq - 1,
                                                             verified - expected + 1):
            if seq != expected or prev_hash != prev or not isinstance(message, bytes):
                break
            prev = chain_hash(prev, message)
            if hash_ != prev:
                break
            expected += 1
    except sqlite3.Error:
        return "cannot be read to its end (damaged)"
    if expected <= verified or prev != anchor:
        return (f"does not hold the records the quarantine verified (their chain through seq "
                f"{verified} does not end at journal_continued's verified_hash)")
    return None


def _checked_run(span: _Span, after: int, through: int, table_id: str
                 ) -> tuple[list[JournalRecord], int, str | None, bool]:
    """The records of ``span`` after ``after`` through ``through``, each checked on its own
    and against the record before; the last seq served, why the rest of the span is not
    served if a record fails, and whether it failed because the file could not be read."""
    journal = span.journal
    assert journal is not None
    run: list[JournalRecord] = []
    expected = max(after, span.first - 1) + 1
    try:
        prev = GENESIS_HASH if after < span.first else journal.hash_at(after)
        for record in journal.records(after_seq=after, limit=through - after):
            problem = None
            if record.seq != expected:
                problem = f"record seq {expected} is missing"
            elif record.prev_hash != prev:
                problem = "its prev_hash does not match the record before"
            else:
                try:
                    check_alone(record, table_id)
                except JournalBroken:
                    problem = "its hash, message or columns do not check"
            if problem is not None:
                return run, expected - 1, (f"the archived journal {span.archived} no longer "
                                           f"checks at seq {expected} ({problem}): altered "
                                           f"since it was archived; the records are kept "
                                           f"there"), False
            run.append(record)
            prev, expected = record.hash, expected + 1
    except sqlite3.Error:
        return run, expected - 1, (f"the archived journal {span.archived} cannot be read at "
                                   f"seq {expected} (damaged since it was found); the records "
                                   f"are kept there"), True
    if expected <= through:
        return run, expected - 1, (f"the archived journal {span.archived} ends at seq "
                                   f"{expected - 1}, before seq {through}"), False
    return run, through, None, False

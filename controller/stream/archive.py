"""The journals a quarantine set aside, served read-only to a subscriber that was behind.

A quarantined journal's successor starts at the archived journal's last seq + 1 and holds
nothing before its ``journal_continued``. The records before it were written, journaled and
published before the break: they are the evidence, and a subscriber that had not read them
yet (the floor's store, a surveillance officer's watch) must get them, or be told exactly
which are gone and why. :class:`Archives` serves them from the archived journal that
``journal_continued`` names (and from the one that journal continues, and so on):

- the records up to the archived journal's first bad record (``first_bad_seq`` - 1: the
  chain the quarantine verified), each checked again as it is served (its hash, its message,
  its link to the record before) and tied to what was verified when the archive was found,
  in runs announced as from the archive (:class:`Run`);
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

The chain is recomputed from the messages once, when the archive is found, and the hash of
every :data:`MARK_EVERY`-th record is kept on the way (a few kilobytes for a million
records). The file may change after that (anyone who can write it can rewrite records and
chain them again), so a run served is recomputed again from the kept hash at or before it to
the one at or after it (or the anchor), and must meet each: at most 2 * (MARK_EVERY - 1)
records read beside the run. A record that does not is the end of what is served (back to
the last kept hash met), the rest is named lost ("altered since it was found"), and the
archive is looked for again later (its copy may still be the one).

The archives are found and checked when the daemon starts (:meth:`Archives.find`; checking
a long chain takes seconds, which must not come out of the table's turn), and stay open
read-only. When one cannot be served (missing, unreadable, not the one named, altered since
it was found), the search is made again :data:`RETRY_SECONDS` later, from that archive on, so
a file put back is served without a restart; a file already found not to be the one is not
read again while it is unchanged. That search, and the first one of a table that started
held, are done in slices of at most :data:`SLICE` records by :meth:`Archives.check`, which
the daemon calls at each heartbeat; a request never searches, and the seqs of an archive
being checked are named lost meanwhile, saying so. A reason names an archive by its name
under the state directory and says what is wrong in fixed words: never a path outside it,
never an error's own text.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import NamedTuple

from controller.stream.journal import (
    COMPANIONS,
    CONTINUED,
    GENESIS_HASH,
    READ_ERRORS,
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
#: Every MARK_EVERY-th record's hash (from the archive's first) is kept when its chain is
#: checked against the anchor: a run served is recomputed from the kept hash at or before it
#: to the one at or after it (or the anchor), so what is served is what was verified, for at
#: most 2 * (MARK_EVERY - 1) records read beside the run (1,100 hashes for 1.1M records).
MARK_EVERY = 1000
#: The most records of an archive's chain one :meth:`Archives.check` reads (a heartbeat's
#: slice of a search made again, on the table's turn: about 10 ms).
SLICE = 5000
#: The records of a chain read between two steps of a search (SLICE is a multiple of it).
_CHUNK = 1000
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
    #: the hashes of seqs ``first`` - 1 + i * :data:`MARK_EVERY` as checked when it was found
    #: (i = 0: the genesis hash), and of seq ``verified``: journal_continued's anchor
    marks: tuple[str, ...] = ()
    anchor: str = ""


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
        #: files found not to be the archive named, by identity (see :func:`_opened`) -> why:
        #: a search made again reads none of them again unless it changed
        self._refused: dict[tuple[int, ...], str] = {}
        #: the search under way (:meth:`_search`), done in slices by :meth:`check`
        self._searching: Generator[int, None, None] | None = None

    def serve(self, after: int, through: int) -> Iterator[Run | Lost]:
        """The archived records after ``after`` through ``through`` (a seq before the
        journal's first), in seq order: runs of checked records, and what is lost, every seq
        of the range in one or the other. Reads at most the range and :data:`MARK_EVERY` - 1
        records either side of it (to the kept hashes it is tied to); never searches."""
        self._due()
        spans = self._spans or []
        for span_index, span in sorted(enumerate(spans), key=lambda at: at[1].first):
            if after >= through:
                return
            if span.last <= after:
                continue
            if span.first > after + 1:  # below the oldest archive found
                end = min(span.first - 1, through)
                yield Lost(after + 1, end, self._below(after + 1, end))
                after = end
                if after >= through:
                    return
            end = min(span.last, through)
            served = after
            if span.journal is not None and after < span.verified:
                run, served, problem, again = _checked_run(
                    span, after, min(span.verified, end), self._table_id)
                if run:
                    yield Run(span.archived, run)
                if again:  # altered or damaged since it was found: look again later
                    self._retry_later(span_index)
                if problem is not None:
                    yield Lost(served + 1, end, problem)
                    after = end
                    continue
            if served < end:
                yield Lost(served + 1, end, span.why)
            after = end
        if after < through:
            yield Lost(after + 1, through, self._below(after + 1, through))

    def checking(self) -> str | None:
        """What a search under way does (a replay reaching the archives is then answered "ask
        again": what it would find is not known yet), or None when none is."""
        return self._before_oldest if self._searching is not None else None

    def _below(self, first: int, last: int) -> str:
        """Why the seqs ``first`` to ``last``, before the oldest archive found, are lost."""
        if self._searching is not None:
            return (f"seq {first} to {last} are not served while {self._before_oldest}; ask "
                    f"for them again later")
        return f"no archived journal holds seq {first} to {last}: {self._before_oldest}"

    def find(self) -> int:
        """Look for the archived journals now, to the end (the daemon does at start, so that
        no turn of the table pays for checking their chains); how many were found."""
        self._due()
        self._advance(None)
        return len(self._spans or ())

    def check(self) -> int:
        """Go on with a search due or under way, by at most :data:`SLICE` records of an
        archive's chain (the daemon calls it at each heartbeat, on the table's turn); the
        records read."""
        self._due()
        return self._advance(SLICE)

    def _due(self) -> None:
        """Begin the search at the first call, and again from an archive that could not be
        served once :data:`RETRY_SECONDS` have passed; the work is done by :meth:`_advance`."""
        if self._spans is None:
            self._spans = []
            self._begin("the archived journals are being found and checked (the table "
                        "has not looked for them yet)")
        elif (self._retry is not None and self._searching is None
              and self._clock() >= self._retry[0]):
            kept = self._retry[1]
            name = self._spans[kept].archived if kept < len(self._spans) else None
            for span in self._spans[kept:]:
                if span.journal is not None:
                    span.journal.close()
            del self._spans[kept:]
            self._retry = None
            self._begin(f"the archived journal {name} is being checked again (it could not be "
                        f"served before)" if name is not None else
                        "the archived journals are being checked again (one could not be read)")

    def _begin(self, searching: str) -> None:
        """Begin a search (:meth:`_search`); ``searching`` says what it does, meanwhile."""
        self._before_oldest = searching
        self._searching = self._search()

    def _advance(self, budget: int | None) -> int:
        """Go on with the search under way, reading at most ``budget`` records of a chain
        (all, without one); the records read."""
        read = 0
        while self._searching is not None and (budget is None or read + _CHUNK <= budget):
            try:
                read += next(self._searching)
            except StopIteration:
                self._searching = None
        return read

    def _retry_later(self, span_index: int) -> None:
        start = min(span_index, self._retry[1]) if self._retry is not None else span_index
        self._retry = (self._clock() + RETRY_SECONDS, start)

    def _search(self) -> Generator[int, None, None]:
        """Follow ``journal_continued`` back, archive by archive, from the last span found
        (or the table's journal), appending to the spans; yields the records of a chain read
        since it last did (at most :data:`_CHUNK`), so that it can be done in slices."""
        spans = self._spans
        assert spans is not None
        base = self._journal.path.parent.resolve()
        current = spans[-1].journal if spans else self._journal
        while current is not None and len(spans) < MAX_ARCHIVES:
            try:
                first = next(current.records(after_seq=current.first_seq - 1, limit=1), None)
            except READ_ERRORS:
                self._before_oldest = (f"the archived journal {spans[-1].archived} cannot be "
                                       f"read to its first record" if spans else
                                       "the table's journal cannot be read to its first record")
                self._retry_later(len(spans))
                break
            if first is None or first.type != CONTINUED:
                self._before_oldest = (f"the archived journal {spans[-1].archived} continues "
                                       f"none" if spans else
                                       "the table's journal does not continue a quarantined one")
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
            span, retry = yield from _span(base, first.seq, data, self._refused)
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
        if self._searching is not None:
            self._searching.close()  # closes the file it was checking
        for span in self._spans or ():
            if span.journal is not None:
                span.journal.close()
        self._spans, self._retry, self._searching = None, None, None


def _span(base: Path, seq: int, data: object, refused: dict[tuple[int, ...], str]
          ) -> Generator[int, None, tuple[_Span, bool]]:
    """The archived journal the ``journal_continued`` at ``seq`` (its ``data``) names, opened
    if it can be served; and whether a later search may find it (a file that is missing,
    unreadable or not the one named may be put back). ``refused``: the files found not to be
    the one before, not checked again while unchanged (kept here, bounded). Yields the
    records of a chain read, as :func:`_not_the_one` does."""
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
            marks: tuple[str, ...] = ()
            served = False
            try:
                if wrong is None:
                    wrong, marks = yield from _not_the_one(
                        journal, last, str(getattr(data, "archived_hash")), verified, anchor)
                    if wrong is not None and identity is not None:
                        if len(refused) >= 4 * MAX_ARCHIVES:
                            refused.clear()
                        refused[identity] = wrong
                if wrong is None:
                    served = True
                    return _Span(journal.first_seq, last, verified, name,
                                 f"the archived journal's chain broke at seq {first_bad} "
                                 f"({getattr(data, 'broken')}): from there on its records are "
                                 f"found, not verified; {kept}", journal, marks, anchor), False
            finally:
                if not served:  # refused, or the search given up while checking it
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


def _not_the_one(journal: Journal, last: int, last_hash: str, verified: int, anchor: str
                 ) -> Generator[int, None, tuple[str | None, tuple[str, ...]]]:
    """None if ``journal`` is the one the quarantine read: it ends at seq ``last`` with
    ``last_hash``, and its chain from its first record through seq ``verified``, recomputed
    from the messages, ends at ``anchor``; else what is wrong. And the hashes it kept on the
    way (:attr:`_Span.marks`). Reads every verified record once (sha256 of each message, no
    parsing): a damaged page fails it here, not mid-replay. Yields the records read after
    each :data:`_CHUNK` of them, so that a search can stop between two."""
    try:
        head = journal.last_record()
    except READ_ERRORS:
        return "cannot be read to its end (damaged)", ()
    if head is None or (head.seq, head.hash) != (last, last_hash):
        return (f"is not the one journal_continued names (it ends at seq "
                f"{head.seq if head else 0}, not at seq {last} with the hash named)"), ()
    first = journal.first_seq
    prev, expected, marks = GENESIS_HASH, first, [GENESIS_HASH]
    sound = True
    while sound and expected <= verified:
        try:
            chunk = list(journal.links(expected - 1, min(_CHUNK, verified - expected + 1)))
        except READ_ERRORS:
            return "cannot be read to its end (damaged)", ()
        for seq, prev_hash, hash_, message in chunk:
            # (a seq another process stored as a float would pass ==: 4.0 == 4)
            if type(seq) is not int or seq != expected or prev_hash != prev \
                    or not isinstance(message, bytes):
                sound = False
                break
            prev = chain_hash(prev, message)
            if hash_ != prev:
                sound = False
                break
            if (seq - first + 1) % MARK_EVERY == 0:
                marks.append(prev)
            expected += 1
        if not chunk:
            break
        yield len(chunk)
    if expected <= verified or prev != anchor:
        return (f"does not hold the records the quarantine verified (their chain through seq "
                f"{verified} does not end at journal_continued's verified_hash)"), ()
    return None, tuple(marks)


def _checked_run(span: _Span, after: int, through: int, table_id: str
                 ) -> tuple[list[JournalRecord], int, str | None, bool]:
    """The records of ``span`` after ``after`` through ``through``, each checked on its own
    and tied to what was verified when the archive was found: its chain is recomputed from
    the kept hash at or before ``after`` to the one at or after ``through`` (or the anchor),
    and each kept hash on the way must match. Returns the records served (only those tied to
    a kept hash), the last seq served, why the rest of the span is not served, and whether
    the archive is to be looked for again (altered or unreadable since it was found)."""
    journal = span.journal
    assert journal is not None
    base = span.first - 1
    after = max(after, base)
    at = base + (after - base) // MARK_EVERY * MARK_EVERY
    end = min(base - (-(through - base) // MARK_EVERY) * MARK_EVERY, span.verified)
    prev, expected, tied = span.marks[(at - base) // MARK_EVERY], at + 1, at
    run: list[JournalRecord] = []
    unsound: int | None = None  # the first record served that does not check on its own
    problem = None
    try:
        for seq, prev_hash, hash_, message, record in _read(journal, at, after, through, end):
            if type(seq) is not int or seq != expected:
                problem = f"record seq {expected} is missing"
            elif prev_hash != prev:
                problem = "its prev_hash does not match the record before"
            elif not isinstance(message, bytes):
                problem = "its message is not stored as bytes"
            elif hash_ != (prev := chain_hash(prev, message)):
                problem = "its hash does not match its message"
            elif seq == span.verified and prev != span.anchor:
                problem = "its chain does not end at journal_continued's verified_hash"
            elif (seq - base) % MARK_EVERY == 0 and prev != span.marks[(seq - base) // MARK_EVERY]:
                problem = "its chain is not the one checked when the archive was found"
            if problem is not None:
                break
            if record is not None and unsound is None:
                try:
                    check_alone(record, table_id)
                    run.append(record)
                except JournalBroken:
                    unsound = seq
            if seq == span.verified or (seq - base) % MARK_EVERY == 0:
                tied = seq
                if unsound is not None:  # what comes before it is tied: served
                    break
            expected += 1
    except READ_ERRORS:
        tied_run = [record for record in run if record.seq <= tied]
        return tied_run, max(after, tied), (
            f"the archived journal {span.archived} cannot be read at seq {expected} (damaged "
            f"since it was found); the records are kept there"), True
    if problem is None and tied < end and (unsound is None or tied < unsound):
        problem = f"record seq {expected} is missing"  # the file ends before it
    run = [record for record in run if record.seq <= tied]
    if problem is not None:
        return run, max(after, tied), (
            f"the archived journal {span.archived} no longer checks at seq {expected} "
            f"({problem}): altered since it was found, so none of its records from seq "
            f"{max(after, tied) + 1} on is served as verified; it is looked for again in a "
            f"minute; the records are kept there"), True
    if unsound is not None:
        return run, unsound - 1, (
            f"the archived journal {span.archived} no longer checks at seq {unsound} (its "
            f"message or columns do not check); the records are kept there"), False
    return run, through, None, False


def _read(journal: Journal, at: int, after: int, through: int, end: int
          ) -> Iterator[tuple[int, str, str, bytes, JournalRecord | None]]:
    """The links of the records after ``at`` through ``end``: those after ``after`` through
    ``through`` read whole (they are served), the others as their chain alone."""
    for seq, prev_hash, hash_, message in journal.links(at, after - at):
        yield seq, prev_hash, hash_, message, None
    for record in journal.records(after_seq=after, limit=through - after):
        yield record.seq, record.prev_hash, record.hash, record.message, record
    for seq, prev_hash, hash_, message in journal.links(through, end - through):
        yield seq, prev_hash, hash_, message, None

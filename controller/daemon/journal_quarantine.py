"""A supervisor's way out of a broken journal: set it aside, whole, and start a new one.

The daemon refuses to play on a journal whose hash chain is broken, or that it found broken
while it ran and marked so (it runs held). The broken
journal is evidence: :func:`quarantine` never alters it. It reads it to its end, past the
first bad record (:func:`read_as_found`), and starts a new journal that accounts for what the
table held when it stopped:

- its first record, :class:`controller.core.table_events.JournalContinued`, names the archived
  file, its last record's seq and hash as found, the first bad seq, the hash of the record
  before it as verified here (``verified_hash``: the anchor a replay of the archived records
  is checked against, :mod:`controller.stream.archive`), and the jackpot meter (the
  players' money): the last one the journal holds, read past the break, with the last verified
  one beside it. The table does not open on it until a supervisor confirms the meter
  (``adjust_meter``), for no record from the first bad one on is verified.
- a hand the journal leaves in play (replayed through the same pure table as a start) is
  voided: ``hand_voided`` returns its wagers and takes its contribution off the meter
  (``meter_changed``), as a supervisor's void would.
- a jackpot the journal leaves awaiting verification (the hand-pay not yet verified: the
  players' money) is carried: ``journal_continued`` names it (``pending_jackpots``) and the
  new journal's table holds it pending exactly as the old one did, so it neither vanishes nor
  is paid twice: the table does not open until a supervisor verifies it, once (on a linked
  table, the pool's claim of it, ``jackpot_claimed``, is carried after it).

The new journal goes on with the table's numbering: its first seq is the archived journal's
last seq + 1, and ``journal_continued`` names the highest hand number the archived journal used
(read past the break, from its hand records and every record's hand id column), which the
table numbers its next hand after. A seq or a hand id names one record or one hand for the
table's whole life: the floor's store (keyed by table and seq), a subscriber that resumes
after the last seq it saw, the pool's ledger (by table and hand id) and an alarm's
acknowledgement (by seq) cannot mistake the new journal's for the old one's.

A journal with damaged pages (a failing disk) is salvaged
(:mod:`controller.daemon.journal_salvage`): what can be read is read, the seqs that cannot
are neither verified nor found (the first is the break; ``broken`` names them). Its new
journal's seqs continue after the highest seq the file can hold (``archived_seq``: its stored
last seq, or, when its end cannot be read, a bound from its size, with ``archived_hash`` "");
its hand numbers after the highest read plus one per unreadable seq after it (a hand the
records lost may have used each). When SQLite's backup cannot read it, the single-file copy
is the file's bytes and its log's, as found and unchecked, and ``broken`` says so. A journal
of which no record naming the table can be read is refused with what to do.

A power cut at any instant loses no record and never lets the daemon start afresh:

1. a single-file copy of the journal, write-ahead log included (SQLite's backup), is synced
   into ``<state dir>/quarantine/`` and checked to end with the same seq and hash (a byte copy,
   unchecked, of a file the backup cannot read);
2. the new journal is written and synced beside the old one, as ``journal.sqlite3.continuing``;
3. the database file, then its ``-wal`` and ``-shm``, move into ``quarantine/`` unchanged,
   then the daemon's mark (:mod:`controller.daemon.held_mark`), if there is one;
4. the new journal is renamed into place; each step's directory is synced.

Between 2 and 4 the daemon refuses to start, naming the files that hold records
(:func:`controller.stream.journal.leftovers`); running the quarantine again finishes it.
It holds the state directory's lock while it works, so it cannot run beside a daemon.
"""

from __future__ import annotations

import getpass
import json
import logging
import os
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from controller.core.table import Table
from controller.core.table_events import (
    CarriedJackpot,
    CommandAccepted,
    ConfigApplied,
    HandVoided,
    JackpotClaimed,
    JournalContinued,
    MeterChanged,
)
from controller.core.table_settings import GameSettings
from controller.daemon.held_mark import EVIDENCE_DIR, mark_path
from controller.daemon.held_mark import read as read_mark
from controller.daemon.journal_salvage import SalvagedJournal, Unreadable, count, described
from controller.daemon.state_lock import StateLock
from controller.errors import LowballError
from controller.stream import wire
from controller.stream.journal import (
    COMPANIONS,
    CONTINUING_SUFFIX,
    GENESIS_HASH,
    READ_ERRORS,
    ChainCheck,
    Journal,
    JournalBroken,
    JournalError,
    JournalRecord,
    check_alone,
    fsync_path,
    is_hash,
    journal_path,
    leftovers,
)

QUARANTINE_DIR = EVIDENCE_DIR
#: The most digits of a hand number read from a damaged journal's hand ids (a million hands
#: a day for a thousand years needs 12).
HAND_NUMBER_DIGITS = 15
MAX_REASON = 200
#: The suffix of the single-file copy beside the archived journal (its name without it).
COPY_SUFFIX = ".copy.sqlite3"
#: Said in ``journal_continued`` (``broken``) when the single-file copy is a byte copy.
BYTE_COPY_NOTE = ("its single-file copy is a byte copy of the damaged file and its log "
                  "(SQLite's backup cannot read it), not checked against the journal")

_log = logging.getLogger(__name__)

Found = list[tuple[JournalRecord, Any]]


class QuarantineRefused(LowballError, RuntimeError):
    """Nothing was moved: the message says why."""


class Quarantined(NamedTuple):
    archived: Path
    record: JournalContinued
    #: the hand the journal left in play, voided in the new journal
    voided: HandVoided | None = None
    #: the linked pool's claim of the carried jackpot, journaled after ``record``
    claimed: JackpotClaimed | None = None
    #: the seqs on damaged pages, which could not be read
    unreadable: tuple[Unreadable, ...] = ()
    #: the single-file copy is the file's bytes (and its log's), as found: the backup could
    #: not read it
    byte_copy: bool = False
    #: hand numbers skipped past the highest read: records that could not be read may hold
    #: hands numbered after it
    hands_skipped: int = 0
    #: the records read (verified or found)
    records_read: int = 0


class AsFound(NamedTuple):
    """A journal read to its end (:func:`read_as_found`)."""

    broken: JournalBroken | None
    #: records (and their events) before the first bad one: verified
    verified: Found
    #: records after it that are sound on their own (hash, message, columns): found, not
    #: verified
    found_after: Found
    #: the last record read
    head: JournalRecord | None
    table_id: str | None
    #: the seqs on damaged pages, which could not be read (the first is a break)
    unreadable: tuple[Unreadable, ...] = ()
    #: the highest seq the journal can hold (its stored last seq, or a bound when that cannot
    #: be read): the new journal's seqs continue after it
    seq_bound: int = 0


def read_as_found(journal: SalvagedJournal, held: JournalBroken | None = None) -> AsFound:
    """Every record of ``journal`` that can be read: checked as a chain up to the first bad
    one, then each on its own, so that one damaged record does not hide the rest (the meter
    and the hand in play are at the end). ``held``: the break a daemon found while it ran (its
    mark, :mod:`controller.daemon.held_mark`): the records from its seq on are found, not
    verified, however well they chain. Seqs on damaged pages are skipped
    (:mod:`controller.daemon.journal_salvage`): the chain breaks at the first of them."""
    check, verified, after = ChainCheck(), [], []
    broken: JournalBroken | None = None
    table_id: str | None = None  # the first record found's, when none could be verified
    for record in journal.records():
        if broken is None and held is not None and record.seq >= held.seq:
            broken = held
        if broken is None:
            try:
                verified.append((record, wire.to_event(check(record))))
                continue
            except JournalBroken as error:
                broken = error
        try:
            envelope = check_alone(record, check.table_id or table_id)
            table_id = table_id or envelope.table_id
            after.append((record, wire.to_event(envelope)))
        except JournalBroken:
            pass  # damaged beyond reading: the archived journal keeps it as it is
    if broken is None and held is not None:  # the daemon's break lies past the last record
        broken = held
    bound = journal.seq_bound()
    if journal.unreadable:
        damage = described(journal.unreadable, bound, journal.stored_last_seq is None)
        if journal.stored_last_seq is None:
            damage += (f"; the journal's end cannot be read: its seqs are bounded by seq "
                       f"{bound} (the file's size)")
        first = journal.unreadable[0].first
        if broken is None or broken.seq >= first:
            broken = JournalBroken(first, damage)
        else:
            broken = JournalBroken(broken.seq, f"{broken.reason}; and {damage}")
    if broken is None and journal.log_lost is not None:
        broken = JournalBroken(check.last_seq + 1, f"{journal.log_lost}: the records past "
                                                   f"seq {check.last_seq} are lost")
    if broken is None and (problems := journal.file_problems[:5]):
        # every record read chains, but SQLite finds pages it does not reach, or damaged
        # ones: what lay past the last record read may be lost
        broken = JournalBroken(check.last_seq + 1, f"SQLite's check of the file finds it "
                                                   f"damaged: {'; '.join(problems)}")
    if broken is None and (problem := journal.schema_problem()) is not None:
        broken = JournalBroken(check.last_seq + 1, problem)
    return AsFound(broken, verified, after, journal.last_read,
                   check.table_id or table_id or _table_of(journal.last_read),
                   journal.unreadable, bound)


def _table_of(record: JournalRecord | None) -> str | None:
    """The table id the record's message names, sound or not; None if it does not parse."""
    try:
        return None if record is None else wire.decode_event(record.message).table_id
    except wire.WireError:
        return None


def quarantine(state_dir: str | Path, reason: str, by: str | None = None) -> Quarantined:
    """Quarantine the broken journal of ``state_dir`` (see the module docstring), or finish
    one a power cut interrupted. :class:`QuarantineRefused` if its chain is sound, or a
    daemon holds the directory."""
    state_dir = Path(state_dir)
    if not reason.strip() or len(reason) > MAX_REASON:
        raise QuarantineRefused(f"a reason of 1 to {MAX_REASON} characters is required "
                                f"(it is journaled)")
    lock = StateLock(state_dir)
    try:
        lock.acquire()
    except RuntimeError as error:
        raise QuarantineRefused(f"{error} (quarantine with the daemon stopped)") from None
    try:
        path = journal_path(state_dir)
        continuing = Path(f"{path}{CONTINUING_SUFFIX}")
        if not path.exists():
            if continuing.exists():
                return _finish(state_dir, continuing)
            left = leftovers(path)
            raise QuarantineRefused(
                f"no journal at {path}" + (f", but {', '.join(map(str, left))} hold records: "
                                           f"put the database file back beside them" if left
                                           else ""))
        _remove(continuing)  # an unfinished run's new journal (step 2): written again
        by = by or getpass.getuser()
        mark = mark_path(state_dir)
        folder = state_dir / QUARANTINE_DIR
        try:
            journal = SalvagedJournal(path)
        except JournalError as error:
            raise QuarantineRefused(f"{error}: {_restore(path, folder)}") from None
        with journal:
            found = read_as_found(journal, read_mark(state_dir))
            if found.broken is None:
                raise QuarantineRefused(f"{path}: the hash chain is sound "
                                        f"({len(found.verified)} records): nothing to "
                                        f"quarantine")
            if found.head is None or found.table_id is None:
                what = "no record can be read" if found.head is None else \
                    "no record that can be read names the table"
                if found.unreadable:
                    raise QuarantineRefused(f"{path}: {what} ({found.broken.reason}): "
                                            f"{_restore(path, folder)}")
                raise QuarantineRefused(f"{path}: {what}: cannot continue it")
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
            hand_number, hands_skipped = _last_hand_number(journal, found, folder)
            folder.mkdir(exist_ok=True)
            archived = folder / f"journal-{stamp}-broken-at-seq-{found.broken.seq}.sqlite3"
            whole = _copy(journal, Path(f"{archived.with_suffix('')}{COPY_SUFFIX}"))
        record, voided, meter_after, claimed = _continuation(
            found, archived.relative_to(state_dir), by, reason.strip())
        if not whole:
            record = record._replace(broken=f"{record.broken}; {BYTE_COPY_NOTE}")
        record = record._replace(hand_number=hand_number)
        if found.unreadable or not whole:
            _log.warning("quarantine of %s: %s; %d record(s) read; hands numbered after %d "
                         "(%d more than read: the records that cannot be read may have "
                         "used them)", path, record.broken, len(found.verified) +
                         len(found.found_after), hand_number, hands_skipped)
        with Journal(continuing, first_seq=found.seq_bound + 1) as fresh:
            fresh.append(record, table_id=found.table_id, hand_id=None)
            if claimed is not None:
                fresh.append(claimed, table_id=found.table_id, hand_id=claimed.hand_id)
            if voided is not None:
                fresh.append_all([voided, *meter_after], table_id=found.table_id,
                                 hand_id=voided.hand_id)
        _single_file(continuing)
        for suffix in ("", *COMPANIONS):  # the database first: never a database without its log
            source = Path(f"{path}{suffix}")
            if source.exists():
                os.rename(source, f"{archived}{suffix}")
                fsync_path(folder)
                fsync_path(state_dir)
        _archive_mark(mark, archived)
        os.rename(continuing, path)
        fsync_path(state_dir)
        return Quarantined(archived, record, voided, claimed, found.unreadable, not whole,
                           hands_skipped, len(found.verified) + len(found.found_after))
    finally:
        lock.release()


def _restore(path: Path, folder: Path) -> str:
    return (f"nothing moved. Restore the journal from a backup (or from the single-file "
            f"copy an earlier quarantine left in {folder}, if it holds the table's last "
            f"records) to {path}, then start the daemon or run the quarantine again")


def _continuation(found: AsFound, archived: Path, by: str, reason: str
                  ) -> tuple[JournalContinued, HandVoided | None, list[MeterChanged],
                             JackpotClaimed | None]:
    """The new journal's first record, the void of the hand the journal left in play (with
    the meter it leaves) if there is one, and the pool's claim of the jackpot carried."""
    broken, head = found.broken, found.head
    assert broken is not None
    everything = found.verified + found.found_after
    meter, meter_from, meter_seq = _last_meter(everything)
    verified_meter, verified_from, _ = _last_meter(found.verified)
    if meter_seq >= broken.seq:
        meter_from += " (after the first bad record: found, not verified)"
    table = _replayed(everything, found.table_id) or _replayed(found.verified, found.table_id)
    jackpot = table.jackpot if table is not None else None
    carried = () if jackpot is None else (CarriedJackpot(
        jackpot.hand_id, jackpot.seats, jackpot.amount, jackpot.meter_after_reset),)
    record = JournalContinued(
        archived=str(archived), archived_seq=found.seq_bound,
        # a hash another process made text that is no hash is no head to name
        archived_hash=head.hash if head is not None and head.seq == found.seq_bound
        and is_hash(head.hash) else "",
        first_bad_seq=broken.seq,
        broken=broken.reason, meter=meter, meter_from=meter_from,
        verified_meter=verified_meter, verified_meter_from=verified_from,
        meter_held=meter is not None, by=by, reason=reason, pending_jackpots=carried,
        verified_hash=found.verified[-1][0].hash if found.verified else GENESIS_HASH)
    claimed = jackpot.claimed if jackpot is not None else None
    if table is None or table.hand is None or table.hand_id is None:
        return record, None, [], claimed
    hand, hand_id = table.hand, table.hand_id
    # The contribution is on the meter carried over only if its meter_changed was read.
    contributed = hand.contributions if any(
        type(event) is MeterChanged and row.hand_id == hand_id for row, event in everything) \
        else 0
    voided = HandVoided(hand_id, by, f"its journal was quarantined: {reason}",
                        hand.wagers_at_stake(), contributed)
    if not contributed or meter is None:
        return record, voided, [], claimed
    return record, voided, [MeterChanged(meter - contributed, f"hand {hand_id} voided")], claimed


def _last_hand_number(journal: SalvagedJournal, found: AsFound, folder: Path
                      ) -> tuple[int, int]:
    """The highest hand number the table may have used, and how many of it were added for the
    records that cannot be read. From the hand id column of every record of ``journal`` that
    can be read, sound or not (a damaged ``hand_started`` still holds its hand's id: a number
    skipped is harmless, one used twice is not), from the ``journal_continued`` it opens with
    if it continues a quarantined journal in its turn, and from the single-file copies of the
    journals archived before it in ``folder`` (that ``journal_continued`` may be the record
    found damaged). A hand numbers after the one before it and journals at least one record,
    so the records that cannot be read after the highest numbered one read hide at most as
    many hands as there are of them: the number goes up by that many."""
    highest = max((event.hand_number for _, event in found.verified + found.found_after
                   if type(event) is JournalContinued), default=0)
    if found.table_id is None:
        return highest, 0
    prefix = f"{found.table_id}-"
    own, seen_at = _highest_hand(journal, prefix)
    highest = max(highest, own)
    for copy in sorted(folder.glob(f"*{COPY_SUFFIX}")) if folder.is_dir() else ():
        try:
            with SalvagedJournal(copy) as earlier:
                highest = max(highest, _highest_hand(earlier, prefix)[0])
        except (JournalError, sqlite3.Error, UnicodeDecodeError, OSError):
            continue  # not a journal any more: it numbers nothing
    hidden = count(found.unreadable, seen_at, found.seq_bound)
    return min(highest + hidden, 10 ** HAND_NUMBER_DIGITS - 1), hidden


def _highest_hand(journal: SalvagedJournal, prefix: str) -> tuple[int, int]:
    """The highest hand number in the hand ids of the records of ``journal`` that can be read,
    and the seq of the first record that names it (0 and 0: none)."""
    highest, seen_at = 0, 0
    for record in journal.records():
        hand_id = record.hand_id
        if isinstance(hand_id, str) and hand_id.startswith(prefix):
            number = hand_id[len(prefix):]
            if number.isascii() and number.isdigit() and len(number) <= HAND_NUMBER_DIGITS \
                    and int(number) > highest:
                highest, seen_at = int(number), record.seq
    return highest, seen_at


def _last_meter(records: Found) -> tuple[int | None, str, int]:
    """The last meter journaled in ``records``, the record it comes from, and its seq."""
    for row, event in reversed(records):
        if type(event) is MeterChanged:
            return event.amount, f"meter_changed seq {row.seq}", row.seq
        if type(event) is JournalContinued and event.meter is not None:
            return event.meter, f"journal_continued seq {row.seq}", row.seq
    return None, "none", 0


def _replayed(records: Found, table_id: str | None) -> Table | None:
    """The table ``records`` leave, rebuilt as a start rebuilds it (under the configuration
    they journaled), or None when they cannot rebuild one."""
    events = [event for _, event in records]
    opened = [at for at, event in enumerate(events) if type(event) is ConfigApplied]
    if not opened or table_id is None:
        return None  # no table was opened on this journal: no hand either
    # From the first configuration, as a start replays; failing that (records lost to damaged
    # pages before it), from the input that journaled the last one (a closed table opening:
    # no hand, no jackpot pending, the meter journaled after it).
    last = opened[-1] - 1 if opened[-1] and type(events[opened[-1] - 1]) is CommandAccepted \
        else opened[-1]
    for start, config in dict.fromkeys(((0, events[opened[0]]), (last, events[opened[-1]]))):
        assert type(config) is ConfigApplied
        hands = {row.hand_id for row, _ in records[start:] if row.hand_id is not None}
        try:
            table = Table(table_id, GameSettings.from_document(json.loads(config.config)))
            if start:  # the hands before it are not replayed: number its first as journaled
                table.hand_number = _first_hand_number(records[start:], table_id) - 1
            table.replay(events[start:])
        except Exception:  # noqa: BLE001, S112 - records past a break are not verified: any
            continue       # failure to replay them means they do not describe the table
        if start and table.hand_id is not None and table.hand_id not in hands:
            continue  # rebuilt under another hand id than the journal's: not this table
        return table
    return None


def _first_hand_number(records: Found, table_id: str) -> int:
    """The number of the first hand of ``table_id`` that ``records`` name (1 if none)."""
    prefix = f"{table_id}-"
    for row, _ in records:
        number = row.hand_id[len(prefix):] if row.hand_id is not None and \
            row.hand_id.startswith(prefix) else ""
        if number.isascii() and number.isdigit() and len(number) <= HAND_NUMBER_DIGITS:
            return int(number)
    return 1


def _copy(journal: SalvagedJournal, target: Path) -> bool:
    """A synced single-file copy of ``journal`` (its log included) at ``target``, checked to
    end with the same stored record as the journal: True. When SQLite's backup cannot read the
    file (damaged pages), or its end cannot be read or trusted, the file's bytes and its
    log's, as they are, at ``target`` and ``target``-wal, synced and not checked: False."""
    partial = Path(f"{target}.partial")
    _remove(partial)
    _remove(target)
    try:
        if journal.stored_last_seq is None:
            # its end cannot be read, or SQLite does not reach all it holds: a copy through
            # SQLite would keep what SQLite reads, not the evidence
            raise sqlite3.DatabaseError("the end of the file cannot be read or trusted")
        source = sqlite3.connect(f"{journal.path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            copy = sqlite3.connect(partial)
            try:
                source.backup(copy)
            finally:
                copy.close()
        finally:
            source.close()
        _single_file(partial)
    except READ_ERRORS as error:
        _log.warning("quarantine of %s: SQLite's backup cannot read it whole (%s): its copy "
                     "%s is a byte copy", journal.path, error, target)
        _remove(partial)
        for suffix in ("-wal", ""):  # the log first: never a database copy without its log
            if Path(f"{journal.path}{suffix}").is_file():
                _copy_bytes(Path(f"{journal.path}{suffix}"), Path(f"{partial}{suffix}"))
                os.rename(f"{partial}{suffix}", f"{target}{suffix}")
                fsync_path(target.parent)
        return False
    os.rename(partial, target)
    fsync_path(target.parent)
    with SalvagedJournal(target) as copied:
        last, last_seq = copied.stored_head(), copied.stored_last_seq
    head, head_seq = journal.stored_head(), journal.stored_last_seq
    if (last, last_seq) != (head, head_seq):
        raise QuarantineRefused(f"{target}: the copy ends at seq {last_seq}, the journal at "
                                f"seq {head_seq} (None: unreadable), or their last records "
                                f"differ: nothing moved")
    return True


def _copy_bytes(source: Path, target: Path) -> None:
    with source.open("rb") as reading, target.open("wb") as writing:
        shutil.copyfileobj(reading, writing, 1 << 20)
        writing.flush()
        os.fsync(writing.fileno())


def _single_file(path: Path) -> None:
    """Leave the database at ``path`` in one file (no log beside it), synced."""
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode=DELETE")
    finally:
        connection.close()
    fsync_path(path)


def _finish(state_dir: Path, continuing: Path) -> Quarantined:
    """Finish a quarantine a power cut stopped after the database file moved (step 3)."""
    with Journal.open_readonly(continuing) as fresh:
        events = [wire.to_event(wire.decode_event(row.message)) for row in fresh.records()]
    record = events[0] if events else None
    if type(record) is not JournalContinued:
        raise QuarantineRefused(f"{continuing} does not start with journal_continued: "
                                f"keep it and report it")
    archived = state_dir / record.archived
    path = journal_path(state_dir)
    for suffix in COMPANIONS:
        source = Path(f"{path}{suffix}")
        if source.exists():
            os.rename(source, f"{archived}{suffix}")
            fsync_path(archived.parent)
    _archive_mark(mark_path(state_dir), archived)
    os.rename(continuing, path)
    fsync_path(state_dir)
    voided = next((event for event in events if type(event) is HandVoided), None)
    claimed = next((event for event in events if type(event) is JackpotClaimed), None)
    return Quarantined(archived, record, voided, claimed)


def _archive_mark(mark: Path, archived: Path) -> None:
    """The daemon's mark goes with the journal it holds, before the new journal takes its
    place (a mark left behind would hold the new journal)."""
    if mark.exists():
        os.rename(mark, f"{archived}.held")
        fsync_path(archived.parent)
        fsync_path(mark.parent)


def _remove(path: Path) -> None:
    for name in (path, *(Path(f"{path}{suffix}") for suffix in (*COMPANIONS, "-journal"))):
        name.unlink(missing_ok=True)

"""The journal's hash chain, checked again while the daemon runs.

At start the daemon checks every record (:class:`controller.stream.journal_chain.ChainCheck`) and
rebuilds the table only from a sound journal. From then on it writes the journal itself, but
the file is on a disk others can reach. At every heartbeat, and at least every second,
:class:`ChainWatch`

* reads back the records written since the last check and follows the chain from where the
  start-up check left it (each seq the last + 1, each ``prev_hash`` the last hash, each
  ``hash`` that of ``prev_hash`` and the message: a record byte for byte the one the daemon
  wrote, which the journal keeps of its last appends, needs no hashing again), and checks
  that the last record it read is the one the daemon wrote last and that none it wrote is
  missing: :attr:`verified_through`;
* re-reads a batch of the whole chain from its first record (seq 1, or the
  ``journal_continued`` a quarantine opened it with), pass after pass: a pass must end in the
  hash the daemon verified, so a record rewritten after it was checked (the chain recomputed
  after it, the triggers put back) is found within a pass, which lasts at most
  :data:`PASS_S` (:func:`sweep_size`; the check runs at least every :data:`CHECK_EVERY_S`);
* checks that the append-only triggers are in place;
* checks that the chain does not run *past* the daemon's last record either: a record the
  daemon did not write (another process's, chained as well as any) is a break at the first
  such seq, and :attr:`verified_through` never goes past what the daemon wrote;
* checks that the file at the journal's name (and its ``-wal``) is still the one the daemon
  opened and writes (device and inode): a file renamed over it is a break
  (:class:`JournalReplaced`) at seq 1, for nothing at the name is known to be the daemon's.

The heartbeat and the status say how far it has verified (:attr:`verified_at_start`,
:attr:`verified_through`); a failure holds the table as a failed start-up check does. Only
the chain is checked here (a hash per record, no parse): the daemon encoded every message it
wrote, and the chain binds each to all before it.
"""

from __future__ import annotations

import hashlib
import math
import operator

from controller.errors import LowballError
from controller.stream.journal import (
    GENESIS_HASH,
    Journal,
    READ_ERRORS,
    JournalBroken,
    WrittenLinks,
    as_stored,
    seq_not_an_integer,
)

#: The most new records one check reads (a second's worth of a table dealing flat out,
#: many times over); a longer backlog is caught up at the next checks.
BATCH = 5000
#: A row's seq, and the only type a seq read back may have.
_SEQ, _INT_ONLY = operator.itemgetter(0), {int}
#: No records kept as written: every record followed is hashed.
_NONE_WRITTEN = WrittenLinks(0, [], [])
#: The chain is checked at every heartbeat, and at least this often (heartbeats may be set as
#: much as a minute apart).
CHECK_EVERY_S = 1.0
#: A record rewritten after it was verified is found within this long (on a journal of up to
#: 150,000 records; a larger one is re-read at SWEEP_MOST records a check)...
FOUND_WITHIN_S = 60.0
#: ...since a pass re-reading the whole chain lasts at most half of it: a record rewritten
#: just behind the pass is found by the next pass, whatever the table appends meanwhile.
PASS_S = FOUND_WITHIN_S / 2
#: The records of the chain one check re-reads: at least the least (a small journal is
#: re-read whole at every check), at most the most (a check holds the table's turn: 5,000
#: records are some 13 ms).
SWEEP_LEAST, SWEEP_MOST = 500, 5000


#: The loop turns at most this often (its poll waits whole milliseconds, at least one): no
#: check comes sooner after the last, whatever the heartbeat.
SHORTEST_TURN_S = 0.001


def check_interval(heartbeat_s: float) -> float:
    """How often the daemon checks the chain at ``heartbeat_s``: at every heartbeat, and at
    least every :data:`CHECK_EVERY_S`; a heartbeat shorter than the loop's turn comes once a
    turn.

    >>> check_interval(0.5), check_interval(60.0), check_interval(0.0001)
    (0.5, 1.0, 0.001)
    """
    return min(max(heartbeat_s, SHORTEST_TURN_S), CHECK_EVERY_S)


def sweep_size(records: int, interval_s: float) -> int:
    """The records a check every ``interval_s`` re-reads of a chain of ``records`` for a pass
    over all of them within :data:`PASS_S`: between :data:`SWEEP_LEAST` and
    :data:`SWEEP_MOST` a second (heartbeats a few milliseconds apart, which the config
    allows, re-read no more a second than heartbeats a second apart).

    >>> sweep_size(300, 1.0), sweep_size(60_000, 1.0), sweep_size(60_000, 5.0)
    (500, 2000, 5000)
    >>> sweep_size(300, 0.001), sweep_size(150_000, 0.001)
    (1, 5)
    """
    least = max(1, math.ceil(SWEEP_LEAST * min(interval_s, 1.0)))
    most = max(1, math.ceil(SWEEP_MOST * min(interval_s, 1.0)))
    return min(most, max(least, math.ceil(records * interval_s / PASS_S)))


class JournalReplaced(JournalBroken):
    """The file at the journal's name is no longer the one the daemon writes."""


class TableHeld(LowballError, RuntimeError):
    """An input was not journaled because the journal was found broken at that moment (a
    write refused by a record another process put there): the table is held from now on, and
    nothing the input caused was published, shown or acknowledged (the journal, which lacks
    it, is the record)."""


class ChainWatch:
    def __init__(self, journal: Journal, seq: int, hash_: str) -> None:
        """``seq`` and ``hash_``: the last record the start-up check verified."""
        self.journal = journal
        self.verified_at_start = seq
        self.verified_through = seq
        self._hash = hash_
        #: where the pass re-reading the chain from its first record has got to
        self._swept, self._swept_hash = journal.first_seq - 1, GENESIS_HASH
        #: the first seq the check is reading (where a read that fails is said to break)
        self._reading = seq + 1

    def check(self, limit: int = BATCH, sweep: int = SWEEP_MOST) -> JournalBroken | None:
        """Verify the records written since the last check (at most ``limit``) and the next
        ``sweep`` records of the pass: None when they are sound, else where and how the chain
        broke. A journal that cannot be read (a damaged page, a failing disk) is broken where
        the reading was: the check never raises it out of the daemon's loop."""
        self._reading = self.verified_through + 1
        try:
            return self._check(limit, sweep)
        except READ_ERRORS as error:
            return JournalBroken(self._reading, f"the journal cannot be read from about seq "
                                                f"{self._reading} ({type(error).__name__}: "
                                                f"a damaged page, or a failing disk)")

    def _check(self, limit: int, sweep: int) -> JournalBroken | None:
        journal = self.journal
        if replaced := journal.replaced_files():
            return _replaced(journal, replaced)
        # Only the daemon's own records are followed: what lies past them is not verified.
        follow = _Follow(self.verified_through, self._hash)
        wanted = min(limit, journal.last_seq - self.verified_through)
        if (broken := follow.read(journal, wanted,
                                  journal.written_after(self.verified_through))) is not None:
            return broken
        self.verified_through, self._hash = follow.seq, follow.hash
        if follow.read_count < wanted:
            return JournalBroken(follow.seq + 1, f"records seq {follow.seq + 1} to "
                                                 f"{journal.last_seq}, which the daemon wrote, "
                                                 f"are missing")
        if follow.seq == journal.last_seq and follow.hash != journal.last_hash:
            return JournalBroken(follow.seq, "the journal's last record is not the one the "
                                             "daemon wrote")
        if type(stored := journal.stored_end()) is not int:
            return seq_not_an_integer(journal.last_seq, stored)
        if (before := journal.rows_before_first()) is not None:
            return JournalBroken(journal.last_seq + 1, before)
        if stored > journal.last_seq:
            first = journal.last_seq + 1
            return JournalBroken(first, f"record{'' if stored == first else 's'} seq {first}"
                                        f"{'' if stored == first else f' to {stored}'} "
                                        f"written by another process: the daemon wrote up to "
                                        f"seq {journal.last_seq}")
        if (broken := self._sweep(sweep)) is not None:
            return broken
        if (problem := journal.schema_problem()) is not None:
            return JournalBroken(self.verified_through + 1, problem)
        return None

    def _sweep(self, count: int) -> JournalBroken | None:
        end = self.verified_through
        self._reading = self._swept + 1
        follow = _Follow(self._swept, self._swept_hash)
        wanted = min(count, end - self._swept)
        if (broken := follow.read(self.journal, wanted)) is not None:
            return broken
        if follow.read_count < wanted:
            return JournalBroken(follow.seq + 1, f"record seq {follow.seq + 1} missing (found "
                                                 f"re-reading the chain)")
        self._swept, self._swept_hash = follow.seq, follow.hash
        if self._swept >= end and end > 0:
            if self._swept_hash != self._hash:
                return JournalBroken(end, "the chain re-read from seq 1 does not end in the "
                                          "hash verified before: a record was rewritten")
            self._swept, self._swept_hash = self.journal.first_seq - 1, GENESIS_HASH
        return None


def _replaced(journal: Journal, names: list[str]) -> JournalReplaced:
    """The break of a journal whose file was replaced under the daemon. It is at seq 1: the
    file at the name is someone else's, and while the daemon holds its own open they can
    even share the log, so no record read through the name is known to be the daemon's."""
    return JournalReplaced(1, f"{', '.join(names)} in {journal.path.parent} is not the file "
                              f"the daemon opened and writes (renamed over, moved or removed): "
                              f"no record at that name is known to be the daemon's")


class _Follow:
    """The chain followed from one record (seq, hash) through the records after it."""

    def __init__(self, seq: int, hash_: str) -> None:
        self.seq, self.hash, self.read_count = seq, hash_, 0

    def read(self, journal: Journal, limit: int,
             written: WrittenLinks | None = None) -> JournalBroken | None:
        """Follow at most ``limit`` records. ``written``: records as the daemon wrote them: a
        stored record whose link, hash and message are byte for byte the written ones is
        sound without hashing it again (the daemon hashed it as it wrote it); any other is
        hashed."""
        if limit <= 0:
            return None
        first, hashes, messages = written or _NONE_WRITTEN
        for rows in journal.link_batches(self.seq, limit):
            # A batch equal, row for row, to the records as written, and linked to the last
            # record followed, is sound as a whole: one comparison in C instead of a step of
            # Python per record.
            start, end = self.seq + 1 - first, self.seq + 1 - first + len(rows)
            # (== takes 4.0 for 4: a seq must also be an int, as a rowid always is)
            if 0 <= start and end <= len(messages) and hashes[start] == self.hash \
                    and rows == list(zip(range(self.seq + 1, self.seq + 1 + len(rows)),
                                         hashes[start:end], hashes[start + 1:end + 1],
                                         messages[start:end])) \
                    and set(map(type, map(_SEQ, rows))) == _INT_ONLY:
                self.seq, self.hash = rows[-1][0], rows[-1][2]
                self.read_count += len(rows)
            elif (broken := self._read_each(rows, first, hashes, messages)) is not None:
                return broken
        return None

    def _read_each(self, rows: list[tuple[int, str, str, bytes]], first: int,
                   hashes: list[str], messages: list[bytes]) -> JournalBroken | None:
        """Follow ``rows`` record by record: each equal to the one written, or hashed."""
        # The follower's place is kept in locals until the end.
        seq, hash_, count = self.seq, self.hash, self.read_count
        kept, sha256 = len(messages), hashlib.sha256
        try:
            for record_seq, prev_hash, record_hash, message in rows:
                count += 1
                if type(message) is not bytes:  # not stored as the daemon stores it
                    message = as_stored(message)
                if type(record_seq) is not int:  # a table rebuilt by another process
                    return seq_not_an_integer(seq, record_seq)
                index = record_seq - first
                if record_seq != seq + 1 or prev_hash != hash_ or not (
                        0 <= index < kept and message == messages[index]
                        and record_hash == hashes[index + 1] and prev_hash == hashes[index]
                        or record_hash == sha256(prev_hash.encode("ascii") + message).hexdigest()):
                    return _problem(seq, hash_, record_seq, prev_hash, record_hash, message)
                seq, hash_ = record_seq, record_hash
        finally:
            self.seq, self.hash, self.read_count = seq, hash_, count
        return None


def _problem(last_seq: int, last_hash: str, seq: int, prev_hash: str, hash_: str,
             message: bytes) -> JournalBroken:
    """What is wrong with the record (seq, prev_hash, hash_, message) that follows the record
    (last_seq, last_hash)."""
    if seq != last_seq + 1:
        return JournalBroken(last_seq + 1, f"record seq {last_seq + 1} missing while the table "
                                           f"ran (next record is seq {seq})")
    if prev_hash != last_hash:
        return JournalBroken(seq, "prev_hash does not match the previous record's "
                                  "hash (found while the table ran)")
    return JournalBroken(seq, "hash does not match prev_hash + message (the "
                              "message was altered while the table ran)")

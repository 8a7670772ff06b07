"""The journal's hash chain, checked again while the daemon runs.

At start the daemon checks every record (:class:`controller.stream.journal.ChainCheck`) and
rebuilds the table only from a sound journal. From then on it writes the journal itself, but
the file is on a disk others can reach. At each heartbeat :class:`ChainWatch`

* reads back the records written since the last check and follows the chain from where the
  start-up check left it (each seq the last + 1, each ``prev_hash`` the last hash, each
  ``hash`` that of ``prev_hash`` and the message), and checks that the last record it read is
  the one the daemon wrote last and that none it wrote is missing: :attr:`verified_through`;
* re-reads a batch of the whole chain from seq 1, pass after pass: a pass must end in the
  hash the daemon verified, so a record rewritten after it was checked (the chain recomputed
  after it, the triggers put back) is found within a pass;
* checks that the append-only triggers are in place.

The heartbeat and the status say how far it has verified (:attr:`verified_at_start`,
:attr:`verified_through`); a failure holds the table as a failed start-up check does. Only
the chain is checked here (a hash per record, no parse): the daemon encoded every message it
wrote, and the chain binds each to all before it.
"""

from __future__ import annotations

from controller.stream.journal import GENESIS_HASH, Journal, JournalBroken, JournalRecord, chain_hash

#: The most new records one check reads (a heartbeat's worth of a table dealing flat out,
#: many times over); a longer backlog is caught up at the next heartbeats.
BATCH = 5000
#: The records of the whole chain one check re-reads (a journal of a million records is
#: re-read every few minutes).
SWEEP = 5000


class ChainWatch:
    def __init__(self, journal: Journal, seq: int, hash_: str) -> None:
        """``seq`` and ``hash_``: the last record the start-up check verified."""
        self.journal = journal
        self.verified_at_start = seq
        self.verified_through = seq
        self._hash = hash_
        #: where the pass re-reading the chain from seq 1 has got to
        self._swept, self._swept_hash = 0, GENESIS_HASH

    def check(self, limit: int = BATCH, sweep: int = SWEEP) -> JournalBroken | None:
        """Verify the records written since the last check (at most ``limit``) and the next
        ``sweep`` records of the pass: None when they are sound, else where and how the chain
        broke."""
        journal = self.journal
        follow = _Follow(self.verified_through, self._hash)
        if (broken := follow.read(journal, limit)) is not None:
            return broken
        self.verified_through, self._hash = follow.seq, follow.hash
        if follow.read_count < limit and follow.seq < journal.last_seq:
            return JournalBroken(follow.seq + 1, f"records seq {follow.seq + 1} to "
                                                 f"{journal.last_seq}, which the daemon wrote, "
                                                 f"are missing")
        if follow.seq == journal.last_seq and follow.hash != journal.last_hash:
            return JournalBroken(follow.seq, "the journal's last record is not the one the "
                                             "daemon wrote")
        if (broken := self._sweep(sweep)) is not None:
            return broken
        if missing := journal.missing_triggers():
            return JournalBroken(self.verified_through + 1, f"append-only trigger(s) missing: "
                                                            f"{', '.join(missing)}")
        return None

    def _sweep(self, count: int) -> JournalBroken | None:
        end = self.verified_through
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
            self._swept, self._swept_hash = 0, GENESIS_HASH
        return None


class _Follow:
    """The chain followed from one record (seq, hash) through the records after it."""

    def __init__(self, seq: int, hash_: str) -> None:
        self.seq, self.hash, self.read_count = seq, hash_, 0

    def read(self, journal: Journal, limit: int) -> JournalBroken | None:
        if limit <= 0:
            return None
        for record in journal.records(after_seq=self.seq, limit=limit):
            self.read_count += 1
            if (broken := self._problem(record)) is not None:
                return broken
            self.seq, self.hash = record.seq, record.hash
        return None

    def _problem(self, record: JournalRecord) -> JournalBroken | None:
        expected = self.seq + 1
        if record.seq != expected:
            return JournalBroken(expected, f"record seq {expected} missing while the table "
                                           f"ran (next record is seq {record.seq})")
        if record.prev_hash != self.hash:
            return JournalBroken(record.seq, "prev_hash does not match the previous record's "
                                             "hash (found while the table ran)")
        if record.hash != chain_hash(record.prev_hash, record.message):
            return JournalBroken(record.seq, "hash does not match prev_hash + message (the "
                                             "message was altered while the table ran)")
        return None

"""Checking a journal's hash chain record by record, as it is read.

Each record must follow the one before it (seq + 1, ``prev_hash`` its hash), hash to its own
``hash``, and carry a message that parses as an event envelope whose seq, type, hand id, time
and table id are the record's columns. A journal that continues a quarantined one opens with a
``journal_continued`` above seq 1 (see :mod:`controller.stream.journal`).
"""

from __future__ import annotations

from typing import NamedTuple

from controller.stream import wire
from controller.stream.journal_records import (
    GENESIS_HASH,
    JournalBroken,
    JournalRecord,
    chain_hash,
    is_hash,
)
from controller.stream.journal_text import shown

#: The event type that may open a journal above seq 1 (see the module docstring).
CONTINUED = "journal_continued"


class VerifyReport(NamedTuple):
    """``ok`` with ``records_checked``; else the first record found bad and why. A problem
    that is no single record's (a missing trigger) has ``first_bad_seq`` None."""

    ok: bool
    records_checked: int
    first_bad_seq: int | None
    reason: str
    last_seq: int = 0
    last_hash: str = GENESIS_HASH


class ChainCheck:
    """Checks records one at a time, in seq order from the journal's first, as they are read:
    call it with each record; it returns the record's envelope, or raises
    :class:`JournalBroken` at the first bad one. ``last_seq`` and ``last_hash`` are those of the
    last sound record. The first record is seq 1, or a ``journal_continued`` whose seq follows
    the ``archived_seq`` it names (a journal that continues a quarantined one). ``table_id``:
    the table every record must be of (a reader that knows it: the daemon); else the first
    record's."""

    def __init__(self, table_id: str | None = None,
                 after: tuple[int, str] | None = None) -> None:
        """``after``: the (seq, hash) of a record the chain is followed from (a start from a
        checkpoint: the first record checked must follow it); else from the journal's
        first."""
        self.checked = 0
        self.last_seq, self.last_hash = (0, GENESIS_HASH) if after is None else after
        self.table_id = table_id
        self._from_first = after is None

    def __call__(self, record: JournalRecord) -> wire.EnvelopeBase:
        expected_seq = self.last_seq + 1
        if type(record.seq) is not int:
            raise seq_not_an_integer(self.last_seq, record.seq)
        if self.checked == 0 and self._from_first and record.seq > expected_seq \
                and record.type == CONTINUED:
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

"""A journal's record, its link in the hash chain, and the journal's errors.

A record's ``hash`` is ``sha256(prev_hash (ASCII hex) + message)``, hex; the first record's
``prev_hash`` is :data:`GENESIS_HASH` (see :mod:`controller.stream.journal` for the columns).
"""

from __future__ import annotations

import hashlib
import re
from typing import NamedTuple

from controller.errors import LowballError

GENESIS_HASH = "0" * 64
#: A record's hash (and prev_hash) as the daemon writes it.
_HASH = re.compile(r"[0-9a-f]{64}")


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



class Checkpoint(NamedTuple):
    """A checkpoint as stored beside the chain: the state at ``seq``, bound to the record at
    that seq (``prev_hash`` is its hash) and hashed as a record is
    (``hash = chain_hash(prev_hash, state)``)."""
    seq: int
    state: bytes
    prev_hash: str
    hash: str


def is_hash(text: object) -> bool:
    """Whether ``text`` is a hash as the journal writes them: 64 lowercase hexadecimal
    digits."""
    return isinstance(text, str) and _HASH.fullmatch(text) is not None


def chain_hash(prev_hash: str, message: bytes) -> str:
    """``sha256(prev_hash + message)`` in hex; ``prev_hash`` is hashed as its ASCII hex."""
    return hashlib.sha256(prev_hash.encode("ascii") + message).hexdigest()



class JournalBroken(JournalError):
    """A record breaks the hash chain: ``seq`` is the first bad one, ``reason`` says how."""

    def __init__(self, seq: int, reason: str):
        super().__init__(f"journal broken at seq {seq}: {reason}")
        self.seq, self.reason = seq, reason

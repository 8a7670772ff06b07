"""Records another process appends to a journal."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from controller.core.table_events import MeterChanged
from controller.stream import wire
from controller.stream.journal import chain_hash, journal_path


FORGED_METER = 99_999_999


def append_forged(state_dir: Path, table_id: str) -> int:
    """What another process with the file does: one more record, chained, seq last + 1."""
    connection = sqlite3.connect(journal_path(state_dir), isolation_level=None)
    seq, last_hash = connection.execute(
        "SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1").fetchone()
    when = datetime.now(UTC)
    event = MeterChanged(FORGED_METER, "contribution")
    message = wire.encode(event, table_id=table_id, seq=seq + 1, ts=when, hand_id=None)
    connection.execute(
        "INSERT INTO journal (seq, ts, type, hand_id, message, prev_hash, hash) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (seq + 1, wire.format_ts(when), "meter_changed", None, message, last_hash,
         chain_hash(last_hash, message)))
    connection.close()
    return int(seq) + 1

"""Journals for the running chain check, and rewrites by another process."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from controller.core.table_events import TableClosed
from controller.daemon.chain_watch import ChainWatch, check_interval, sweep_size
from controller.stream.journal import Journal, JournalBroken, journal_path


TABLE = "CALI-01"


def journal_of(tmp_path: Path, records: int) -> Journal:
    """A journal of ``records`` records (synced at checkpoints only: the check reads the
    same file either way, and a long journal is built in a moment)."""
    journal = Journal(journal_path(tmp_path), durability="batched")
    for first in range(0, records, 500):
        journal.append_all([TableClosed(f"closer {number}")
                            for number in range(first, min(records, first + 500))],
                           table_id=TABLE, hand_id=None)
    return journal


def rewrite(tmp_path: Path, statement: str, values: tuple[object, ...]) -> None:
    """Another process changes the journal's file, its UPDATE trigger dropped and put back
    (the check finds every trigger in place)."""
    with closing(sqlite3.connect(journal_path(tmp_path), isolation_level=None)) as other:
        (trigger,) = other.execute("SELECT sql FROM sqlite_master "
                                   "WHERE name = 'journal_no_update'").fetchone()
        other.execute("DROP TRIGGER journal_no_update")
        other.execute(statement, values)
        other.execute(trigger)


def check(journal: Journal, watch: ChainWatch, heartbeat_s: float) -> JournalBroken | None:
    """What TableDaemon.check_chain asks of the watch at every check (every
    ``check_interval(heartbeat_s)``)."""
    return watch.check(sweep=sweep_size(journal.last_seq - journal.first_seq + 1,
                                         check_interval(heartbeat_s)))

"""A journal's files swapped, damaged and quarantined under a table."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from controller.daemon.journal_quarantine import quarantine
from controller.stream.journal import journal_path

from tests.support.processes import TableProcess


def swap_in_a_copy(state_dir: Path) -> None:
    path = journal_path(state_dir)
    source, copy = sqlite3.connect(path), sqlite3.connect(f"{path}.copy")
    source.backup(copy)
    copy.close()
    source.close()
    os.replace(f"{path}.copy", path)


def damage_last_record(state_dir: Path) -> int:
    connection = sqlite3.connect(journal_path(state_dir), isolation_level=None)
    seq, message = connection.execute(
        "SELECT seq, message FROM journal ORDER BY seq DESC LIMIT 1").fetchone()
    connection.execute("DROP TRIGGER journal_no_update")
    connection.execute("UPDATE journal SET message = ? WHERE seq = ?", (message + b" ", seq))
    connection.execute("CREATE TRIGGER journal_no_update BEFORE UPDATE ON journal BEGIN "
                       "SELECT RAISE(ABORT, 'the journal is append-only: UPDATE refused'); END")
    connection.close()
    damaged: int = seq
    return damaged


def quarantine_damaged(table: TableProcess) -> int:
    """The table's journal found damaged: its daemon stopped, the journal quarantined (a new
    one started), the daemon started again. The quarantined journal's last seq."""
    table.kill()
    last = damage_last_record(table.state_dir)
    quarantine(table.state_dir, "disk damage found at start", by="sam")
    table.start()
    return last

"""The journal's write-ahead log as bytes: its header, frames and pages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import zmq

from tests.support.daemon import Daemon


#: The journal's page size (SQLite's default).
PAGE = 4096


#: The write-ahead log's header and each frame's header (SQLite's file format, section 4.1).
WAL_HEADER, FRAME_HEADER = 32, 24


def assert_held_or_refused(root: Path, config: Path, context: zmq.Context[Any],
                           lost: str) -> None:
    """A daemon started on the state dir of ``root`` after a journal lost ``lost`` (what the
    failure message says is gone) holds the table, or refuses to start: either keeps the seqs
    the floor holds from being used again."""
    after = Daemon(root, config, context)
    try:
        after.daemon.start()
    except Exception:  # noqa: BLE001 - refusing to start on it keeps the seqs too
        return
    try:
        status: dict[str, Any] = after.daemon.journal_status()
        assert status["broken_at"] is not None, \
            f"{lost}, yet the table plays on from seq {status['seq']}"
    finally:
        after.daemon.close()

"""A journal too long for SQLite's check of its file before READY is checked after it, and a
damaged file still holds the table.

Origin: ``quick_check`` reads the whole file at every start (seconds for a year's journal,
which kept the table from opening); it now runs in the background on a long journal
(controller/daemon/file_check.py). What it finds there must hold the table as at start: a page
no b-tree reaches may hide records the chain of the rest does not miss.
"""

from __future__ import annotations

import random
import struct
import time
from pathlib import Path
from typing import Any

import pytest
import structlog.testing
import zmq

from controller.daemon import loop
from controller.daemon.loop import TableDaemon
from controller.stream.journal import journal_path
from tests.support.table_play import Dealer, table_config

DEADLINE_S = 30.0


def add_a_page_no_tree_reaches(path: Path) -> None:
    """One page more at the file's end, counted in its header, used by nothing: what a lost
    write of the page that pointed to it leaves."""
    data = bytearray(path.read_bytes())
    page_size = struct.unpack(">H", data[16:18])[0]
    pages = struct.unpack(">I", data[28:32])[0]
    data[28:32] = struct.pack(">I", pages + 1)
    path.write_bytes(bytes(data) + bytes(page_size))


def test_a_damaged_file_found_after_ready_holds_the_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loop, "START_CHECK_BYTES", 0)  # every file is "long"
    loaded, state = table_config("three_card_lowball", tmp_path), tmp_path / "state"
    context: zmq.Context[Any] = zmq.Context()
    try:
        daemon = TableDaemon(loaded, state_dir=state, context=context, durability="batched")
        daemon.start()
        for _ in Dealer(daemon, "three_card_lowball", random.Random(1)).inputs():
            pass
        daemon.close()  # the last connection: the log is checkpointed into the file
        add_a_page_no_tree_reaches(journal_path(state))
        with structlog.testing.capture_logs() as logs:
            daemon = TableDaemon(loaded, state_dir=state, context=context,
                                 durability="batched")
            daemon.start()
        try:
            assert daemon.journal_broken is None  # READY: the file is checked after it
            assert any(line["event"].startswith("the journal's file is long") for line in logs)
            deadline = time.monotonic() + DEADLINE_S
            while daemon.journal_broken is None and time.monotonic() < deadline:
                daemon.check_chain()
                time.sleep(0.01)  # polling interval; the deadline decides
            broken = daemon.journal_broken
            assert broken is not None, "the damaged file was not found"
            assert "SQLite's check of the file finds it damaged" in broken.reason
            assert "never used" in broken.reason
            assert daemon.held_reason() is not None
        finally:
            daemon.close()
    finally:
        context.term()

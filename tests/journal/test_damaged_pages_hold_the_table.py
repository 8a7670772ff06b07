"""A damaged journal page, or a looping link renamed over the journal, holds the table.

Red team 9: what landed in the last two sessions (the console's sign-in turns and /64
grouping, the player key, the command channel's frames and withdrawals) attacked from
outside.

Each test states the behaviour the project promises and is marked xfail (strict) while the
hole is open: a fix turns it into a pass, and strict makes the suite say so."""

from __future__ import annotations

from pathlib import Path

import pytest
import zmq


@pytest.mark.slow
def test_a_damaged_page_met_by_the_running_check_holds_the_table(tmp_path: Path) -> None:
    import sqlite3

    from tests.support.daemon import run_config
    from tests.support.daemon import Daemon

    context = zmq.Context()
    config = run_config(tmp_path)
    try:
        table = Daemon(tmp_path, config, context)
        table.daemon.start()
        try:
            for _ in range(1500):                        # a shift's worth of records
                assert table.ask(command="open")["ok"]
                assert table.ask(command="close")["ok"]
        finally:
            table.daemon.close()
        table = Daemon(tmp_path, config, context)
        table.daemon.start()                             # verified at start: sound
        try:
            assert table.daemon.journal_broken is None
            with (tmp_path / "state" / "journal.sqlite3").open("r+b") as file:
                file.seek(3 * 4096)                      # the disk fails under early pages
                file.write(b"\xa5" * 4 * 4096)
            try:
                for _ in range(5):                       # the next heartbeats' checks
                    table.daemon.check_chain()
            except sqlite3.Error as error:
                raise AssertionError(f"the running check ended the daemon: {error!r}") from None
            assert table.daemon.journal_broken is not None, "a damaged journal was not held"
        finally:
            table.daemon.close()
    finally:
        context.term()


def test_a_looping_link_renamed_over_the_journal_holds_the_table_and_keeps_its_copy(
        tmp_path: Path) -> None:
    import os

    from controller.daemon.held_mark import EVIDENCE_DIR, MARK_FILE
    from tests.support.daemon import run_config
    from tests.support.daemon import Daemon

    context = zmq.Context()
    table = Daemon(tmp_path, run_config(tmp_path), context)
    table.daemon.start()
    state = tmp_path / "state"
    try:
        assert table.ask(command="open")["ok"]
        loop = state / "loop"
        os.symlink("journal.sqlite3", loop)              # someone with the state dir's rights
        os.replace(loop, state / "journal.sqlite3")
        try:
            table.daemon.check_chain()                   # the next heartbeat's check
        except OSError as error:
            raise AssertionError(f"the running check ended the daemon: {error!r}") from None
        assert table.daemon.journal_broken is not None, "the replaced journal was not held"
        assert (state / MARK_FILE).exists(), "the break was not written down"
        assert list((state / EVIDENCE_DIR).glob("*-as-the-daemon-wrote-it.sqlite3")), (
            "the daemon's journal was not copied out")
    finally:
        table.daemon.close()
        context.term()

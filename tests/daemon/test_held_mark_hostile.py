"""Red team 6: the held mark (controller/daemon/held_mark.py) attacked from outside."""

from __future__ import annotations

import os
from pathlib import Path

import zmq

from controller.daemon import held_mark
from controller.daemon.held_mark import EVIDENCE_DIR

from tests.support.daemon import run_config, started
from tests.support.journal_files import swap_in_a_copy


def test_a_mark_without_daemon_copy_holds_the_table_instead_of_crashing_the_start(
        tmp_path: Path) -> None:
    held_mark.mark_path(tmp_path).write_bytes(
        b'{"first_bad_seq": 3, "daemon_seq": 2, "reason": "r", "found": "2026-11-25T11:00:00",'
        b' "daemon_hash": "h"}')
    broken = held_mark.read(tmp_path)
    assert broken is not None and broken.seq >= 1


def test_a_swapped_journal_stays_held_after_a_restart_even_when_its_evidence_cannot_be_kept(
        tmp_path: Path) -> None:
    state, path = tmp_path / "state", run_config(tmp_path)
    with zmq.Context() as context:
        with started(tmp_path, path, context) as table:
            assert table.ask(command="open")["ok"]
            # Where the evidence would go cannot be a folder (as on a full disk, or a read-only
            # quarantine mount): the copy fails.
            (state / EVIDENCE_DIR).write_text("not a folder")
            swap_in_a_copy(state)
            assert table.ask(command="place", spot=1, wager="ante", amount=500)["ok"]
            table.daemon.check_chain()
            assert table.daemon.journal_broken is not None  # held while it runs
        with started(tmp_path, path, context) as table:
            assert table.daemon.journal_broken is not None, \
                "restarted on the swapped-in journal as verified: the break was not written down"


def test_a_fifo_at_the_marks_name_holds_the_table_and_does_not_hang_the_start(
        tmp_path: Path) -> None:
    os.mkfifo(held_mark.mark_path(tmp_path))       # an open() of it would wait for a writer
    broken = held_mark.read(tmp_path)
    assert broken is not None and broken.seq == 1 and "not a regular file" in broken.reason

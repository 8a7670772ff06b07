"""Red team 6: the held mark (controller/daemon/held_mark.py) attacked from outside."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import zmq

from controller.daemon import held_mark
from controller.daemon.held_mark import EVIDENCE_DIR
from tests.redteam.test_journal_file_swapped import swap_in_a_copy
from tests.reliability.test_startup_trust import run_config
from tests.test_reload import started


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


#: "P-1" written with another script's P (Cyrillic Er, Greek Rho): NFKC keeps them apart.
CROSS_SCRIPT = ["\u0420-1", "\u03a1-1"]


@pytest.mark.parametrize("lookalike", CROSS_SCRIPT)
def test_a_cross_script_lookalike_is_refused_or_counted_as_the_same_player(
        lookalike: str) -> None:
    from tests.redteam.test_player_id_lookalikes import \
        test_a_lookalike_player_id_is_refused_or_counted_as_the_same_player as same_player
    same_player(lookalike)


def test_a_guesser_spread_over_many_addresses_is_held_whatever_names_it_gives() -> None:
    from controller.console.sessions import FAILURES, Sessions

    now = [0.0]
    sessions = Sessions(15, {"alice": "0" * 64}, clock=lambda: now[0])
    for guess in range(FAILURES * 20):                 # 100 guesses within one minute
        address, name = f"10.0.{guess}.1", f"alice{guess}"
        if sessions.locked_for(address):
            return                                     # held: the guessing stops here
        sessions.failed(address)
        now[0] += 0.5
    raise AssertionError(f"{FAILURES * 20} wrong credentials in {now[0]:.0f} s, none held")

"""Red team 7: what the sixth round's fixes left open.

Each test states the behaviour the project promises; each was an open hole (xfail strict)
until its fix landed."""

from __future__ import annotations

from pathlib import Path

import pytest
import zmq

from tests.support.waits import DEADLINE_S


def test_a_swapped_journal_stays_held_after_a_restart_whatever_sits_at_the_marks_partial_name(
        tmp_path: Path) -> None:
    from controller.daemon import held_mark
    from tests.support.journal_files import swap_in_a_copy
    from tests.support.daemon import run_config
    from tests.support.daemon import Daemon

    context = zmq.Context()
    state = tmp_path / "state"
    table = Daemon(tmp_path, run_config(tmp_path), context)
    table.daemon.start()
    try:
        assert table.ask(command="open")["ok"]
        # Whoever swaps the journal first puts a folder where the mark is written.
        Path(f"{held_mark.mark_path(state)}.partial").mkdir()
        swap_in_a_copy(state)
        assert table.ask(command="place", spot=1, wager="ante", amount=500)["ok"]
        table.daemon.check_chain()
        assert table.daemon.journal_broken is not None  # held while it runs
    finally:
        table.daemon.close()
    table = Daemon(tmp_path, run_config(tmp_path), context)
    table.daemon.start()
    try:
        assert table.daemon.journal_broken is not None, \
            "restarted on the swapped-in journal as verified: the break was not written down"
    finally:
        table.daemon.close()
        context.term()


def test_writing_the_mark_never_writes_through_a_link_at_its_partial_name(
        tmp_path: Path) -> None:
    from controller.daemon import held_mark
    from controller.stream.journal import JournalBroken

    evidence = tmp_path / "quarantine" / "journal-20261125T110000Z.sqlite3"
    evidence.parent.mkdir()
    evidence.write_bytes(b"SQLite format 3\x00 the journal a supervisor archived")
    Path(f"{held_mark.mark_path(tmp_path)}.partial").symlink_to(evidence)
    try:
        held_mark.write(tmp_path, JournalBroken(3, "found while the table ran"),
                        daemon_seq=2, daemon_hash="ab" * 32)
    except OSError:
        pass  # refusing to write through the link is fine; the evidence must stay
    assert evidence.read_bytes().startswith(b"SQLite format 3"), \
        "the archived journal was overwritten by the mark"


def test_writing_the_mark_never_opens_a_fifo_at_its_partial_name(tmp_path: Path) -> None:
    import os
    import threading

    from controller.daemon import held_mark
    from controller.stream.journal import JournalBroken

    os.mkfifo(f"{held_mark.mark_path(tmp_path)}.partial")
    failed: list[BaseException] = []

    def write() -> None:
        try:
            held_mark.write(tmp_path, JournalBroken(3, "found while the table ran"),
                            daemon_seq=2, daemon_hash="ab" * 32)
        except BaseException as error:  # noqa: BLE001 - reported by the test's thread
            failed.append(error)

    # A regression would block in open() for ever: in a thread, so the test fails instead.
    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    writer.join(DEADLINE_S)
    if writer.is_alive():
        # Unblock the writer (a reader at the other end) before failing.
        os.close(os.open(f"{held_mark.mark_path(tmp_path)}.partial", os.O_RDONLY | os.O_NONBLOCK))
        pytest.fail("writing the mark hung on a FIFO at its partial name")
    assert not failed, failed
    broken = held_mark.read(tmp_path)
    assert broken is not None and broken.seq == 3
    assert sorted(path.name for path in tmp_path.iterdir()) == \
        [held_mark.MARK_FILE, f"{held_mark.MARK_FILE}.partial"]   # no file of its own left

"""A journal file renamed over the running daemon's (red team 5).

The running chain check (controller/daemon/chain_watch.py) reads the journal through the
daemon's own open connection: it checks the file the daemon opened, not the file at the
journal's path. Another process that renames a file over the path (here: a sound copy of the
journal as it was a few records ago; it could be any chain it wrote) is not noticed: the daemon
journals the next hand's wagers, lock and contribution into the unlinked file, the heartbeat
says verified through them, and the next start reads the file at the path: the table is OPEN
at the old seq, the locked hand and its wagers are in no journal, and nothing is held."""

from __future__ import annotations

from pathlib import Path

import zmq

from controller.stream.journal import journal_path

from tests.support.daemon import run_config
from tests.support.daemon import started
from tests.support.journal_files import swap_in_a_copy


def test_a_journal_file_swapped_under_the_daemon_holds_the_table(tmp_path: Path) -> None:
    with zmq.Context() as context, started(tmp_path, run_config(tmp_path), context) as table:
        assert table.ask(command="open")["ok"]
        swap_in_a_copy(tmp_path / "state")
        for spot in (1, 2):
            for wager, amount in (("ante", 500), ("bonus", 500), ("progressive", 100)):
                table.ask(command="place", spot=spot, wager=wager, amount=amount)
        table.ask(command="lock")
        for _ in range(3):
            table.daemon.check_chain()
        assert table.daemon.journal_broken is not None, (
            f"the daemon journaled through seq {table.daemon.journal.last_seq} into a file no "
            f"longer at {journal_path(tmp_path / 'state')}, and says it is verified: "
            f"{table.daemon.journal_status()}")

"""A record appended to the journal by another process while the daemon runs (red team 5).

The hash chain has no key: whoever can write the journal file can append a record that chains
correctly (``sha256(prev_hash + message)``), with the next seq, the triggers untouched. The
running check (controller/daemon/chain_watch.py) follows the chain through it and counts it as
verified: it only asks whether the chain stops *short of* what the daemon wrote, never whether
it runs *past* it. The heartbeat then says the journal is verified through a seq the daemon
never wrote, the table is not held, the daemon's own next append fails on the seq, and the
restart replays the forged record as the table's history: the daemon's next command raised
JournalError ("cannot append seq 7-9: the journal is gapless"), and a daemon started again on
the journal verified all 7 records and showed the forged meter, 99,999,999 cents, not held."""

from __future__ import annotations

from pathlib import Path

from tests.support.daemon import beating
from tests.support.forgery import append_forged
from tests.support.waits import wait_for


def test_a_record_appended_by_another_process_holds_the_table(tmp_path: Path) -> None:
    with beating(tmp_path) as (table, beat):
        assert table.ask(command="open")["ok"]
        written = table.daemon.journal.last_seq
        wait_for(beat, "a heartbeat")
        forged = append_forged(tmp_path / "state", table.daemon.table_id)
        heartbeat = wait_for(beat, "a heartbeat after the append")
        # what it says today: verified through the forged record, nothing broken
        assert heartbeat.journal_verified_through is not None
        assert heartbeat.journal_verified_through <= written, (
            f"the heartbeat says the journal is verified through seq "
            f"{heartbeat.journal_verified_through}; the daemon wrote up to {written} "
            f"(seq {forged} is another process's)")
        assert heartbeat.journal_broken_at == forged

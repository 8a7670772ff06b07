"""The floor was behind when a linked table's journal broke (red team 7).

The floor stopped; the table dealt two more hands (their progressive contributions are the
players' money on the pool's meter); the journal broke and was quarantined. The floor resumed
after the last seq it had stored and was answered with the new journal's ``journal_continued``
alone: the two hands never reached its store, and the pool's ledger never counted their
contributions. Now the archived journal's verified records are served and stored, and the
pool counts every contribution the table journaled."""

from __future__ import annotations

from pathlib import Path

from controller.daemon.journal_quarantine import quarantine
from controller.floor.local_cluster import LocalCluster

from tests.support.journal_files import damage_last_record
from tests.support.pool import journal, link_up, linked_table, query, settled
from tests.support.pool import caught_up, contributions
from tests.support.processes import FloorProcess, PoolDealer, wait_until, write_floor_config

POOL = "LINK-1"


def test_the_pool_counts_the_contributions_the_floor_missed_before_a_quarantine(
        postgres: LocalCluster, database: str, tmp_path: Path) -> None:
    endpoint = f"ipc://{tmp_path}/pool"
    table = linked_table("TCL-01", endpoint)
    floor = None
    try:
        config = write_floor_config(tmp_path / "floor.toml", database, [table], {},
                                    pools={POOL: [table.table_id]}, pool_link=endpoint)
        floor = FloorProcess(config, tmp_path / "floor.log")
        wait_until(lambda: link_up(table), "the table hears the pool")
        dealer = PoolDealer(table, {1: "P-1"})
        dealer.hand()
        wait_until(lambda: settled(database, table), "the first hand in the pool")
        floor.stop()                                    # the floor is behind from here
        dealer.hand()
        dealer.hand()
        table.kill()
        archived_last = journal(table)[-1][0]
        old = contributions(table)
        damage_last_record(table.state_dir)             # (not a contribution: the meter's)
        quarantine(table.state_dir, "disk damage found at start", by="sam")
        table.start()
        floor.start()
        assert table.ask({"command": "open"})["ok"]
        wait_until(lambda: link_up(table), "the table hears the pool again")
        PoolDealer(table, {1: "P-1"}).hand()
        wait_until(lambda: caught_up(database, table), "the floor and the pool caught up",
                   timeout=60)
        new = contributions(table)
        (pooled,), = query(database, "SELECT contributions FROM floor_pool_meters")
        stored = {seq for seq, in query(database, "SELECT seq FROM floor_events")}
    finally:
        if floor is not None:
            floor.stop()
        table.close()
    assert set(range(1, archived_last)) <= stored       # the archived records, verified
    assert archived_last not in stored                  # the damaged one: named, not stored
    assert pooled == old + new, f"the tables journaled {old} + {new} cents; the pool {pooled}"

"""The floor and the pool after a table's journal is quarantined (red team 5).

Quarantine starts a new journal at seq 1 (and the table's hand numbers at 1 again). The floor
keys every stored event by (table_id, seq) (``floor_events``, ``ON CONFLICT DO NOTHING``) and
resumes each table after the last seq it stored (``floor_cursors.resume_after``); its feed
refuses a journal that ends *below* that seq (controller/floor/feed.py) but has no idea of a
journal's identity. So it waits until the new journal has grown past the old one's last seq,
then follows it from there as if nothing happened: the new journal's records up to that seq
never reach the floor, and the linked pool's ledger never sees their contributions (the
players' money on the meter), voids or jackpots. The hand ids repeat too (the pool gives a
voided hand back what *every* hand of that id contributed)."""

from __future__ import annotations

import pytest

from bench.floor_rig import FloorProcess, PoolDealer, TableProcess, wait_until, \
    write_floor_config
from bench.power_loss import CREDENTIAL
from controller.daemon.journal_quarantine import quarantine
from tests.floor.test_pool_floor import journal, query
from tests.redteam.test_quarantine_mid_hand import damage_last_record

POOL = "LINK-1"


def contributions(table: TableProcess) -> int:
    return sum(data["contribution"] for _, kind, data in journal(table)
               if kind == "meter_contributed")


@pytest.mark.xfail(strict=True, reason="after a quarantine the floor skips the new journal's "
                   "records up to the old journal's last seq: contributions lost from the pool")
def test_the_pool_counts_every_contribution_of_a_quarantined_tables_new_journal(
        postgres, database, tmp_path):
    table = TableProcess("TCL-01")
    floor = None
    try:
        config = write_floor_config(tmp_path / "floor.toml", database, [table], {},
                                    pools={POOL: [table.table_id]})
        floor = FloorProcess(config, tmp_path / "floor.log")
        dealer = PoolDealer(table, {1: "P-1"})
        for _ in range(2):
            dealer.hand()
        old_last = journal(table)[-1][0]
        old = contributions(table)
        wait_until(lambda: query(database, "SELECT applied_through FROM floor_pool_tables")
                   == [(old_last,)], "the old journal in the pool")

        # the journal found damaged: the daemon stopped, the journal quarantined, started again
        table.kill()
        damage_last_record(table.state_dir)
        quarantine(table.state_dir, "disk damage found at start", by="sam")
        table.start()
        assert table.ask({"command": "adjust_meter", "amount": 0, "reason": "sign checked",
                          "credential": CREDENTIAL})["ok"]
        assert table.ask({"command": "open"})["ok"]
        dealer = PoolDealer(table, {1: "P-1"})
        while journal(table)[-1][0] <= old_last + 5:
            dealer.hand()
        new_last = journal(table)[-1][0]
        new = contributions(table)
        assert new > 0
        wait_until(lambda: query(database, "SELECT resume_after FROM floor_cursors")
                   == [(new_last,)], "the floor following the new journal", timeout=60)
        wait_until(lambda: query(database, "SELECT applied_through FROM floor_pool_tables")
                   == [(new_last,)], "the pool caught up", timeout=60)
        (pooled,), = query(database, "SELECT contributions FROM floor_pool_meters")
        rows = query(database, "SELECT seq, amount FROM floor_pool_ledger "
                               "WHERE kind = 'contribution' ORDER BY entry")
        journaled = [(seq, data["contribution"]) for seq, kind, data in journal(table)
                     if kind == "meter_contributed"]
    finally:
        if floor is not None:
            floor.stop()
        table.close()
    assert pooled == old + new, (
        f"the tables journaled {old} + {new} cents of contributions; the pool's ledger holds "
        f"{pooled}: (seq, cents) {rows}; the new journal's {journaled}, the old one's last "
        f"seq {old_last}")

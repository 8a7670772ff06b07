"""A quarantined table's new journal hits a jackpot on a hand id the pool has already seen
(red team 5).

``floor_pool_hits`` is UNIQUE (table_id, hand_id) and a claim is ``ON CONFLICT DO NOTHING``
(controller/floor/pool.py, ``_Pool.claim``); ``_Pool.verified`` marks verified the unverified
hit of that table and hand id. Hand numbers start at 1 again in the journal a quarantine starts.
So when a jackpot was pending at the break (a known gap: quarantine does not carry it, and the
pool stays locked on it) and the new journal's hand of the same number hits too, the new hit is
never claimed (no ledger row: the meter is not debited for the jackpot the table pays), and
its verification unlocks the *old* hit instead. On a linked table the floor goes on publishing
the old claim under that hand id, which the table takes for its own: it pays the old hit's
amount."""

from __future__ import annotations

import pytest

from bench.floor_rig import FloorProcess, PoolDealer, TableProcess, wait_until, \
    write_floor_config
from bench.power_loss import CREDENTIAL
from controller.daemon.journal_quarantine import quarantine
from tests.floor.test_pool_floor import journal, query
from tests.redteam.test_quarantine_mid_hand import damage_last_record

POOL = "LINK-1"


def caught_up(database: str, table: TableProcess) -> bool:
    return query(database, "SELECT applied_through FROM floor_pool_tables") == \
        [(journal(table)[-1][0],)]


@pytest.mark.xfail(strict=True, reason="after a quarantine a jackpot on a reused hand id is "
                   "never claimed by the pool, and its verification unlocks the old hit")
def test_each_hit_of_a_quarantined_table_is_claimed_once(postgres, database, tmp_path):
    table = TableProcess("TCL-01")
    floor = None
    try:
        config = write_floor_config(tmp_path / "floor.toml", database, [table], {},
                                    pools={POOL: [table.table_id]})
        floor = FloorProcess(config, tmp_path / "floor.log")
        dealer = PoolDealer(table, {1: "P-1"})
        dealer.jackpot_next()
        dealer.hand()                                   # hand 1: the jackpot, pending
        old_last = journal(table)[-1][0]
        wait_until(lambda: caught_up(database, table), "the old hit in the pool")

        table.kill()                                    # found damaged before verification
        damage_last_record(table.state_dir)
        quarantine(table.state_dir, "disk damage found at start", by="sam")
        table.start()
        assert table.ask({"command": "adjust_meter", "amount": 0, "reason": "sign checked",
                          "credential": CREDENTIAL})["ok"]
        assert table.ask({"command": "open"})["ok"]
        while journal(table)[-1][0] <= old_last:
            assert table.ask({"command": "place", "spot": 2, "wager": "ante",
                              "amount": 500})["ok"]
            assert table.ask({"command": "cancel", "spot": 2, "wager": "ante"})["ok"]
        dealer = PoolDealer(table, {1: "P-1"})
        dealer.jackpot_next()
        dealer.hand()                                   # the new journal's hand 1: a jackpot
        dealer.verify()
        wait_until(lambda: caught_up(database, table), "the new hit in the pool", timeout=60)
        hits = query(database, "SELECT hand_id, seq, paid, verified_seq IS NOT NULL "
                               "FROM floor_pool_hits ORDER BY hit")
        pending = [(seq, data["hand_id"]) for seq, kind, data in journal(table)
                   if kind == "jackpot_pending"]
    finally:
        if floor is not None:
            floor.stop()
        table.close()
    assert len(hits) == 2 and not hits[0][3] and hits[1][3], (
        f"the new journal's jackpot {pending} and the old one's: the pool holds {hits} "
        f"(hand, seq, paid, verified)")

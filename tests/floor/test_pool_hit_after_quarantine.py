"""A quarantined table's new journal hits a jackpot on a hand id the pool has already seen
(red team 5).

``floor_pool_hits`` is UNIQUE (table_id, hand_id) and a claim is ``ON CONFLICT DO NOTHING``
(controller/floor/pool.py, ``_Pool.claim``); ``_Pool.verified`` marks verified the unverified
hit of that table and hand id. Hand numbers started at 1 again in the journal a quarantine
started. So when a jackpot was pending at the break and the new journal's hand of the same
number hit too, the new hit was never claimed (no ledger row: the meter not debited for the
jackpot the table pays), and its verification unlocked the *old* hit instead.

Fixed: the new journal numbers its hands after the archived journal's last
(``journal_continued.hand_number``); the jackpot pending at the break is carried (the table
verifies it in the new journal) and each hit is claimed and verified once, as its own."""

from __future__ import annotations

from bench.power_loss import CREDENTIAL

from tests.support.journal_files import quarantine_damaged
from tests.support.pool import claimed, journal, link_up, pool_caught_up, query, settled
from tests.support.processes import PoolDealer, TableProcess, wait_until


def test_each_hit_of_a_quarantined_table_is_claimed_once(
        pooled_table: TableProcess, database: str) -> None:
    table = pooled_table
    dealer = PoolDealer(table, {1: "P-1"})
    dealer.jackpot_next()
    dealer.hand()                                   # hand 1: the jackpot, pending
    wait_until(lambda: claimed(table) and settled(database, table), "the old hit in the pool")

    old_last = quarantine_damaged(table)            # found damaged before verification
    assert journal(table)[0][0] == old_last + 1     # the table's numbering goes on
    wait_until(lambda: claimed(table, "TCL-01-000001"), "the carried jackpot's claim heard")
    assert table.ask({"command": "verify_jackpot", "credential": CREDENTIAL})["ok"]
    assert table.ask({"command": "open"})["ok"]     # (a linked table's meter is the pool's)
    wait_until(lambda: link_up(table), "the table hears the pool again")
    dealer = PoolDealer(table, {1: "P-1"})
    dealer.jackpot_next()
    dealer.hand()                                   # the new journal's first hand: a jackpot
    wait_until(lambda: claimed(table), "the new hit's claim heard", timeout=60)
    dealer.verify()
    wait_until(lambda: pool_caught_up(database, [table]), "the new hit in the pool", timeout=60)
    hits = query(database, "SELECT hand_id, verified_seq FROM floor_pool_hits ORDER BY hit")
    verified = [(data["hand_id"], seq) for seq, kind, data in journal(table)
                if kind == "jackpot_verified"]
    pending = [data["hand_id"] for _, kind, data in journal(table)
               if kind == "jackpot_pending"]
    assert pending == ["TCL-01-000002"]
    assert hits == verified == [("TCL-01-000001", hits[0][1]), ("TCL-01-000002", hits[1][1])], (
        f"the pool's hits (hand, verified seq) {hits}; the table verified {verified}")

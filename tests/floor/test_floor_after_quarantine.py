"""The floor and the pool after a table's journal is quarantined (red team 5).

Quarantine starts a new journal at seq 1 (and the table's hand numbers at 1 again). The floor
keys every stored event by (table_id, seq) (``floor_events``, ``ON CONFLICT DO NOTHING``) and
resumes each table after the last seq it stored (``floor_cursors.resume_after``); its feed
refuses a journal that ends *below* that seq (controller/floor/feed.py) but has no idea of a
journal's identity. So it waits until the new journal has grown past the old one's last seq,
then follows it from there as if nothing happened: the new journal's records up to that seq
never reach the floor, and the linked pool's ledger never sees their contributions (the
players' money on the meter), voids or jackpots. The hand ids repeat too (the pool gives a
voided hand back what *every* hand of that id contributed).

Fixed: the new journal goes on with the table's seqs (its first is the archived journal's last
+ 1) and hand numbers (``journal_continued.hand_number``)."""

from __future__ import annotations

from tests.support.journal_files import quarantine_damaged
from tests.support.pool import journal, link_up, query, settled
from tests.support.pool import contributions, caught_up
from tests.support.processes import PoolDealer, TableProcess, wait_until


def test_the_pool_counts_every_contribution_of_a_quarantined_tables_new_journal(
        pooled_table: TableProcess, database: str) -> None:
    table = pooled_table
    dealer = PoolDealer(table, {1: "P-1"})
    for _ in range(2):
        dealer.hand()
    wait_until(lambda: settled(database, table), "the old journal in the pool")
    old = contributions(table)

    old_last = quarantine_damaged(table)            # (a linked table's meter is the pool's)
    assert table.ask({"command": "open"})["ok"]
    wait_until(lambda: link_up(table), "the table hears the pool again")
    dealer = PoolDealer(table, {1: "P-1"})
    for _ in range(2):
        dealer.hand()
    assert journal(table)[0][0] == old_last + 1    # the table's numbering goes on
    new = contributions(table)
    assert new > 0
    # (the table goes on journaling the pool's meter as it hears it: its last seq moves on)
    wait_until(lambda: caught_up(database, table), "the floor and the pool following "
               "the new journal", timeout=60)
    (pooled,), = query(database, "SELECT contributions FROM floor_pool_meters")
    rows = query(database, "SELECT seq, amount FROM floor_pool_ledger "
                           "WHERE kind = 'contribution' ORDER BY entry")
    journaled = [(seq, data["contribution"]) for seq, kind, data in journal(table)
                 if kind == "meter_contributed"]
    assert pooled == old + new, (
        f"the tables journaled {old} + {new} cents of contributions; the pool's ledger holds "
        f"{pooled}: (seq, cents) {rows}; the new journal's {journaled}, the old one's last "
        f"seq {old_last}")

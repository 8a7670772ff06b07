"""A quarantined table's hand numbers start at 1 again, and the pool takes a void back by hand
id (red team 5).

The pool gives a voided hand back "the hand's contributions in this ledger"
(controller/floor/pool.py, ``_Pool.voided``): the sum of every ``contribution`` row of that
table and hand id, whichever journal it came from, and without subtracting what an earlier
void of that id already gave back. After a quarantine the new journal's first hand is
``<table>-000001`` again: voiding it takes the old hand 1's contribution off the meter a second
time (the players' money, taken off the pool for nothing).

Fixed twice over: the new journal numbers its hands after the archived journal's last
(``journal_continued.hand_number``), and a void gives back a hand's contributions less what an
earlier void of it gave back."""

from __future__ import annotations

from bench.power_loss import CREDENTIAL

from tests.support.journal_files import quarantine_damaged
from tests.support.pool import SEED, journal, link_up, pool_caught_up, query, settled
from tests.support.processes import TableProcess, wait_until


def lock_and_void(table: TableProcess) -> int:
    for wager, amount in (("ante", 500), ("bonus", 500), ("progressive", 100)):
        assert table.ask({"command": "place", "spot": 1, "wager": wager, "amount": amount,
                          "player": "P-1"})["ok"]
    assert table.ask({"command": "lock"})["ok"]
    hand: int = table.ask({"command": "status"})["state"]["hand_number"]
    assert table.ask({"command": "void", "reason": "the test deals no cards",
                      "credential": CREDENTIAL})["ok"]
    return hand


def test_a_void_after_quarantine_gives_back_only_its_own_hands_contribution(
        pooled_table: TableProcess, database: str) -> None:
    table = pooled_table
    old_hand = lock_and_void(table)
    wait_until(lambda: settled(database, table), "the old journal in the pool")

    old_last = quarantine_damaged(table)            # (a linked table's meter is the pool's)
    assert table.ask({"command": "open"})["ok"]
    wait_until(lambda: link_up(table), "the table hears the pool again")
    assert journal(table)[0][0] == old_last + 1    # the table's numbering goes on
    new_hand = lock_and_void(table)
    assert new_hand == old_hand + 1
    wait_until(lambda: pool_caught_up(database, [table]), "the new hand in the pool",
               timeout=60)
    voids = query(database, "SELECT seq, amount FROM floor_pool_ledger WHERE kind = 'void' "
                            "ORDER BY entry")
    (meter,), = query(database, "SELECT meter FROM floor_pools")
    assert [amount for _, amount in voids] == [-20, -20] and meter == SEED, (
        f"two hands of 20 cents each voided; the pool gave back {voids} and its meter is "
        f"{meter} (seeded at {SEED})")

"""A quarantined table's hand numbers start at 1 again, and the pool takes a void back by hand
id (red team 5).

The pool gives a voided hand back "the hand's contributions in this ledger"
(controller/floor/pool.py, ``_Pool.voided``): the sum of every ``contribution`` row of that
table and hand id, whichever journal it came from, and without subtracting what an earlier
void of that id already gave back. After a quarantine the new journal's first hand is
``<table>-000001`` again: voiding it takes the old hand 1's contribution off the meter a second
time (the players' money, taken off the pool for nothing)."""

from __future__ import annotations

import pytest

from bench.floor_rig import FloorProcess, TableProcess, wait_until, write_floor_config
from bench.power_loss import CREDENTIAL
from controller.daemon.journal_quarantine import quarantine
from tests.floor.test_pool_floor import SEED, journal, query
from tests.redteam.test_quarantine_mid_hand import damage_last_record

POOL = "LINK-1"


def lock_and_void(table: TableProcess) -> int:
    for wager, amount in (("ante", 500), ("bonus", 500), ("progressive", 100)):
        assert table.ask({"command": "place", "spot": 1, "wager": wager, "amount": amount,
                          "player": "P-1"})["ok"]
    assert table.ask({"command": "lock"})["ok"]
    hand = table.ask({"command": "status"})["state"]["hand_number"]
    assert table.ask({"command": "void", "reason": "the test deals no cards",
                      "credential": CREDENTIAL})["ok"]
    return hand


def caught_up(database: str, table: TableProcess) -> bool:
    return query(database, "SELECT applied_through FROM floor_pool_tables") == \
        [(journal(table)[-1][0],)]


@pytest.mark.xfail(strict=True, reason="a voided hand of a quarantined table's new journal "
                   "gives back the old journal's contributions of the same hand id too")
def test_a_void_after_quarantine_gives_back_only_its_own_hands_contribution(
        postgres, database, tmp_path):
    table = TableProcess("TCL-01")
    floor = None
    try:
        config = write_floor_config(tmp_path / "floor.toml", database, [table], {},
                                    pools={POOL: [table.table_id]})
        floor = FloorProcess(config, tmp_path / "floor.log")
        old_hand = lock_and_void(table)
        old_last = journal(table)[-1][0]
        wait_until(lambda: caught_up(database, table), "the old journal in the pool")

        table.kill()
        damage_last_record(table.state_dir)
        quarantine(table.state_dir, "disk damage found at start", by="sam")
        table.start()
        assert table.ask({"command": "adjust_meter", "amount": 0, "reason": "sign checked",
                          "credential": CREDENTIAL})["ok"]
        assert table.ask({"command": "open"})["ok"]
        # the new journal past the floor's resume point (a player changing their mind), so
        # that the floor stores what follows (see test_floor_after_quarantine)
        while journal(table)[-1][0] <= old_last:
            assert table.ask({"command": "place", "spot": 2, "wager": "ante",
                              "amount": 500})["ok"]
            assert table.ask({"command": "cancel", "spot": 2, "wager": "ante"})["ok"]
        new_hand = lock_and_void(table)
        assert new_hand == old_hand
        wait_until(lambda: caught_up(database, table), "the new hand in the pool", timeout=60)
        voids = query(database, "SELECT seq, amount FROM floor_pool_ledger WHERE kind = 'void' "
                                "ORDER BY entry")
        (meter,), = query(database, "SELECT meter FROM floor_pools")
    finally:
        if floor is not None:
            floor.stop()
        table.close()
    assert [amount for _, amount in voids] == [-20, -20] and meter == SEED, (
        f"two hands of 20 cents each voided; the pool gave back {voids} and its meter is "
        f"{meter} (seeded at {SEED})")

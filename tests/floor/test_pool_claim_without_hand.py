"""The pool pays a jackpot for a hand that never happened (red team 5).

The floor claims every ``jackpot_pending`` a member table journals (controller/floor/pool.py,
``_Pool.apply`` -> ``claim``): it does not ask whether that hand was ever started, whether a
progressive wager was locked on the seats it names, whether the hand id in its data is the
record's own. One compromised table of a linked pool (a machine on the casino network, as
tests/floor/test_hostile_table.py has it) empties the meter every other table's players filled:
here a table that journaled nothing but its opening (linked to the pool) claims the whole
pool."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from controller.core.table_events import JackpotPending

from tests.support.hostile_table import HostileTable
from tests.support.hostile_table import linked_to, opened, stored
from tests.support.pool import query
from tests.support.postgres import RunningFloor
from tests.support.processes import wait_until

POOL = "LINK-1"


def test_the_pool_pays_no_jackpot_for_a_hand_that_never_happened(
        tmp_path: Path, database: str, floor: Callable[..., RunningFloor]) -> None:
    hostile = HostileTable(tmp_path / "hostile", "TCL-01")
    try:
        floor(hostile, pools={POOL: ["TCL-01"]})
        hostile.emit([opened("TCL-01"), linked_to(POOL)])
        hostile.emit([JackpotPending("TCL-01-000042", (1, 2, 3), 1)], hand_id="TCL-01-000042")
        wait_until(lambda: len(stored(database, "TCL-01")) == 3, "the events stored")
        wait_until(lambda: query(database, "SELECT applied_through FROM floor_pool_tables")
                   == [(3,)], "the pool caught up")
        paid = query(database, "SELECT paid FROM floor_pool_hits")
        disputed = query(database, "SELECT table_id, seq, hand_id, problem "
                                   "FROM floor_pool_disputes")
        meter = query(database, "SELECT meter FROM floor_pools")
    finally:
        hostile.close()
    assert paid == [], f"the pool paid {paid} cents for hand TCL-01-000042, never dealt"
    assert disputed == [("TCL-01", 3, "TCL-01-000042", "hand TCL-01-000042 was never started at "
                         "TCL-01 (no hand_started stored before seq 3)")]
    assert meter == [(500_000,)]

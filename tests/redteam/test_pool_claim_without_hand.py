"""The pool pays a jackpot for a hand that never happened (red team 5).

The floor claims every ``jackpot_pending`` a member table journals (controller/floor/pool.py,
``_Pool.apply`` -> ``claim``): it does not ask whether that hand was ever started, whether a
progressive wager was locked on the seats it names, whether the hand id in its data is the
record's own. One compromised table of a linked pool (a machine on the casino network, as
tests/floor/test_hostile_table.py has it) empties the meter every other table's players filled:
here a table that journaled nothing but its opening claims the whole pool."""

from __future__ import annotations

import threading

import pytest

from bench.floor_rig import wait_until, write_floor_config
from controller.core.table_events import JackpotPending
from controller.floor.config import load_floor_config
from controller.floor.service import FloorService
from tests.floor.hostile_table import HostileTable
from tests.floor.test_hostile_table import opened, stored
from tests.floor.test_pool_floor import query

POOL = "LINK-1"


@pytest.mark.xfail(strict=True, reason="the pool claims a jackpot_pending for a hand the table "
                   "never started, with no progressive wager locked: the meter paid out")
def test_the_pool_pays_no_jackpot_for_a_hand_that_never_happened(tmp_path, database):
    hostile = HostileTable(tmp_path / "hostile", "TCL-01")
    service = thread = None
    try:
        config = write_floor_config(tmp_path / "floor.toml", database, [hostile], {},
                                    pools={POOL: ["TCL-01"]}, retry_s=0.2)
        service = FloorService(load_floor_config(config))
        thread = threading.Thread(target=service.run, daemon=True)
        thread.start()
        hostile.emit([opened("TCL-01")])
        hostile.emit([JackpotPending("TCL-01-000042", (1, 2, 3), 1)], hand_id="TCL-01-000042")
        wait_until(lambda: len(stored(database, "TCL-01")) == 2, "both events stored")
        wait_until(lambda: query(database, "SELECT applied_through FROM floor_pool_tables")
                   == [(2,)], "the pool caught up")
        paid = query(database, "SELECT paid FROM floor_pool_hits")
    finally:
        if service is not None:
            service.request_stop()
            thread.join(20)
        hostile.close()
    assert paid == [], f"the pool paid {paid} cents for hand TCL-01-000042, never dealt"

"""One hostile table stops the floor service for every table (red team 5).

The pool claims a member table's ``jackpot_pending`` with the hand id of its data, any text of
1 to 200 characters (controller/floor/pool.py, ``_text``), and the pool channel's publisher
then builds each hit awaiting verification into a ``MeterMessage`` whose ``hand_id`` is at most
64 characters (controller/stream/pool_channel.py, ``HandId``; the same for more than 500 hits
awaiting verification). The ValidationError is not a psycopg.Error: it leaves the writer's loop
(controller/floor/service.py, ``run``) and the floor service stops: no table's events are
stored, every linked table loses the link (no progressive wager anywhere), and a restarted
service stops again at its first heartbeat, for the hit stays in ``floor_pool_hits``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from controller.core.table_events import DeviceStatus, JackpotPending
from controller.core.vocabulary import Device, DeviceCondition

from tests.support.hostile_table import HostileTable
from tests.support.hostile_table import linked_to, opened, stored
from tests.support.pool import query
from tests.support.postgres import RunningFloor
from tests.support.processes import wait_until

POOL = "LINK-1"


def test_a_hostile_tables_long_hand_id_does_not_stop_the_floor(
        tmp_path: Path, database: str, floor: Callable[..., RunningFloor]) -> None:
    hostile = HostileTable(tmp_path / "hostile", "TCL-01")
    honest = HostileTable(tmp_path / "honest", "TCL-02")     # (the same rig, honest events)
    try:
        thread = floor(hostile, honest, pools={POOL: ["TCL-01", "TCL-02"]},
                       pool_link=f"ipc://{tmp_path}/pool").thread
        hostile.emit([opened("TCL-01"), linked_to(POOL)])
        honest.emit([opened("TCL-02"), linked_to(POOL)])
        wait_until(lambda: stored(database, "TCL-02"), "the honest table followed")
        hostile.emit([JackpotPending("H" * 65, (1,), 100)], hand_id="TCL-01-000001")
        wait_until(lambda: query(database, "SELECT 1 FROM floor_pool_disputes "
                                           "WHERE problem LIKE 'hand_id:%%'"),
                   "the claim held as disputed")
        honest.emit([DeviceStatus(device=Device.SHOE, status=DeviceCondition.CONNECTED,
                                   detail="after the hit")])
        wait_until(lambda: not thread.is_alive() or len(stored(database, "TCL-02")) == 3,
                   "the honest table's next event stored, or the service stopped")
        assert thread.is_alive(), "the floor service stopped on one table's jackpot_pending"
        assert query(database, "SELECT 1 FROM floor_pool_hits") == []
    finally:
        hostile.close()
        honest.close()

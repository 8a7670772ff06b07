"""The table and the floor service as real processes (bench's rigs, which its benchmarks run
too): :class:`TableProcess` (``lowball-table run`` on the simulators), :class:`FloorProcess`
(``lowball-table floor``), dealers that play hands through them, the floor's config, and
:func:`wait_until` (a poll with bench's longer deadline: processes start slower than threads).
"""

from __future__ import annotations

from bench.floor_rig import (
    FloorProcess,
    FollowedTable,
    PoolDealer,
    RatedDealer,
    TableProcess,
    wait_until,
    write_floor_config,
)

__all__ = ["FloorProcess", "FollowedTable", "PoolDealer", "RatedDealer", "TableProcess",
           "wait_until", "write_floor_config"]

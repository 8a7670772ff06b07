"""The floor tests' throwaway PostgreSQL (one cluster for this directory) and floor service
for the red-team tests that run one; a linked table with a floor service keeping its pool, or
with the test playing the floor."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq

from bench.floor_rig import FloorProcess, TableProcess, wait_until, write_floor_config
from tests.floor.conftest import database, floor, postgres  # noqa: F401 - the fixtures
from tests.floor.test_pool_floor import POOL, link_up, linked_table


@pytest.fixture
def pooled_table(database: str, tmp_path: Path) -> Iterator[TableProcess]:  # noqa: F811
    """Table ``TCL-01`` linked to :data:`POOL`, which a floor service on ``database`` keeps;
    yielded once the table hears the pool. The floor is stopped and the table closed after."""
    endpoint = f"ipc://{tmp_path}/pool"
    table = linked_table("TCL-01", endpoint)
    floor = None
    try:
        config = write_floor_config(tmp_path / "floor.toml", database, [table], {},
                                    pools={POOL: [table.table_id]}, pool_link=endpoint)
        floor = FloorProcess(config, tmp_path / "floor.log")
        wait_until(lambda: link_up(table), "the table hears the pool")
        yield table
    finally:
        if floor is not None:
            floor.stop()
        table.close()


@pytest.fixture
def played_floor(tmp_path: Path) -> Iterator[tuple[zmq.Socket[bytes], TableProcess]]:
    """The test plays the floor: a PUB socket bound on the pool channel's ipc endpoint (no
    CURVE on ipc), and table ``TCL-01`` on the simulators linked to :data:`POOL` through it."""
    endpoint = f"ipc://{tmp_path}/pool"
    with zmq.Context() as context:
        floor: zmq.Socket[bytes] = context.socket(zmq.PUB)
        floor.setsockopt(zmq.LINGER, 0)
        floor.bind(endpoint)
        try:
            table = TableProcess("TCL-01", link=(POOL, endpoint))
            try:
                yield floor, table
            finally:
                table.close()
        finally:
            floor.close(0)

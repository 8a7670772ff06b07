"""The floor tests' throwaway PostgreSQL (one cluster per test session and xdist worker) and a
floor service on a fresh database."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import psycopg
import pytest

from controller.floor.config import load_floor_config
from controller.floor.local_cluster import ClusterUnavailable, LocalCluster
from controller.floor.service import FloorService

from tests.support.processes import FollowedTable, write_floor_config


_numbers = itertools.count(1)


@pytest.fixture(scope="session")
def postgres() -> Iterator[LocalCluster]:
    try:
        cluster = LocalCluster(fsync=False)
    except ClusterUnavailable as error:
        pytest.skip(str(error))
    with cluster:
        yield cluster


@pytest.fixture
def database(postgres: LocalCluster) -> str:
    """The DSN of a new, empty database."""
    name = f"floor_test_{next(_numbers)}"
    with psycopg.connect(postgres.dsn, autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {name}")
    return postgres.dsn_for(name)


class RunningFloor(NamedTuple):
    service: FloorService
    thread: threading.Thread     # alive while the service runs


@pytest.fixture
def floor(tmp_path: Path, database: str) -> Iterator[Callable[..., RunningFloor]]:
    """make(*tables, **options) -> the floor service following ``tables`` on ``database``, in
    a thread (``options``: :func:`bench.floor_rig.write_floor_config`'s, pools for one);
    each stopped after the test."""
    made: list[RunningFloor] = []

    def make(*tables: FollowedTable, **options: Any) -> RunningFloor:
        options.setdefault("retry_s", 0.2)
        config = write_floor_config(tmp_path / "floor.toml", database, list(tables), {},
                                    **options)
        service = FloorService(load_floor_config(config))
        running = RunningFloor(service, threading.Thread(target=service.run, daemon=True))
        running.thread.start()
        made.append(running)
        return running

    yield make
    for service, thread in made:
        service.request_stop()
        thread.join(20)

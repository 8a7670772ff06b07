"""One throwaway PostgreSQL cluster for the whole session (controller.floor.local_cluster),
and a fresh database in it for each test that asks. Without PostgreSQL's server binaries
these tests skip, saying how to install them (CI installs them: ``make deps`` as root)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import psycopg
import pytest

from controller.floor.local_cluster import ClusterUnavailable, LocalCluster

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

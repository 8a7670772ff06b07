"""The whole suite's hooks and the fixtures every folder may use (from :mod:`tests.support`)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from controller import build_info

#: The support modules that define fixtures: a test asks for one by name from any folder.
pytest_plugins = [
    "tests.support.table",
    "tests.support.rig",
    "tests.support.stream",
    "tests.support.console",
    "tests.support.postgres",
    "tests.support.pool",
    "tests.support.ledger",
    "tests.support.config_files",
    "tests.support.sign_in",
    "tests.support.drivers",
    "tests.support.tools",
]


def pytest_configure(config: pytest.Config) -> None:
    # A compiled module older than its source would be tested instead of the source.
    stale = build_info.stale_compiled_modules()
    if stale:
        raise pytest.UsageError(
            f"compiled game core older than its source: {', '.join(stale)}. "
            f"Run `make test` (it rebuilds), or `make compiled` / `make pure` first.")


def pytest_report_header(config: pytest.Config) -> str:
    return build_info.describe()


#: A test that asks for one of these fixtures (or a fixture that does) gets the mark.
MARKED_BY_FIXTURE = {
    "browser": "browser",            # Chromium, started once per worker
    "postgres": "postgres",          # the throwaway cluster, started once per worker
    "pooled_table": "daemon",
    "played_floor": "daemon",
}
#: A test module that names one of these runs a table: real daemon processes (bench's process
#: rigs, the command line's ``run`` or any program as a process), or a daemon in a thread on
#: the simulators (the rig, the table loop): all its tests get ``daemon``, and ``make check``
#: keeps the tests that run in the test's own thread alone.
DAEMON_PROCESSES = ("TableProcess", "FloorProcess", "DaemonProcess", "linked_table(",
                    "bench.power_loss", "bench import power_loss",
                    "Rig(", "rig_factory", "RigFactory", "TableDaemon(", "TableLoop(",
                    "table_loop", "PtyTransport(", "subprocess", "tests.support.daemon",
                    "tests.support.pins", "tests.support.stream import")


@functools.cache
def runs_daemon_processes(path: Path) -> bool:
    text = path.read_text()
    return any(name in text for name in DAEMON_PROCESSES)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tiers' marks that follow from what a test uses (docs/testing.md); ``slow`` is
    written on the test or its module."""
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        for fixture, mark in MARKED_BY_FIXTURE.items():
            if fixture in used:
                item.add_marker(mark)
        if runs_daemon_processes(item.path):
            item.add_marker("daemon")

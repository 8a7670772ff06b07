"""Shared fixtures: simulators on real ptys / sockets, and waiting on events with a deadline.

Nothing here sleeps to synchronise: tests wait for the event they expect, and the deadline is
only a bound on failure.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest


_OUR_THREADS = ("shoe-", "spots-", "meter-", "sim-")


@pytest.fixture(autouse=True)
def _no_threads_left_behind() -> Iterator[None]:
    """Every driver and simulator thread a test starts must be joined by its end."""
    before = set(threading.enumerate())
    yield
    left = [t.name for t in set(threading.enumerate()) - before
            if t.name.startswith(_OUR_THREADS) and t.is_alive()]
    assert not left, f"threads left running: {left}"

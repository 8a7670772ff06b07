"""Waits: poll a predicate until it holds, with one deadline that only bounds a failure.

Nothing in the suite sleeps to synchronise: a test waits for what it can see (a message, a
line a process prints, a state), and :data:`DEADLINE_S` only ends a wait that failed."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar


#: How long any wait may take: it only bounds a failure (a passing wait returns at once).
DEADLINE_S = 20.0


T = TypeVar("T")


def wait_for(predicate: Callable[[], T | None], what: str, timeout: float = DEADLINE_S) -> T:
    """The predicate's first true value (never None), polled until the deadline."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.005)  # polling interval; the deadline decides
    raise AssertionError(f"timed out waiting for {what}")

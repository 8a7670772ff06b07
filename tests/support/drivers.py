"""The drivers' tests: a driver's events waited for, and a transport (pty or TCP) to a simulator."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from drivers.config import ShoeConfig
from drivers.shoe_events import ShoeConnected
from drivers.shoe_serial import SerialShoe
from simulators.pty_transport import PtyTransport
from simulators.shoe import Lbs1ShoeModel
from simulators.tcp_transport import TcpTransport

from tests.support.waits import DEADLINE_S




class EventWaiter:
    """Pull events from a driver until one matches; keep every event seen."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver
        self.seen: list[Any] = []

    def next(self, match: Callable[[Any], bool] | type, timeout: float = DEADLINE_S) -> Any:
        predicate: Callable[[Any], bool] = \
            (lambda e: isinstance(e, match)) if isinstance(match, type) else match
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no matching event within {timeout} s; saw {self.seen}")
            event = self.driver.get_event(timeout=min(left, 0.5))
            if event is None:
                continue
            self.seen.append(event)
            if predicate(event):
                return event

    def collect(self, count: int, match: type | tuple[type, ...],
                timeout: float = DEADLINE_S) -> list[Any]:
        return [self.next(lambda e: isinstance(e, match), timeout) for _ in range(count)]


def poll_until(condition: Callable[[], Any], timeout: float = DEADLINE_S) -> Any:
    """Poll ``condition`` until truthy (for state only visible by looking, like a sign's text)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(0.005)  # polling interval, not synchronisation: the deadline decides


@pytest.fixture(params=["pty", "tcp"])
def transport_kind(request: pytest.FixtureRequest) -> str:
    kind: str = request.param
    return kind


def make_transport(kind: str, model: Any, name: str = "shoe") -> Any:
    return PtyTransport(model, name=name) if kind == "pty" else TcpTransport(model, name=name)


#: The ``shoe_rig`` fixture: make(...) -> (simulator transport, connected SerialShoe, waiter).
ShoeRig = Callable[..., tuple[Any, SerialShoe, EventWaiter]]


@pytest.fixture
def shoe_rig(transport_kind: str) -> Iterator[ShoeRig]:
    """Factory: (simulator transport, connected SerialShoe, waiter). Cleans everything up."""
    started: list[Any] = []

    def build(cards: str | None = "As 7d Kc 2h 3s 4c 5d 6h 8s 9c", *, heartbeat_every_s: float = 1.0,
              lost_after_s: float = 3.0, **config: Any) -> tuple[Any, SerialShoe, EventWaiter]:
        model = Lbs1ShoeModel(cards, heartbeat_every_s=heartbeat_every_s)
        sim = make_transport(transport_kind, model).start()
        started.append(sim)
        shoe = SerialShoe(ShoeConfig(port=sim.url, lost_after_s=lost_after_s,
                                     reconnect_initial_s=0.05, reconnect_max_s=0.2, **config))
        shoe.start()
        started.append(shoe)
        waiter = EventWaiter(shoe)
        waiter.next(ShoeConnected)
        return sim, shoe, waiter

    yield build
    for thing in reversed(started):
        thing.stop()

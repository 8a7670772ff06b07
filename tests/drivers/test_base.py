"""The shared driver machinery (:mod:`drivers.base`): stopping a driver, and a port whose
descriptor number ``select()`` cannot take."""

from __future__ import annotations

import contextlib
import os
import resource
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from drivers.base import SELECT_LIMIT
from drivers.config import ShoeConfig
from drivers.shoe_events import ShoeConnected, ShoeLost
from drivers.shoe_serial import SerialShoe
from simulators.shoe import Lbs1ShoeModel

from tests.support.drivers import EventWaiter, make_transport, poll_until
from tests.support.waits import DEADLINE_S

# -- stop() ---------------------------------------------------------------------------------


def test_two_stops_at_once_both_return_after_the_thread_and_a_third_is_a_no_op() -> None:
    with make_transport("pty", Lbs1ShoeModel("As")) as sim:
        shoe = SerialShoe(ShoeConfig(port=sim.url))
        shoe.start()
        EventWaiter(shoe).next(ShoeConnected)
        thread = shoe._thread
        assert thread is not None

        # The wake-up pipe must outlive the thread: note the thread each close() finds.
        closes: list[bool] = []
        close = shoe._wakeup.close

        def noted_close() -> None:
            closes.append(thread.is_alive())
            close()

        shoe._wakeup.close = noted_close  # type: ignore[method-assign]

        # Keep the thread in its last step (closing the port) until both stop() calls are
        # under way, so that neither can find it finished already.
        calling = threading.Barrier(2)
        called = [threading.Event(), threading.Event()]
        disconnect = shoe._disconnect

        def held_disconnect() -> None:
            assert all(event.wait(DEADLINE_S) for event in called)
            disconnect()

        shoe._disconnect = held_disconnect  # type: ignore[method-assign]

        outcomes: list[tuple[str, Any]] = []

        def call_stop(n: int) -> None:
            calling.wait(DEADLINE_S)
            called[n].set()
            try:
                shoe.stop()
            except BaseException as exc:
                outcomes.append(("raised", exc))
            else:
                outcomes.append(("returned; thread alive", thread.is_alive()))

        callers = [threading.Thread(target=call_stop, args=(n,), name=f"stopper-{n}")
                   for n in (0, 1)]
        for caller in callers:
            caller.start()
        for caller in callers:
            caller.join(DEADLINE_S)
        assert not any(caller.is_alive() for caller in callers), "a stop() never returned"
        assert outcomes == [("returned; thread alive", False)] * 2, outcomes
        assert not thread.is_alive()
        assert closes and not any(closes), closes  # never under the running thread
        with pytest.raises(ValueError):
            shoe._wakeup.fileno()  # closed

        shoe.stop()  # again: nothing left to stop
        assert shoe._thread is None
        assert not any(closes), closes


def test_stop_from_a_listener_on_the_drivers_own_thread_ends_the_thread() -> None:
    """A listener runs on the driver's thread, which cannot join itself: its stop() asks the
    thread to end, and the thread does; a stop() from elsewhere then finds nothing to wait for."""
    with make_transport("pty", Lbs1ShoeModel("As")) as sim:
        shoe: SerialShoe | None = None
        errors: list[BaseException] = []

        def stop_on_connect(event: object) -> None:
            if isinstance(event, ShoeConnected) and shoe is not None:
                try:
                    shoe.stop()
                except BaseException as exc:  # noqa: BLE001 - recorded for the assertion
                    errors.append(exc)

        shoe = SerialShoe(ShoeConfig(port=sim.url), listener=stop_on_connect)
        shoe.start()
        poll_until(lambda: not shoe.running)
        assert errors == []
        shoe.stop()
        assert shoe._thread is None


# -- descriptors numbered 1024 and up ---------------------------------------------------------

@contextlib.contextmanager
def low_descriptors_taken() -> Iterator[None]:
    """Every descriptor number below :data:`SELECT_LIMIT` in use meanwhile, so the next ones
    opened are numbered above it, as in a daemon holding many sockets."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = SELECT_LIMIT + 64
    if soft != resource.RLIM_INFINITY and soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            pytest.skip(f"RLIMIT_NOFILE allows {hard} descriptors at most: no descriptor "
                        f"numbered {SELECT_LIMIT} or above can be opened")
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
        except (ValueError, OSError) as exc:
            pytest.skip(f"cannot raise RLIMIT_NOFILE to {needed}: {exc}")
    fillers = [os.open(os.devnull, os.O_RDONLY)]
    try:
        while (fd := os.dup(fillers[0])) < SELECT_LIMIT:
            fillers.append(fd)
        os.close(fd)
        yield
    finally:
        for fd in fillers:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_port_opened_at_descriptor_1024_or_above_is_refused_by_name_not_used() -> None:
    """The driver waits with poll(), but pyserial reads and writes with select(), which
    refuses such a descriptor: the port is closed at once and the shoe reported lost with
    that reason (before any card), and the driver thread lives on, trying again."""
    # The simulator's own descriptors are opened first: it waits in select() itself.
    with make_transport("pty", Lbs1ShoeModel("As")) as sim:
        with low_descriptors_taken(), SerialShoe(ShoeConfig(port=sim.url)) as shoe:
            lost = EventWaiter(shoe).next(ShoeLost)
            assert "descriptor" in lost.reason and "select()" in lost.reason, lost.reason
            assert shoe.running and not shoe.connected

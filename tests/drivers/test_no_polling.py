"""Driver threads sleep until input, a real deadline or stop(): no fixed polling period.

Each test records the waits a driver thread makes (:meth:`DeviceDriver._wait_port`): the
timeout it asked for and whether the port had input when it woke. Nothing here sleeps to
synchronise; the only time bounds are generous failure bounds (a driver that cannot be woken
would take its 5 s join timeout, or its 30-60 s deadline).
"""

from __future__ import annotations

import os
import select
import threading
import time
import tty
from collections.abc import Iterator
from typing import Any

import pytest
import usb.core

from drivers.base import FALLBACK_POLL_S, DeviceDriver, Wakeup, open_serial_port
from drivers.config import MeterConfig, ShoeConfig, SpotsConfig
from drivers.lbs1 import FrameParser, encode_frame
from drivers.meter import AlphaMeter
from drivers.shoe_events import FrameRejected, Heartbeat, ShoeConnected, ShoeLost
from drivers.shoe_serial import SerialShoe
from drivers.shoe_usb import UsbShoe
from drivers.spots import WIN, SpotsConnected, SpotsLost
from drivers.spots_ascii import AsciiSpotController
from simulators.meter import AlphaSignModel
from simulators.spots import SpotControllerModel

from tests.support.drivers import EventWaiter, make_transport, poll_until
from tests.support.waits import DEADLINE_S

#: A stop() that takes longer than this has not been woken (pyserial's socket:// close alone
#: sleeps 0.3 s).
PROMPT_STOP_S = 2.0


class WaitLog:
    """Wraps a driver's ``_wait_port``: the timeout each wait asked for (``asked``, from its
    start) and, once it ended, (timeout, port had input) (``waits``)."""

    def __init__(self, driver: DeviceDriver[Any]) -> None:
        self.asked: list[float | None] = []
        self.waits: list[tuple[float | None, bool]] = []
        self.waiting = threading.Event()  # set while the thread is inside a wait
        self._lock = threading.Lock()
        inner = driver._wait_port

        def wait_port(port: Any, timeout: float | None) -> bool:
            with self._lock:
                self.asked.append(timeout)
            self.waiting.set()
            try:
                readable = inner(port, timeout)
            finally:
                self.waiting.clear()
            with self._lock:
                self.waits.append((timeout, readable))
            return readable

        driver._wait_port = wait_port  # type: ignore[method-assign]

    def snapshot(self) -> list[tuple[float | None, bool]]:
        with self._lock:
            return list(self.waits)

    def idle_wakeups(self) -> int:
        """Waits that ended without input (a deadline, a wake-up from another thread)."""
        return sum(not readable for _, readable in self.snapshot())


def stop_quickly(driver: DeviceDriver[Any]) -> float:
    started = time.monotonic()
    driver.stop()
    took = time.monotonic() - started
    assert took < PROMPT_STOP_S, f"stop() took {took:.2f} s"
    return took


# -- the wake-up pipe ---------------------------------------------------------------------

def test_wakeup_is_level_triggered_and_harmless_when_closed() -> None:
    wakeup = Wakeup()
    wakeup.set()  # not open: nothing to wake, no error
    wakeup.open()
    try:
        wakeup.set()
        wakeup.set()  # a second wake-up before the first is seen collapses into it
        assert select.select([wakeup], [], [], 0)[0] == [wakeup]  # sent before the wait
        wakeup.clear()
        assert select.select([wakeup], [], [], 0)[0] == []
    finally:
        wakeup.close()
    wakeup.set()
    wakeup.clear()
    wakeup.close()


# -- the serial shoe, on a pty this test writes to itself -------------------------------

@pytest.fixture
def raw_pty() -> Iterator[tuple[int, str]]:
    master, slave = os.openpty()
    tty.setraw(slave)
    yield master, os.ttyname(slave)
    for fd in (master, slave):
        os.close(fd)


def read_frames(master: int, parser: FrameParser, count: int) -> list[Any]:
    """The next ``count`` frames the driver writes (ACKs), waiting at most DEADLINE_S."""
    frames: list[Any] = []
    deadline = time.monotonic() + DEADLINE_S
    while len(frames) < count:
        left = deadline - time.monotonic()
        assert left > 0, f"the driver wrote {frames}, expected {count} frames"
        if select.select([master], [], [], left)[0]:
            frames += parser.feed(os.read(master, 1024))
    return frames


def connected_shoe(path: str, **config: Any) -> tuple[SerialShoe, WaitLog, EventWaiter]:
    """A serial shoe on the pty at ``path`` (``config``: its :class:`ShoeConfig`), its waits
    logged, started and heard: its ``ShoeConnected`` taken from the waiter returned."""
    shoe = SerialShoe(ShoeConfig(port=path, **config))
    log = WaitLog(shoe)
    shoe.start()
    try:
        waiter = EventWaiter(shoe)
        waiter.next(ShoeConnected)
    except BaseException:
        shoe.stop()
        raise
    return shoe, log, waiter


def test_live_shoe_wakes_only_for_its_frames_and_silence_deadline(raw_pty: tuple[int, str]) -> None:
    master, path = raw_pty
    shoe, log, waiter = connected_shoe(path, lost_after_s=30.0)
    try:
        host = FrameParser()
        for seq in range(5):
            os.write(master, encode_frame(seq, "H", str(seq)))
            assert waiter.next(Heartbeat).uptime_s == seq
            [ack] = read_frames(master, host, 1)
            assert (ack.type, ack.payload) == ("A", f"{seq:02X}")
        # Every wait asked for the time left to the silence deadline, not a polling period,
        # and every one so far ended with a frame.
        waits = log.snapshot()
        assert waits and all(timeout is not None and 25.0 < timeout <= 30.0
                             for timeout, _ in waits), waits
        assert log.idle_wakeups() == 0, waits
        poll_until(log.waiting.is_set)
        stop_quickly(shoe)  # while it waits for a deadline 30 s away
    finally:
        shoe.stop()
    assert log.idle_wakeups() == 1  # the stop


def test_silent_shoe_wakes_once_to_be_lost_then_sleeps(raw_pty: tuple[int, str]) -> None:
    master, path = raw_pty
    shoe, log, waiter = connected_shoe(path, lost_after_s=0.3)
    try:
        assert "no frame" in waiter.next(ShoeLost).reason
        poll_until(log.waiting.is_set)
        silent_since = len(log.snapshot())
        # Lost: nothing is due until the shoe speaks, so the wait has no deadline.
        os.write(master, encode_frame(0, "H", "7"))
        waiter.next(lambda e: isinstance(e, ShoeConnected))
        waiter.next(Heartbeat)
        waits = log.snapshot()
        assert log.asked[silent_since] is None, log.asked
        assert waits[silent_since] == (None, True), waits
        # Before the frame, the silence deadline was the only wake-up (or two, should the
        # timer fire a hair early).
        assert 1 <= sum(1 for _, readable in waits[:silent_since] if not readable) <= 2, waits
        assert "no frame" in waiter.next(ShoeLost).reason
    finally:
        stop_quickly(shoe)


def test_trailing_noise_is_reported_once_the_line_is_quiet(raw_pty: tuple[int, str]) -> None:
    master, path = raw_pty
    shoe, log, waiter = connected_shoe(path, lost_after_s=30.0, read_timeout_ms=50)
    try:
        os.write(master, b"\xff\xfe line noise, no STX after it")
        rejected = waiter.next(FrameRejected)
        assert "noise" in rejected.reason and rejected.raw.startswith(b"\xff\xfe")
        # The short wait happened only while noise was pending; then back to the deadline.
        poll_until(lambda: len(log.asked) >= 3 and log.waiting.is_set())
        assert log.asked[-1] is not None and log.asked[-1] > 25.0, log.asked
        waits = log.snapshot()
        assert sum(1 for t, readable in waits
                   if t is not None and t <= 0.05 and not readable) == 1, waits
    finally:
        stop_quickly(shoe)


# -- the spot controller -----------------------------------------------------------------

@pytest.fixture
def spots(transport_kind: str) -> Iterator[tuple[Any, AsciiSpotController, WaitLog]]:
    sim = make_transport(transport_kind, SpotControllerModel(), name="spots").start()
    driver = AsciiSpotController(SpotsConfig(port=sim.url, reply_timeout_s=0.5,
                                             reconnect_initial_s=0.05, reconnect_max_s=0.2))
    log = WaitLog(driver)
    driver.start()
    yield sim, driver, log
    driver.stop()
    sim.stop()


def test_spots_reader_has_no_deadline_and_stops_at_once(
        spots: tuple[Any, AsciiSpotController, WaitLog]) -> None:
    sim, driver, log = spots
    waiter = EventWaiter(driver)
    waiter.next(SpotsConnected)
    driver.ping()
    driver.set_lamp(2, WIN)
    assert sim.device.lamps[2] == WIN
    poll_until(log.waiting.is_set)
    waits = log.snapshot()
    assert waits and all(timeout is None for timeout, _ in waits), waits
    assert log.idle_wakeups() == 0, waits  # woken only by the two answers
    stop_quickly(driver)
    assert log.idle_wakeups() == 1


def test_idle_spots_notice_a_pulled_cable_without_a_command(
        spots: tuple[Any, AsciiSpotController, WaitLog]) -> None:
    sim, driver, log = spots
    waiter = EventWaiter(driver)
    waiter.next(SpotsConnected)
    poll_until(log.waiting.is_set)
    sim.disconnect()
    waiter.next(SpotsLost)
    sim.reconnect()
    waiter.next(SpotsConnected)


# -- the meter ----------------------------------------------------------------------------

@pytest.fixture
def meter(transport_kind: str) -> Iterator[tuple[Any, AlphaMeter, WaitLog]]:
    sim = make_transport(transport_kind, AlphaSignModel(), name="meter").start()
    driver = AlphaMeter(MeterConfig(port=sim.url, reconnect_initial_s=0.05,
                                    reconnect_max_s=0.2))
    log = WaitLog(driver)
    driver.start()
    assert driver.wait_connected(DEADLINE_S)
    yield sim, driver, log
    driver.stop()
    sim.stop()


def test_meter_sleeps_until_a_text_is_offered(meter: tuple[Any, AlphaMeter, WaitLog]) -> None:
    sim, driver, log = meter
    poll_until(log.waiting.is_set)
    assert log.snapshot() == []  # idle: one wait, no deadline, still going on
    driver.show_amount(12_00)
    poll_until(lambda: sim.device.text == "$12.00")
    for cents in range(13_00, 13_50):  # a burst: the rate limit is the only deadline
        driver.show_amount(cents)
    poll_until(lambda: sim.device.text == "$13.49")
    poll_until(lambda: log.waiting.is_set() and not driver._coalescer.has_pending)
    interval = 1 / driver.config.max_writes_per_s
    waits = log.snapshot()
    assert waits[0] == (None, False)  # woken by the offer, not by a timer
    assert all(t is None or t <= interval for t, _ in waits), waits
    # one wake-up per offer seen and per rate-limit deadline; never a polling period
    assert len(waits) <= 2 * driver.writes + 2, (driver.writes, waits)
    stop_quickly(driver)


def test_meter_without_a_descriptor_still_works() -> None:
    """``loop://`` has no descriptor to wait on: the driver falls back to looking often."""
    driver = AlphaMeter(MeterConfig(port="loop://", reconnect_initial_s=0.05))
    driver.start()
    try:
        assert driver.wait_connected(DEADLINE_S)
        driver.show_amount(7_00)
        poll_until(lambda: driver.text == "$7.00")
    finally:
        stop_quickly(driver)


def test_a_port_without_descriptor_reads_all_that_is_queued() -> None:
    """``loop://`` (like ``rfc2217://``) cannot be waited on with select(): its read waits
    briefly instead, and one read call hands out one queued chunk, so all are collected."""
    driver = AlphaMeter(MeterConfig(port="loop://"))
    port = open_serial_port("loop://", baudrate=9600)
    try:
        assert port.timeout == FALLBACK_POLL_S
        for chunk in (b"ab", b"cd", b"ef"):
            port.write(chunk)
        assert driver._read_available(port) == b"abcdef"
    finally:
        port.close()


# -- the USB shoe: each read's timeout ----------------------------------------------------

class _TimingOutDevice:
    def __init__(self) -> None:
        self.timeouts: list[int] = []

    def read(self, endpoint: int, size: int, timeout: int) -> bytes:
        self.timeouts.append(timeout)
        raise usb.core.USBTimeoutError("Operation timed out", -7, 110)


@pytest.mark.parametrize("wait_s, expected_ms", [
    (None, 250),      # lost already: only the stop bound applies
    (10.0, 250),      # deadline far away: the stop bound
    (0.1, 100),       # deadline sooner: wake for it
    (0.0001, 1),      # due now: 1 ms, never 0 (to libusb, 0 means "for ever")
    (0.0, 1),
])
def test_usb_read_waits_for_the_deadline_within_the_stop_bound(wait_s: float, expected_ms: int
                                                               ) -> None:
    shoe = UsbShoe(ShoeConfig(driver="usb", read_timeout_ms=250))
    shoe._device = device = _TimingOutDevice()
    assert shoe._receive(wait_s) == []
    assert device.timeouts == [expected_ms]

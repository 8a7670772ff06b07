"""The daemon's side of the devices: start the configured drivers and turn what they report
into table inputs, without ever blocking the table's main loop.

Drivers run their own threads. Every report goes on one queue and wakes the main loop through
a socket pair that the loop's ZeroMQ poller watches, so a card reaches the table as soon as it
is read, with no polling interval. On the way, a device's garbled input is counted
(:class:`RejectionGate`) and a wager sensor's changes are passed on at most once a window per
spot (:class:`SensorGate`), so no device can fill the queue faster than the journal empties
it. Lamp commands go the other way through a worker thread, because the spot controller
answers each command (up to three 250 ms tries) and the table must not wait for a lamp.
"""

from __future__ import annotations

import queue
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import structlog

from controller.core.vocabulary import Device, DeviceCondition, ShoeFaultCode, SpotLamp
from controller.settings.table_config import Devices
from drivers import open_meter, open_shoe, open_spots
from drivers.meter import MeterConnected, MeterLost
from drivers.shoe_events import (
    CardRead,
    FrameRejected,
    SequenceConflict,
    ShoeConnected,
    ShoeFault,
    ShoeLost,
)
from drivers.spots import (
    LAMPS,
    LineRejected,
    SpotControllerError,
    SpotsConnected,
    SpotsLost,
    WagerSensor,
)

log = structlog.get_logger("lowball.devices")

#: Wake-up bytes one :meth:`DeviceHub.drain_wake` reads at most (one byte per report).
WAKE_DRAIN_BYTES = 65536
#: Device statuses that report garbled input (a frame, a line): one device talking nonsense
#: at full speed would otherwise journal thousands of records a second and hold every card
#: behind them.
REJECTIONS = frozenset({DeviceCondition.FRAME_REJECTED, DeviceCondition.LINE_REJECTED})
#: A device's garbled input is reported in full at most once in this many seconds.
REJECTION_WINDOW_S = 1.0
#: A wager sensor's changes reach the table at most once in this many seconds per spot: the
#: first at once, the last one of the window when it ends. A bouncing contact sends valid
#: reports as fast as the line carries them, each a synced journal transaction otherwise.
SENSOR_WINDOW_S = 0.2
#: A chattering sensor is logged at most once in this many seconds per spot.
SENSOR_LOG_S = 10.0


class Report(NamedTuple):
    """One thing a device said, as a table input: ``kind`` is ``card``, ``shoe_fault``
    (:class:`ShoeFaultCode`, detail), ``device`` (:class:`Device`, :class:`DeviceCondition`,
    detail) or ``sensor``."""

    kind: str
    args: tuple[Any, ...]


def shoe_report(event: Any) -> Report | None:
    if isinstance(event, CardRead):
        return Report("card", (event.card, event.seq, event.tag or "", event.count))
    if isinstance(event, ShoeFault):
        return Report("shoe_fault", (ShoeFaultCode(event.code), event.detail))
    if isinstance(event, SequenceConflict):
        if event.about_cards:
            return Report("shoe_fault", (ShoeFaultCode.CONFLICT, event.detail))
        return Report("device", (Device.SHOE, DeviceCondition.FRAME_REJECTED, event.detail))
    if isinstance(event, ShoeLost):
        return Report("device", (Device.SHOE, DeviceCondition.LOST, event.reason))
    if isinstance(event, ShoeConnected):
        return Report("device", (Device.SHOE, DeviceCondition.CONNECTED, event.port))
    if isinstance(event, FrameRejected):
        return Report("device", (Device.SHOE, DeviceCondition.FRAME_REJECTED, event.reason))
    return None  # heartbeats and status answers only keep the link alive


def spots_report(event: Any) -> Report | None:
    if isinstance(event, WagerSensor):
        return Report("sensor", (event.spot, event.covered))
    if isinstance(event, SpotsLost):
        return Report("device", (Device.SPOTS, DeviceCondition.LOST, event.reason))
    if isinstance(event, SpotsConnected):
        return Report("device", (Device.SPOTS, DeviceCondition.CONNECTED, event.port))
    if isinstance(event, LineRejected):
        return Report("device", (Device.SPOTS, DeviceCondition.LINE_REJECTED, event.reason))
    return None


def meter_report(event: Any) -> Report | None:
    if isinstance(event, MeterLost):
        return Report("device", (Device.METER, DeviceCondition.LOST, event.reason))
    if isinstance(event, MeterConnected):
        return Report("device", (Device.METER, DeviceCondition.CONNECTED, event.port))
    return None


class RejectionGate:
    """One device's reports on their way to the table: the first garbled input in a window
    of :data:`REJECTION_WINDOW_S` goes on as it is, the rest are counted, and the count goes
    on as one report (``N more rejected ...``, with the last reason) before the device's next
    report of any kind, or the next rejection after the window. Nothing is dropped unsaid;
    a card never waits behind more than two rejections."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._window_end = float("-inf")
        self._held: tuple[str, str] | None = None  # (device, status) of the counted ones
        self._count = 0
        self._last = ""
        self._lock = threading.Lock()  # a driver may report from more than one thread

    def admit(self, report: Report | None) -> list[Report]:
        """The reports to pass on now for ``report`` (None: the device said something that is
        no report, which still ends a count)."""
        with self._lock:
            return self._admit(report)

    def _admit(self, report: Report | None) -> list[Report]:
        now = self._clock()
        if report is not None and report.kind == "device" and report.args[1] in REJECTIONS:
            if now < self._window_end:
                self._held, self._count = (report.args[0], report.args[1]), self._count + 1
                self._last = str(report.args[2]) if len(report.args) > 2 else ""
                return []
            self._window_end = now + REJECTION_WINDOW_S
            return [*self._flush(), report]
        return [*self._flush(), *([report] if report is not None else [])]

    def _flush(self) -> list[Report]:
        if self._held is None:
            return []
        (device, status), count = self._held, self._count
        self._held, self._count = None, 0
        return [Report("device", (device, status, f"{count} more rejected within "
                                                  f"{REJECTION_WINDOW_S:g} s; the last: "
                                                  f"{self._last}"))]


class _Spot:
    __slots__ = ("window_end", "passed", "held", "coalesced", "logged_at")

    def __init__(self) -> None:
        self.window_end = float("-inf")
        self.passed: bool | None = None  # the last state passed on to the table
        self.held: bool | None = None  # the latest state not passed on yet
        self.coalesced = 0  # changes not passed on since the last log line
        self.logged_at = float("-inf")


class SensorGate:
    """The wager sensors' reports on their way to the table, spot by spot: the first change
    in a window of :data:`SENSOR_WINDOW_S` goes on at once; later ones in the window are held,
    the newest replacing the one before, and the newest goes on when the window ends
    (:meth:`release`), unless it is what the table was last told. So a spot costs the table
    two reports a window at most however fast it bounces, and the table always ends up with
    the sensor's last state, at most one window late. Only the intermediate bounces of a
    window are not journaled (they move no money: between hands the wager follows the last
    state, in a hand a sensor only lights a lamp); how many there were is logged."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._spots: dict[int, _Spot] = {}
        self._lock = threading.Lock()  # the driver's thread admits, the loop's releases
        #: whether a spot holds a report (the loop asks every turn: mostly none does)
        self._holding = False

    def admit(self, spot: int, covered: bool) -> Report | None:
        """The report to pass on now for this change (None: held for the window's end)."""
        with self._lock:
            now = self._clock()
            state = self._spots.setdefault(spot, _Spot())
            if now < state.window_end:
                if state.held is not None:
                    state.coalesced += 1  # the held one is replaced: never reaches the table
                state.held = covered
                self._holding = True
                return None
            if state.held is not None:  # the window ended before the loop released it
                state.coalesced += 1
            state.held = None
            state.window_end = now + SENSOR_WINDOW_S
            state.passed = covered
            return Report("sensor", (spot, covered))

    def release(self) -> list[Report]:
        """The held reports whose window has ended (from the main loop's thread)."""
        with self._lock:
            if not self._holding:
                return []
            now, released = self._clock(), []
            for spot, state in self._spots.items():
                if state.held is None or now < state.window_end:
                    continue
                if state.held != state.passed:
                    released.append(Report("sensor", (spot, state.held)))
                    state.passed = state.held
                else:  # bounced back to what the table knows: nothing changed for it
                    state.coalesced += 1
                state.held = None
                state.window_end = now + SENSOR_WINDOW_S  # a bouncing contact goes on
                self._log(spot, state, now)
            self._holding = any(state.held is not None for state in self._spots.values())
            return released

    def flush(self) -> list[Report]:
        """Every held report, now: another report of the device comes after them."""
        with self._lock:
            flushed = []
            for spot, state in self._spots.items():
                if state.held is not None and state.held != state.passed:
                    flushed.append(Report("sensor", (spot, state.held)))
                    state.passed = state.held
                state.held = None
            self._holding = False
            return flushed

    def next_due(self) -> float | None:
        """Seconds until a held report is due; None when none is held."""
        with self._lock:
            if not self._holding:
                return None
            ends = [state.window_end for state in self._spots.values() if state.held is not None]
            return max(0.0, min(ends) - self._clock()) if ends else None

    @staticmethod
    def _log(spot: int, state: _Spot, now: float) -> None:
        if state.coalesced and now >= state.logged_at + SENSOR_LOG_S:
            log.warning("wager sensor chattering: changes within one window not passed on "
                        "to the table (its last state was)", spot=spot,
                        changes=state.coalesced, window_s=SENSOR_WINDOW_S)
            state.coalesced, state.logged_at = 0, now


class LampWorker:
    """Sends lamp commands from its own thread; the newest lamp per spot wins."""

    def __init__(self, spots: Any):
        self._spots = spots
        self._pending: dict[int, SpotLamp] = {}
        self._ready = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="lamps", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def set(self, spot: int, lamp: SpotLamp) -> None:
        with self._ready:
            if spot == 0:
                self._pending.clear()
            self._pending[spot] = lamp
            self._ready.notify()

    def stop(self) -> None:
        with self._ready:
            self._stopping = True
            self._ready.notify()
        if self._thread.ident is not None:  # started
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while True:
            with self._ready:
                while not self._pending and not self._stopping:
                    self._ready.wait()
                if self._stopping:
                    return
                spot = next(iter(self._pending))
                lamp = self._pending.pop(spot)
            try:
                self._spots.set_lamp(spot, LAMPS[lamp])
            except SpotControllerError as error:
                log.warning("lamp command failed", spot=spot, lamp=lamp, error=str(error))
            except Exception:  # a bug must not leave every later lamp unlit: log, go on
                log.exception("lamp command failed unexpectedly", spot=spot, lamp=lamp)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()


class DeviceHub:
    """The configured devices. :attr:`reports` holds their reports for the main loop."""

    def __init__(self, devices: Devices, *, usb_backend: Any = None):
        #: reports in the order they came; every source is bounded before it (the shoe has
        #: one frame in flight until the journal commits it, garbled input is counted by a
        #: RejectionGate, wager sensors pass a SensorGate), so its length is too
        self.reports: queue.SimpleQueue[Report] = queue.SimpleQueue()
        self.sensors = SensorGate()
        self._wake_out, self.wake = socket.socketpair()
        self.wake.setblocking(False)
        self._wake_out.setblocking(False)
        self.shoe = self.spots = self.meter = None
        self._lamps: LampWorker | None = None
        self._started = False
        if devices.shoe is not None:
            extra = {"backend": usb_backend} if devices.shoe.driver == "usb" else {}
            # A card is acknowledged to the shoe only once the table has journaled it.
            self.shoe = open_shoe(devices.shoe, listener=self._listener(shoe_report),
                                  ack_cards_on_commit=True, **extra)
        if devices.spots is not None:
            self.spots = open_spots(devices.spots, listener=self._listener(spots_report))
            self._lamps = LampWorker(self.spots)
        if devices.meter is not None:
            self.meter = open_meter(devices.meter, listener=self._listener(meter_report))

    def _listener(self, translate: Callable[[Any], Report | None]) -> Callable[[Any], None]:
        gate = RejectionGate()

        def listener(event: Any) -> None:
            reports = []
            for admitted in gate.admit(translate(event)):
                report: Report | None = admitted
                if admitted.kind == "sensor":
                    report = self.sensors.admit(*admitted.args)
                elif translate is spots_report:
                    reports += self.sensors.flush()  # what the sensors said came first
                if report is not None:
                    reports.append(report)
            for report in reports:
                self.reports.put(report)
            if reports:
                self.wake_loop()
        return listener

    def release_held(self) -> None:
        """Queue the held sensor reports whose window has ended (from the main loop)."""
        for report in self.sensors.release():
            self.reports.put(report)

    def next_due(self) -> float | None:
        """Seconds until :meth:`release_held` has something to queue; None: nothing held."""
        return self.sensors.next_due()

    def wake_loop(self) -> None:
        """Wake the main loop out of its poll (from any thread or a signal handler)."""
        try:
            self._wake_out.send(b"!")
        except OSError:
            pass  # a wake-up is pending already, or the hub is closed and nothing waits

    def drain_wake(self) -> None:
        # One read, not a loop to EAGAIN: each report sends one byte, so this empties the pair
        # at once, and a raised BlockingIOError costs more than the read. Bytes left behind
        # (more than WAKE_DRAIN_BYTES pending) only wake the loop once more.
        try:
            self.wake.recv(WAKE_DRAIN_BYTES)
        except BlockingIOError:
            pass

    def start(self) -> None:
        for driver in (self.shoe, self.spots, self.meter):
            if driver is not None:
                driver.start()
        if self._lamps is not None:
            self._lamps.start()
        self._started = True

    def stopped_threads(self) -> list[str]:
        """The device threads that were started and have ended on their own. Drivers survive
        a lost device and their own errors, so an ended thread is a bug; the daemon reports
        itself unhealthy and systemd's watchdog restarts it, devices and all."""
        if not self._started:
            return []
        stopped = [f"{driver.kind} driver" for driver in (self.shoe, self.spots, self.meter)
                   if driver is not None and not driver.running]
        if self._lamps is not None and not self._lamps.alive:
            stopped.append("lamp worker")
        return stopped

    def stop(self) -> None:
        if self._lamps is not None:
            self._lamps.stop()
        for driver in (self.shoe, self.spots, self.meter):
            if driver is not None:
                driver.stop()
        self.wake.close()
        self._wake_out.close()

    # -- outputs --------------------------------------------------------------------------

    def card_committed(self, shoe_seq: int) -> None:
        """The card with this shoe sequence number is in the journal: acknowledge it."""
        if self.shoe is not None:
            self.shoe.card_committed(shoe_seq)

    def set_lamp(self, spot: int, lamp: SpotLamp) -> None:
        if self._lamps is not None:
            self._lamps.set(spot, lamp)

    def show_meter(self, cents: int) -> None:
        if self.meter is not None:
            self.meter.show_amount(cents)

    def show_jackpot(self, table_id: str, cents: int) -> None:
        if self.meter is not None:
            self.meter.show_jackpot(table_id, cents)

    def reset_jackpot(self) -> None:
        if self.meter is not None:
            self.meter.reset_jackpot()

    def status(self) -> dict[str, str]:
        """Each configured device: ``connected`` or ``lost``."""
        return {device: (DeviceCondition.CONNECTED if driver.connected else DeviceCondition.LOST)
                for device, driver in ((Device.SHOE, self.shoe), (Device.SPOTS, self.spots),
                                       (Device.METER, self.meter)) if driver is not None}

"""What every device driver shares: a reader thread, reconnect with backoff, log context.

A driver subclass supplies only ``_connect``, ``_disconnect`` and ``_serve_once`` (one bounded
slice of work: read what arrived, or write what is due). This class owns the loop around them:
open the device, serve it until it fails, report the loss once, back off, try again; and it
guarantees that nothing a device sends can raise out of the thread. The per-kind bases
(:mod:`drivers.shoe`, :mod:`drivers.spots`, :mod:`drivers.meter`) add the acknowledgement,
retry and liveness rules of their kind on top.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Self

import serial
import structlog


class DeviceUnavailable(Exception):
    """The device cannot be used right now (not found, unplugged, port failed); retry later."""


class Backoff:
    """Reconnect delays: ``initial``, doubled each failure, capped at ``maximum``.

    Pure, so tests can check the schedule without waiting for it.
    """

    def __init__(self, initial: float, maximum: float, factor: float = 2.0) -> None:
        if initial <= 0 or maximum < initial or factor < 1:
            raise ValueError(f"bad backoff: initial={initial} maximum={maximum} factor={factor}")
        self.initial, self.maximum, self.factor = initial, maximum, factor
        self._next = initial

    def next_delay(self) -> float:
        delay = self._next
        self._next = min(self._next * self.factor, self.maximum)
        return delay

    def reset(self) -> None:
        self._next = self.initial


def open_serial_port(url: str, *, baudrate: int, bytesize: int = serial.EIGHTBITS,
                     parity: str = serial.PARITY_NONE, stopbits: float = serial.STOPBITS_ONE,
                     timeout: float = 0.05, write_timeout: float = 1.0) -> serial.SerialBase:
    """Open any port pyserial can name: a device path, ``socket://``, ``rfc2217://``, a pty.

    The only place a driver opens a serial port, so the port string in config alone decides
    hardware, network serial server or simulator.
    """
    try:
        return serial.serial_for_url(url, baudrate=baudrate, bytesize=bytesize, parity=parity,
                                     stopbits=stopbits, timeout=timeout,
                                     write_timeout=write_timeout)
    except (serial.SerialException, OSError, ValueError) as exc:
        raise DeviceUnavailable(f"cannot open {url}: {exc}") from exc


class DeviceDriver(ABC):
    """A device served by one background thread that reconnects on its own.

    Use as a context manager, or call :meth:`start` and :meth:`stop` (which joins the thread).
    """

    #: "shoe", "spots" or "meter": names the logger and the thread.
    kind: str = "device"
    #: The config name of the protocol this class speaks ("lbs1", "alpha", ...).
    protocol: str = ""

    def __init__(self, *, name: str, port_label: str, reconnect_initial_s: float,
                 reconnect_max_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self.port_label = port_label
        self.clock = clock
        self.log = structlog.get_logger(f"drivers.{self.kind}").bind(
            device=name, port=port_label, protocol=self.protocol)
        self._backoff = Backoff(reconnect_initial_s, reconnect_max_s)
        self._stopping = threading.Event()
        self._connected = threading.Event()
        self._thread: threading.Thread | None = None
        self._lost_reported = False

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError(f"{self.kind} driver {self.name!r} already started")
        self._stopping.clear()
        self._thread = threading.Thread(target=self._run, name=f"{self.kind}-{self.name}",
                                        daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread and close the device; safe to call twice."""
        self._stopping.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive():
                self.log.error("driver thread did not stop", timeout_s=timeout)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def wait_connected(self, timeout: float) -> bool:
        return self._connected.wait(timeout)

    # -- the loop -----------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                self._connect()
            except DeviceUnavailable as exc:
                self._report_lost(str(exc))
                self._stopping.wait(self._backoff.next_delay())
                continue
            except Exception as exc:  # a driver bug must not kill the thread silently
                self.log.exception("connect failed unexpectedly")
                self._report_lost(f"driver error while connecting: {exc!r}")
                self._stopping.wait(self._backoff.next_delay())
                continue
            self._backoff.reset()
            self._lost_reported = False
            self._connected.set()
            self.log.info("connected")
            reason = None
            try:
                self._on_connected()
                while not self._stopping.is_set():
                    self._serve_once()
            except DeviceUnavailable as exc:
                reason = str(exc)
            except Exception as exc:
                self.log.exception("driver error")
                reason = f"driver error: {exc!r}"
            finally:
                self._connected.clear()
                self._safe_disconnect()
            if reason is not None:
                self._report_lost(reason)
                self._stopping.wait(self._backoff.next_delay())
        self.log.info("stopped")

    def _report_lost(self, reason: str) -> None:
        if not self._lost_reported:
            self._lost_reported = True
            self.log.warning("device lost", reason=reason)
            self._on_lost(reason)
        else:
            self.log.debug("still unavailable", reason=reason)

    def _safe_disconnect(self) -> None:
        try:
            self._disconnect()
        except Exception:
            self.log.exception("error while closing the device")

    # -- what a subclass supplies ---------------------------------------------------------

    @abstractmethod
    def _connect(self) -> None:
        """Open the device or raise :class:`DeviceUnavailable` saying why not."""

    def _disconnect(self) -> None:
        """Close the device; called after every session, whatever ended it. Serial drivers
        keep their port in ``_port`` and need nothing more; others override this."""
        port, self._port = getattr(self, "_port", None), None
        if port is not None:
            port.close()

    @abstractmethod
    def _serve_once(self) -> None:
        """One bounded slice of work (at most ~0.1 s); raise DeviceUnavailable on failure."""

    def _on_connected(self) -> None:
        """Called in the driver thread right after a successful connect."""

    def _on_lost(self, reason: str) -> None:
        """Called once per outage with a reason naming what failed."""

"""The progressive meter: what the sign shows, coalesced to at most 4 writes a second.

:class:`MeterDriver` owns the display rules (amount from integer cents; on a jackpot the sign
holds ``JACKPOT``, the table and the pending amount until a supervisor resets it) and the
rate limit; a protocol subclass only encodes the text (:class:`AlphaMeter`). Writes happen in
the driver thread, so a slow or unplugged sign never stalls the game. A ``listener`` hears
:class:`MeterConnected` and :class:`MeterLost` (once per outage), so the table can tell
surveillance and the CMS that the sign is dark. Amounts are integer cents, never floats, so
``$12,345.67`` is exactly what was won (:func:`meter_text` refuses anything else). The thread
sleeps until a new text is offered, the rate limit lets a pending one go, or the sign's line
has input or fails; an idle meter costs nothing.
"""

from __future__ import annotations

import math
import threading
import time
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import serial

from controller.core.money import format_cents
from drivers.alpha import write_text_packet
from drivers.base import DeviceDriver, DeviceUnavailable, open_serial_port
from drivers.config import MeterConfig

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class MeterConnected:
    port: str


@dataclass(frozen=True, slots=True)
class MeterLost:
    reason: str


MeterEvent = MeterConnected | MeterLost


def meter_text(cents: int) -> str:
    """What the sign shows for an amount: ``1234567`` -> ``$12,345.67``. Integer cents, not
    negative: a float, a bool or a negative amount is a bug upstream, refused here."""
    if isinstance(cents, bool) or not isinstance(cents, int):
        raise TypeError(f"meter amounts are integer cents, got {type(cents).__name__} "
                        f"{cents!r}")
    if cents < 0:
        raise ValueError(f"meter amount cannot be negative: {cents} cents")
    return format_cents(cents)


class Coalescer(Generic[T]):
    """Rate limit that never loses the last value. Pure: the caller passes the time.

    ``offer`` as often as you like; ``take(now)`` hands out the latest value at most once per
    ``min_interval`` seconds, and always hands out the last value offered eventually.
    """

    def __init__(self, min_interval: float) -> None:
        self.min_interval = min_interval
        self._pending: T | None = None
        self._has_pending = False
        self._last_take = -math.inf

    def offer(self, value: T) -> None:
        self._pending, self._has_pending = value, True

    def take(self, now: float) -> T | None:
        if not self._has_pending or now - self._last_take < self.min_interval:
            return None
        value, self._pending, self._has_pending = self._pending, None, False
        self._last_take = now
        return value

    @property
    def has_pending(self) -> bool:
        return self._has_pending

    def wait_time(self, now: float) -> float | None:
        """Seconds until a pending value may be taken; None if nothing is pending."""
        if not self._has_pending:
            return None
        return max(0.0, self._last_take + self.min_interval - now)


class MeterDriver(DeviceDriver[MeterEvent]):
    kind = "meter"

    def __init__(self, config: MeterConfig, *,
                 listener: Callable[[MeterEvent], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        assert config.port is not None
        super().__init__(config, port_label=config.port, listener=listener, clock=clock)
        self.config = config
        self._port: serial.SerialBase | None = None
        self._coalescer: Coalescer[str] = Coalescer(1.0 / config.max_writes_per_s)
        #: guards the coalescer and what the sign should show (the table's thread offers,
        #: the driver thread takes)
        self._lock = threading.Lock()
        self._amount_cents: int | None = None
        self._jackpot: tuple[str, int] | None = None
        self._shown: str | None = None
        self.writes = 0

    # -- what the table calls -----------------------------------------------------------

    def show_amount(self, cents: int) -> None:
        """The live progressive amount; held back while a jackpot is on the sign."""
        text = meter_text(cents)  # refused now, in the caller's thread
        with self._lock:
            self._amount_cents = cents
            if self._jackpot is None:
                self._offer(text)

    def show_jackpot(self, table: str, cents: int) -> None:
        """A progressive hit: show ``JACKPOT <table> <amount>`` until :meth:`reset_jackpot`."""
        text = self.jackpot_text(table, cents)
        with self._lock:
            self._jackpot = (table, cents)
            self._offer(text)

    def reset_jackpot(self) -> None:
        """The supervisor cleared the hit: back to the live amount."""
        with self._lock:
            self._jackpot = None
            if self._amount_cents is not None:
                self._offer(meter_text(self._amount_cents))

    @staticmethod
    def jackpot_text(table: str, cents: int) -> str:
        return f"JACKPOT {table} {meter_text(cents)}"

    @property
    def text(self) -> str | None:
        """What the sign was last told to show."""
        return self._shown

    def _offer(self, text: str) -> None:
        self._render(text)  # fail in the caller's thread if the protocol cannot carry it
        already_pending = self._coalescer.has_pending
        self._coalescer.offer(text)
        if not already_pending:
            # The thread may be waiting with no deadline: wake it. With a text already
            # pending it is waiting for that text's rate-limit deadline, which still holds.
            self._wake_thread()

    # -- the driver thread --------------------------------------------------------------

    def _connect(self) -> None:
        assert self.config.port is not None
        self._port = open_serial_port(self.config.port, baudrate=self.config.baudrate,
                                      bytesize=serial.SEVENBITS, parity=serial.PARITY_EVEN,
                                      stopbits=serial.STOPBITS_ONE)

    def _on_connected(self) -> None:
        # A sign that lost power or a cable lost what it showed: show it again.
        with self._lock:
            if self._shown is not None and not self._coalescer.has_pending:
                self._coalescer.offer(self._shown)
        self._emit(MeterConnected(self.port_label))

    def _on_lost(self, reason: str) -> None:
        self._emit(MeterLost(reason))

    def _serve_once(self) -> None:
        port = self._port
        if port is None:
            raise DeviceUnavailable("port is closed")
        with self._lock:
            wait = self._coalescer.wait_time(self.clock())
        if wait is None or wait > 0:
            # Nothing may be written yet: sleep until a text is offered (which wakes this
            # thread), the rate limit lets the pending one go, or the line has input (signs do
            # not answer; whatever comes is discarded to keep the line clear) or fails.
            if self._wait_port(port, wait):
                self._read_available(port)
            return
        with self._lock:
            text = self._coalescer.take(self.clock())
        if text is None:
            return
        try:
            port.write(self._render(text))
            port.flush()
        except (serial.SerialException, OSError) as exc:
            with self._lock:
                if not self._coalescer.has_pending:
                    self._coalescer.offer(text)  # still owed to the sign
            raise DeviceUnavailable(f"write to meter on {self.port_label} failed: {exc}") \
                from exc
        self._shown = text
        self.writes += 1
        # Every write, at debug: the amounts shown are journaled (meter_changed).
        self.log.debug("meter written", text=text)

    @abstractmethod
    def _render(self, text: str) -> bytes:
        """The protocol bytes that make the sign show ``text``; ValueError if impossible."""


class AlphaMeter(MeterDriver):
    """A meter that is an Alpha-protocol LED sign (config ``driver = "alpha"``)."""

    protocol = "alpha"

    def _render(self, text: str) -> bytes:
        return write_text_packet(text, type_code=self.config.type_code,
                                 address=self.config.address,
                                 file_label=self.config.file_label)

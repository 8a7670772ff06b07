"""The spot-controller interface: betting-spot lamps and progressive wager sensors.

The base class owns what every spot controller shares: one command at a time, an answer
within ``reply_timeout_s`` (250 ms) or a retry, ``attempts`` (3) unanswered tries = controller
lost, unsolicited wager-sensor reports delivered as events, reconnect with backoff. A protocol
subclass only encodes commands and decodes lines (:mod:`drivers.spots_ascii`).

The reader thread sleeps until the controller sends something; the reply timeouts are timed
by the thread that sent the command, waiting on the reply queue.

Lamp conventions follow progressive-table practice and are named here; :data:`LAMPS` gives
each lamp the table names (:class:`controller.core.vocabulary.SpotLamp`) its colour and mode,
so the table says ``TO_ACT`` rather than a colour.
"""

from __future__ import annotations

import queue
import threading
import time
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

import serial

from controller.errors import LowballError
from controller.core.vocabulary import SpotLamp
from drivers.base import DeviceDriver, DeviceUnavailable, RepeatedWarning, open_serial_port
from drivers.config import SpotsConfig
from drivers.lines import LineError, LineSplitter

ALL_SPOTS = 0


class Color(StrEnum):
    OFF = "OFF"
    GREEN = "GREEN"
    RED = "RED"
    AMBER = "AMBER"
    BLUE = "BLUE"
    WHITE = "WHITE"


class Mode(StrEnum):
    SOLID = "SOLID"
    BLINK = "BLINK"
    CHASE = "CHASE"


@dataclass(frozen=True, slots=True)
class Lamp:
    color: Color
    mode: Mode = Mode.SOLID


#: Between hands: spots chase to draw players in.
ATTRACT = Lamp(Color.BLUE, Mode.CHASE)
#: The progressive wager on this spot is accepted.
WAGER_ACCEPTED = Lamp(Color.WHITE, Mode.SOLID)
#: The wager sensor changed after betting was locked: the dealer must look.
CHANGED_AFTER_LOCK = Lamp(Color.RED, Mode.BLINK)
#: This player is to act.
TO_ACT = Lamp(Color.AMBER, Mode.BLINK)
WIN = Lamp(Color.GREEN, Mode.SOLID)
LOSE = Lamp(Color.OFF, Mode.SOLID)
PUSH = Lamp(Color.AMBER, Mode.SOLID)
PROGRESSIVE_WINNER = Lamp(Color.WHITE, Mode.BLINK)
#: The linked progressive's pool is out of reach: no progressive wager on this spot.
PROGRESSIVE_CLOSED = Lamp(Color.RED, Mode.SOLID)
#: The table is closed.
OFF = Lamp(Color.OFF, Mode.SOLID)

#: The lamp each of the table's lamp states shows.
LAMPS: dict[SpotLamp, Lamp] = {
    SpotLamp.ATTRACT: ATTRACT, SpotLamp.WAGER_ACCEPTED: WAGER_ACCEPTED,
    SpotLamp.CHANGED_AFTER_LOCK: CHANGED_AFTER_LOCK, SpotLamp.TO_ACT: TO_ACT,
    SpotLamp.WIN: WIN, SpotLamp.LOSE: LOSE, SpotLamp.PUSH: PUSH,
    SpotLamp.PROGRESSIVE_WINNER: PROGRESSIVE_WINNER,
    SpotLamp.PROGRESSIVE_CLOSED: PROGRESSIVE_CLOSED, SpotLamp.OFF: OFF,
}


# -- events ---------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class WagerSensor:
    """A progressive wager sensor changed: ``covered`` True when a chip is on it."""

    spot: int
    covered: bool


@dataclass(frozen=True, slots=True)
class SpotsConnected:
    port: str


@dataclass(frozen=True, slots=True)
class SpotsLost:
    reason: str


@dataclass(frozen=True, slots=True)
class LineRejected:
    reason: str
    raw: bytes = b""


SpotsEvent = WagerSensor | SpotsConnected | SpotsLost | LineRejected


# -- errors -----------------------------------------------------------------------------

class SpotControllerError(LowballError):
    """A spot command did not succeed; the message says which command and why."""


class SpotCommandRefused(SpotControllerError):
    def __init__(self, command: str, code: str) -> None:
        super().__init__(f"spot controller refused {command!r}: ERR {code}")
        self.command, self.code = command, code


class SpotControllerLost(SpotControllerError):
    pass


# -- replies a protocol decodes ---------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Reply:
    """The answer to a command: ``error`` is None for OK, else the ERR code."""

    error: str | None = None


class SpotControllerDriver(DeviceDriver[SpotsEvent]):
    """Base class of spot-controller drivers."""

    kind = "spots"

    def __init__(self, config: SpotsConfig, *,
                 listener: Callable[[SpotsEvent], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        assert config.port is not None
        super().__init__(config, port_label=config.port, listener=listener, clock=clock)
        self.config = config
        self._replies: queue.Queue[Reply] = queue.Queue()
        self._port: serial.SerialBase | None = None
        self._splitter = LineSplitter()
        self._rejected = RepeatedWarning("spot controller line rejected")
        self._command_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._pending_query: int | None = None
        self._query_answer: bool | None = None
        self._responsive = True
        self.attempts_made = 0

    # -- commands ---------------------------------------------------------------------

    def set_lamp(self, spot: int, lamp: Lamp) -> None:
        """Light ``spot`` (1-7, or 0 for every spot) as ``lamp``."""
        self._check_spot(spot, allow_all=True)
        self._command(self._encode_lamp(spot, lamp))

    def set_all(self, lamp: Lamp) -> None:
        self.set_lamp(ALL_SPOTS, lamp)

    def ping(self) -> None:
        self._command(self._encode_ping())

    def query_sensor(self, spot: int) -> bool:
        """Whether the wager sensor on ``spot`` is covered, asked of the controller now."""
        self._check_spot(spot, allow_all=False)
        with self._command_lock:
            with self._state_lock:
                self._pending_query, self._query_answer = spot, None
            try:
                self._exchange(self._encode_query(spot))
            finally:
                with self._state_lock:
                    answer, self._pending_query = self._query_answer, None
        if answer is None:
            raise SpotControllerError(f"controller answered the query of spot {spot} "
                                      "without a sensor report")
        return answer

    def _check_spot(self, spot: int, *, allow_all: bool) -> None:
        low = 0 if allow_all else 1
        if isinstance(spot, bool) or not isinstance(spot, int) or not low <= spot <= \
                self.config.spots:
            raise ValueError(f"spot must be {low}-{self.config.spots}, got {spot!r}")

    def _command(self, line: bytes) -> None:
        with self._command_lock:
            self._exchange(line)

    def _exchange(self, line: bytes) -> None:
        """Send one command and wait for its answer, retrying; the caller holds the lock."""
        text = line.decode("ascii").strip()
        for attempt in range(1, self.config.attempts + 1):
            self._drain_replies()
            self._write(line, text)
            self.attempts_made += 1
            try:
                reply = self._replies.get(timeout=self.config.reply_timeout_s)
            except queue.Empty:
                self.log.warning("no answer from spot controller", command=text,
                                 attempt=attempt)
                continue
            self._set_responsive(True, "")
            if reply.error is not None:
                raise SpotCommandRefused(text, reply.error)
            return
        reason = f"no answer to {text!r} after {self.config.attempts} tries"
        self._set_responsive(False, reason)
        raise SpotControllerLost(reason)

    def _drain_replies(self) -> None:
        while True:
            try:
                stale = self._replies.get_nowait()
            except queue.Empty:
                return
            self.log.info("late answer discarded", reply=repr(stale))

    def _write(self, line: bytes, text: str) -> None:
        port = self._port
        if port is None:
            raise SpotControllerLost(f"spot controller on {self.port_label} is not connected;"
                                     f" {text!r} not sent")
        try:
            port.write(line)
        except (serial.SerialException, OSError) as exc:
            raise SpotControllerLost(f"writing {text!r} failed: {exc}") from exc

    def _set_responsive(self, responsive: bool, reason: str) -> None:
        with self._state_lock:
            changed = responsive != self._responsive
            self._responsive = responsive
        if changed:
            self._emit(SpotsConnected(self.port_label) if responsive else SpotsLost(reason))

    # -- the reader thread ------------------------------------------------------------

    def _connect(self) -> None:
        assert self.config.port is not None
        self._splitter = LineSplitter()
        self._port = open_serial_port(self.config.port, baudrate=self.config.baudrate)

    def _on_connected(self) -> None:
        with self._state_lock:
            self._responsive = True
        self._emit(SpotsConnected(self.port_label))

    def _on_lost(self, reason: str) -> None:
        with self._state_lock:
            was = self._responsive
            self._responsive = False
        if was:
            self._emit(SpotsLost(reason))

    def _serve_once(self) -> None:
        port = self._port
        if port is None:
            raise DeviceUnavailable("port is closed")
        # The reader has no deadline of its own: reply timeouts run in the commanding thread
        # (:meth:`_exchange`), so it sleeps until a line, a failed port or stop() wakes it.
        if not self._wait_port(port, None):
            return
        for item in self._splitter.feed(self._read_available(port)):
            if isinstance(item, LineError):
                self._reject(item.reason, item.raw)
                continue
            try:
                decoded = self._decode_line(item)
            except ValueError as exc:
                self._reject(str(exc), item.encode("ascii"))
                continue
            if isinstance(decoded, Reply):
                self._replies.put(decoded)
            else:
                self._sensor(decoded)

    def _sensor(self, report: WagerSensor) -> None:
        with self._state_lock:
            if self._pending_query == report.spot:
                self._query_answer = report.covered
                return
        # Every report, at debug: what reaches the table is journaled as its input.
        self.log.debug("wager sensor", spot=report.spot, covered=report.covered)
        self._emit(report)

    def _reject(self, reason: str, raw: bytes) -> None:
        self._rejected(self.log, reason=reason, raw=raw.hex())
        self._emit(LineRejected(reason, raw))

    # -- what a protocol supplies -------------------------------------------------------

    @abstractmethod
    def _encode_lamp(self, spot: int, lamp: Lamp) -> bytes: ...

    @abstractmethod
    def _encode_ping(self) -> bytes: ...

    @abstractmethod
    def _encode_query(self, spot: int) -> bytes: ...

    @abstractmethod
    def _decode_line(self, line: str) -> Reply | WagerSensor:
        """A reply or a sensor report; ValueError naming the problem otherwise."""


def lamp_from_text(color: str, mode: str) -> Lamp:
    """Read a lamp from config or a command line; the error names the bad word."""
    try:
        c = Color(color.upper())
    except ValueError:
        raise ValueError(f"unknown lamp color {color!r}: expected one of "
                         f"{' '.join(Color)}") from None
    try:
        m = Mode(mode.upper())
    except ValueError:
        raise ValueError(f"unknown lamp mode {mode!r}: expected one of {' '.join(Mode)}") \
            from None
    return Lamp(c, m)


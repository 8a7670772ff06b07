"""What every device driver shares: a reader thread, reconnect with backoff, log context.

A driver subclass supplies only ``_connect``, ``_disconnect`` and ``_serve_once`` (one slice
of work: wait for input or the next deadline, then read what arrived or write what is due).
This class owns the loop around them: open the device, serve it until it fails, report the loss
once, back off, try again; and it guarantees that nothing a device sends can raise out of the
thread. The per-kind bases (:mod:`drivers.shoe`, :mod:`drivers.spots`, :mod:`drivers.meter`)
add the acknowledgement, retry and liveness rules of their kind on top.

No polling: a driver thread sleeps in ``poll()`` on its port and on a :class:`Wakeup` pipe
(:meth:`DeviceDriver._wait_port`) until bytes arrive, the port fails (a pulled cable makes the
descriptor readable and the read fail), another thread has work for it (:meth:`stop`, a new
meter text) or the nearest deadline of its protocol is due. The idle table therefore costs
nothing but the wake-ups the devices cause themselves (the shoe's heartbeat).

The driver's own waits use ``poll()``, which takes descriptors of any number. The port's
bytes are read and written by pyserial only, whose ``read`` and ``write`` wait in ``select()``
themselves: a port must therefore sit below descriptor 1024, as it does in this daemon (a
handful of sockets and files). A port opened at 1024 or above is closed at once and the
device reported unavailable, naming the reason (:func:`open_serial_port`).
"""

from __future__ import annotations

import errno
import logging
import os
import queue
import select
import termios
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar

import serial
import structlog
from serial import rfc2217

from controller.errors import LowballError

if TYPE_CHECKING:
    from drivers.config import DriverConfig

#: What a driver reports: its device kind's events.
E = TypeVar("E")


def debug_enabled(log: Any) -> bool:
    """Whether ``log.debug`` writes anything: structlog's filtering loggers (the ones
    :func:`controller.cli.logs.configure` sets up) know; any other logger is assumed to write.
    For a debug line whose arguments cost something to build, on a path run for every frame."""
    enabled = getattr(log, "is_enabled_for", None)
    return enabled is None or bool(enabled(logging.DEBUG))


class RepeatedWarning:
    """A warning a device can cause at its full speed (a garbled frame, a bad line): written
    at most once per ``window_s``; the next line written counts the ones skipped
    (``not_logged``), so a device talking nonsense cannot flood the log (and journald's rate
    limit cannot then drop the daemon's other lines)."""

    def __init__(self, event: str, window_s: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.event, self.window_s, self._clock = event, window_s, clock
        self._next = float("-inf")
        self._skipped = 0

    def __call__(self, log: Any, **fields: Any) -> None:
        now = self._clock()
        if now < self._next:
            self._skipped += 1
            return
        if self._skipped:
            fields["not_logged"], self._skipped = self._skipped, 0
        self._next = now + self.window_s
        log.warning(self.event, **fields)


class DeviceUnavailable(LowballError):
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


#: How much one read takes at most; a read returns at once with what has arrived.
READ_CHUNK = 4096
#: Ports with no descriptor to wait on (``rfc2217://``, ``loop://``) are looked at this often
#: (a read waits this long at most); device paths, ptys and ``socket://`` are waited on with
#: select() and never polled.
FALLBACK_POLL_S = 0.05
#: select() takes descriptors below this only (FD_SETSIZE); pyserial's read and write use it.
SELECT_LIMIT = 1024


def open_serial_port(url: str, *, baudrate: int, bytesize: int = serial.EIGHTBITS,
                     parity: str = serial.PARITY_NONE, stopbits: float = serial.STOPBITS_ONE,
                     timeout: float = 0, write_timeout: float = 1.0) -> serial.SerialBase:
    """Open any port pyserial can name: a device path, ``socket://``, ``rfc2217://``, a pty.

    The only place a driver opens a serial port, so the port string in config alone decides
    hardware, network serial server or simulator. Reads do not block (``timeout=0``): a
    driver waits in :meth:`DeviceDriver._wait_port` and then reads what is there; only a port
    with no descriptor to wait on gets a read timeout of :data:`FALLBACK_POLL_S`. Writes end
    within ``write_timeout``, or for ``rfc2217://`` within its socket's timeout
    (:func:`_settle_rfc2217`).
    """
    try:
        port = serial.serial_for_url(url, baudrate=baudrate, bytesize=bytesize, parity=parity,
                                     stopbits=stopbits, timeout=timeout,
                                     write_timeout=write_timeout, do_not_open=True)
        if isinstance(port, rfc2217.Serial):
            _settle_rfc2217(port)
        port.open()
        fd = port_descriptor(port)
        if fd is not None and fd >= SELECT_LIMIT:
            port.close()
            raise DeviceUnavailable(f"cannot use {url}: it opened as descriptor {fd}, and "
                                    f"pyserial reads and writes with select(), which takes "
                                    f"descriptors below {SELECT_LIMIT} only")
        if fd is None and port.timeout != FALLBACK_POLL_S:
            # Nothing poll() can wait on: the read itself waits, briefly (see _wait_port).
            port.timeout = FALLBACK_POLL_S
        return port
    except (serial.SerialException, OSError, ValueError, termios.error) as exc:
        # termios.error: the path opened but is no serial line pyserial can configure (a pty
        # whose other end was reused or closed: EINVAL; not a tty at all: ENOTTY).
        raise DeviceUnavailable(f"cannot open {url}: {_reason(exc)}") from exc


def _reason(exc: BaseException) -> str:
    if isinstance(exc, termios.error) and len(exc.args) == 2:
        number, text = exc.args
        return f"cannot configure the serial line: {text} " \
               f"({errno.errorcode.get(number, number)})"
    return str(exc)


def _settle_rfc2217(port: rfc2217.Serial) -> None:
    """What an ``rfc2217://`` port needs before it opens.

    No write timeout: pyserial's RFC 2217 client refuses any (NotImplementedError as it
    configures the port, so such a port could not be opened at all). Its writes are bounded
    all the same: each is one ``sendall`` on the socket pyserial opened with a 5 s timeout, so a
    write to a server that stopped reading fails after 5 s (SerialException, and the driver
    reconnects) rather than hanging; tests/drivers/test_rfc2217.py checks that bound is there.
    The read timeout is set now, not once open as for other ports without a descriptor:
    every setting changed on an open RFC 2217 port is negotiated with the server again.
    Stopping such a driver can outlast ``stop()``'s 5 s join (a stalled write, then pyserial's
    close waiting for its reader thread): ``stop()`` then logs it and may be called again.
    """
    port.write_timeout = None
    port.timeout = FALLBACK_POLL_S


def port_descriptor(port: serial.SerialBase) -> int | None:
    """The descriptor ``poll()`` can wait on for ``port``, or None if it has none."""
    try:
        fd = port.fileno()
    except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation is both
        return None
    return fd if isinstance(fd, int) and fd >= 0 else None


def wait_ready(fds: list[int], timeout: float | None) -> set[int]:
    """Which of ``fds`` are readable within ``timeout`` seconds (None: no limit); what
    ``select()`` would answer, for descriptors of any number.

    A descriptor that hung up or failed counts as ready, as with ``select()``: the read that
    follows says what went wrong. One that is not open raises OSError (EBADF).
    """
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    # poll() counts milliseconds and rounds up: a deadline is never woken for early.
    events = poller.poll(None if timeout is None else max(0.0, timeout) * 1000)
    for fd, event in events:
        if event & select.POLLNVAL:
            raise OSError(errno.EBADF, f"descriptor {fd} is not open")
    return {fd for fd, _ in events}


class Wakeup:
    """A self-pipe: :meth:`set` from any thread wakes the driver thread out of ``poll()``.

    Level-triggered, so a wake-up sent before the thread starts to wait is not lost; the
    thread clears it (:meth:`clear`) before it looks at what changed. The pipe exists from
    :meth:`open` (the driver's start) to :meth:`close` (its stop); :meth:`set` is a no-op
    outside that.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fds: tuple[int, int] | None = None

    def open(self) -> None:
        with self._lock:
            if self._fds is None:
                read_fd, write_fd = os.pipe()
                os.set_blocking(read_fd, False)
                os.set_blocking(write_fd, False)
                self._fds = (read_fd, write_fd)

    def fileno(self) -> int:
        fds = self._fds
        if fds is None:
            raise ValueError("the wake-up pipe is not open")
        return fds[0]

    def set(self) -> None:
        with self._lock:  # never write to a descriptor number closed (and reused) meanwhile
            if self._fds is None:
                return
            try:
                os.write(self._fds[1], b"!")
            except BlockingIOError:
                pass  # the pipe is full: a wake-up is pending already

    def clear(self) -> None:
        with self._lock:
            if self._fds is None:
                return
            try:
                while os.read(self._fds[0], 512):
                    pass
            except BlockingIOError:
                pass

    def close(self) -> None:
        with self._lock:
            fds, self._fds = self._fds, None
        if fds is not None:
            for fd in fds:
                os.close(fd)

    def __del__(self) -> None:
        fds = getattr(self, "_fds", None)
        if fds is not None:
            for fd in fds:
                try:
                    os.close(fd)
                except OSError:
                    pass


class DeviceDriver(ABC, Generic[E]):
    """A device served by one background thread that reconnects on its own.

    Use as a context manager, or call :meth:`start` and :meth:`stop` (which joins the thread).
    Its events go to ``listener`` if there is one, else to the queue :meth:`get_event` reads:
    never both, for no one reads the queue of a driver with a listener (the daemon's), and it
    would keep every card and heartbeat for the life of the process.
    """

    #: "shoe", "spots" or "meter": names the logger and the thread.
    kind: str = "device"
    #: The config name of the protocol this class speaks ("lbs1", "alpha", ...).
    protocol: str = ""

    def __init__(self, config: DriverConfig, *, port_label: str,
                 listener: Callable[[E], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.name = config.label
        self.port_label = port_label
        self.clock = clock
        self.log = structlog.get_logger(f"drivers.{self.kind}").bind(
            device=self.name, port=port_label, protocol=self.protocol)
        self._listener = listener
        self._events: queue.Queue[E] = queue.Queue()
        self._backoff = Backoff(config.reconnect_initial_s, config.reconnect_max_s)
        self._stopping = threading.Event()
        self._connected = threading.Event()
        self._thread: threading.Thread | None = None
        #: one start() or stop() at a time (stop() holds it until the thread has ended)
        self._lifecycle = threading.Lock()
        self._lost_reported = False
        #: the reason last logged for this outage: a reconnect loop logs a line only when the
        #: reason changes, never one per attempt
        self._lost_reason: str | None = None
        #: wakes the driver thread out of :meth:`_wait_port` (stop, work from other threads)
        self._wakeup = Wakeup()

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> None:
        with self._lifecycle:
            if self._thread is not None:
                raise RuntimeError(f"{self.kind} driver {self.name!r} already started")
            self._stopping.clear()
            self._wakeup.open()
            self._thread = threading.Thread(target=self._run, name=f"{self.kind}-{self.name}",
                                            daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread and close the device. Safe to call twice, and from two threads at
        once: the second waits for the first, so neither returns while the thread runs."""
        if self._thread is threading.current_thread():
            # From the driver's own thread (a listener): it cannot join itself; it ends
            # after this turn of its loop, and a stop() from elsewhere then joins it.
            self._stopping.set()
            return
        with self._lifecycle:
            self._stopping.set()
            self._wakeup.set()
            thread = self._thread
            if thread is not None:
                thread.join(timeout)
                if thread.is_alive():
                    self.log.error("driver thread did not stop", timeout_s=timeout)
                    return  # it may still wait on the pipe: leave it open, and try again then
                self._thread = None
            self._wakeup.close()  # only once the thread that waits on it has ended

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def get_event(self, timeout: float | None = None) -> E | None:
        """The next event, waiting up to ``timeout`` seconds; None if none came. For a
        driver built without a listener: with one, every event goes to the listener."""
        try:
            return self._events.get(timeout=timeout)
        except queue.Empty:
            return None

    def _emit(self, event: E) -> None:
        if self._listener is None:
            self._events.put(event)
            return
        try:
            self._listener(event)
        except Exception:
            self.log.exception(f"{self.kind} event listener failed", detail=repr(event))

    @property
    def running(self) -> bool:
        """The driver's thread is alive (started and not ended), connected or not."""
        thread = self._thread
        return thread is not None and thread.is_alive()

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
                failure = f"driver error while connecting: {exc!r}"
                if failure != self._lost_reason:  # the traceback once, not once per attempt
                    self.log.exception("connect failed unexpectedly")
                self._report_lost(failure)
                self._stopping.wait(self._backoff.next_delay())
                continue
            self._backoff.reset()
            self._lost_reported = False
            self._lost_reason = None
            self._connected.set()
            self.log.info("connected")
            reason: str | None = None
            try:
                self._on_connected()
                while not self._stopping.is_set():
                    self._serve_once()
            except DeviceUnavailable as exc:
                reason = str(exc)
            except Exception as exc:
                reason = f"driver error: {exc!r}"
                if reason != self._lost_reason:
                    self.log.exception("driver error")
            finally:
                self._connected.clear()
                self._safe_disconnect()
            if reason is not None:
                self._report_lost(reason)
                self._stopping.wait(self._backoff.next_delay())
        self.log.info("stopped")

    def _report_lost(self, reason: str) -> None:
        """Once per outage: a warning and :meth:`_on_lost`. Then one line each time the
        reason changes (the retries themselves log at debug level only)."""
        if not self._lost_reported:
            self._lost_reported = True
            self._lost_reason = reason
            self.log.warning("device lost", reason=reason,
                             retry="reconnecting with backoff, one line per change")
            self._on_lost(reason)
        elif reason != self._lost_reason:
            self._lost_reason = reason
            self.log.warning("device still lost, for another reason", reason=reason)
        else:
            self.log.debug("still unavailable", reason=reason)

    def _safe_disconnect(self) -> None:
        try:
            self._disconnect()
        except Exception:
            self.log.exception("error while closing the device")

    def _wake_thread(self) -> None:
        """Make the driver thread look again at once (from any thread)."""
        self._wakeup.set()

    def _wait_port(self, port: serial.SerialBase, timeout: float | None) -> bool:
        """Sleep until ``port`` has input, :meth:`_wake_thread` or :meth:`stop` is called, or
        ``timeout`` seconds pass (None: no deadline). True when the port should be read now:
        it has input, or it failed and the read will say so.

        A port with no descriptor (``rfc2217://``, ``loop://``) cannot be waited on here: its
        read waits instead, up to :data:`FALLBACK_POLL_S`, so such a port is looked at that
        often, deadlines included.
        """
        wakeup = self._wakeup.fileno()
        fd = port_descriptor(port)
        if fd is None:
            if wait_ready([wakeup], 0):
                self._wakeup.clear()
                return False
            return True
        try:
            ready = wait_ready([fd, wakeup], timeout)
        except OSError as exc:  # the port's descriptor went bad under us
            raise DeviceUnavailable(f"waiting on {self.port_label} failed: {exc}") from exc
        if wakeup in ready:
            self._wakeup.clear()
        return fd in ready

    def _read_available(self, port: serial.SerialBase) -> bytes:
        """What has arrived on ``port``, at once (it was opened with timeout 0); a port with
        no descriptor waits up to :data:`FALLBACK_POLL_S` for a first byte. DeviceUnavailable
        if the read fails, as it does on a pulled cable."""
        try:
            data: bytes
            if port_descriptor(port) is not None:
                data = port.read(READ_CHUNK)
                return data
            data = port.read(1)  # rfc2217:// hands out queued bytes one per read call
            while data and (waiting := port.in_waiting):
                data += port.read(waiting)
            return data
        except (serial.SerialException, OSError) as exc:
            raise DeviceUnavailable(f"read from {self.port_label} failed: {exc}") from exc

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
        """One slice of work; raise DeviceUnavailable on failure. It may sleep until input or
        its next deadline, but only where :meth:`stop` wakes it (:meth:`_wait_port`) or for a
        bounded time, and it must return after a wake-up so the loop sees a stop request."""

    def _on_connected(self) -> None:
        """Called in the driver thread right after a successful connect."""

    def _on_lost(self, reason: str) -> None:
        """Called once per outage with a reason naming what failed."""

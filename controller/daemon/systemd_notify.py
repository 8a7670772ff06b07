"""Tell systemd how the table daemon is doing: the sd_notify protocol, without libsystemd.

systemd passes a datagram socket in ``NOTIFY_SOCKET`` to a ``Type=notify`` service; each
message is a datagram of newline-separated ``KEY=value`` lines (``READY=1``, ``STATUS=...``,
``WATCHDOG=1``, ``STOPPING=1``, ``RELOADING=1``). The protocol is small and stable, so it is
written out here rather than pulling in python-systemd (a C extension that needs libsystemd
headers on every build machine and is useless off Linux).

Nothing here may take the table down: without ``NOTIFY_SOCKET`` (a developer's terminal,
``make run``, the tests) every call is a no-op, and a failed send is logged once and reported
as ``False``, never raised. Losing a status line is harmless; a crash in the middle of a hand
is not.

Typical use in the daemon::

    notifier = Notifier.from_environment()
    watchdog = Watchdog(notifier, healthy=table.is_healthy)
    ...                                   # open devices, bind sockets, replay the journal
    notifier.ready(status="table CALI-01 open")
    while running:
        poller.poll(timeout_ms(watchdog.next_due(), heartbeat_due))
        ...                               # one slice of work
        watchdog.tick()
    notifier.stopping()
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Mapping

import structlog

log = structlog.get_logger("controller.daemon.systemd_notify")

#: Fraction of the watchdog period between pings. systemd's own guidance (sd_watchdog_enabled(3))
#: is to ping at half the period, leaving the other half as slack for a slow loop iteration.
PING_FRACTION = 0.5
#: When a ping is due but the daemon is unhealthy, look again after this fraction of the ping
#: interval instead of at once, so ``next_due()`` never returns 0 and spins the main loop.
RECHECK_FRACTION = 0.25


def _socket_address(value: str) -> str | None:
    """``NOTIFY_SOCKET`` as an ``AF_UNIX`` address, or None if we cannot speak to it.

    A leading ``@`` names a socket in the abstract namespace, which Python spells with a NUL.
    Newer systemd may also pass ``vsock:`` addresses (for VMs); a table PC never needs them.
    """
    if value.startswith("@") and len(value) > 1:
        return "\0" + value[1:]
    if value.startswith("/"):
        return value
    return None


def _one_line(text: str) -> str:
    """A ``STATUS=`` value must be one line: a newline would start a new ``KEY=value``."""
    return " ".join(text.splitlines())


class Notifier:
    """Sends sd_notify datagrams to one socket; does nothing when ``address`` is None.

    Safe to call from any thread (one lock around the send), though only the main loop
    should send ``WATCHDOG=1``; see :class:`Watchdog`.
    """

    def __init__(self, address: str | None) -> None:
        self.address = address
        self._socket: socket.socket | None = None
        self._lock = threading.Lock()
        # Log the first failure of an outage only: a lost notify socket would otherwise add a
        # line to the journal on every watchdog ping. Reset by the next successful send.
        self._failure_logged = False

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Notifier:
        """The notifier systemd asked for, or a no-op one when not started by systemd."""
        env = os.environ if environ is None else environ
        value = env.get("NOTIFY_SOCKET", "")
        if not value:
            return cls(None)
        address = _socket_address(value)
        if address is None:
            log.warning("notify_socket_unsupported", notify_socket=value)
        return cls(address)

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def send(self, *assignments: str) -> bool:
        """Send ``KEY=value`` lines as one datagram; True if the datagram left.

        systemd reads one datagram as one state change, so ``READY=1`` and its ``STATUS=``
        travel together rather than in two sends.
        """
        if self.address is None:
            return False
        payload = "\n".join(assignments).encode("utf-8")
        with self._lock:
            try:
                if self._socket is None:
                    self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
                self._socket.sendto(payload, self.address)
            except OSError as exc:
                if not self._failure_logged:
                    self._failure_logged = True
                    log.warning("sd_notify_failed", notify_socket=self.address.replace("\0", "@"),
                                message=assignments[0] if assignments else "", error=str(exc))
                return False
            self._failure_logged = False
            return True

    def ready(self, status: str | None = None) -> bool:
        """Start-up is complete: devices open, sockets bound, journal replayed.

        systemd holds units ordered after this one, and ``systemctl start`` waits, until then.
        """
        lines = ["READY=1"]
        if status is not None:
            lines.append(f"STATUS={_one_line(status)}")
        return self.send(*lines)

    def status(self, text: str) -> bool:
        """Free text shown by ``systemctl status`` (e.g. "hand 1234: dealing", "PAUSED: shoe")."""
        return self.send(f"STATUS={_one_line(text)}")

    def extend_timeout(self, seconds: float, status: str) -> bool:
        """Start-up goes on (a long journal is being checked): systemd's start timeout is
        pushed ``seconds`` from now (``EXTEND_TIMEOUT_USEC``, systemd 236+), with a status."""
        return self.send(f"EXTEND_TIMEOUT_USEC={int(seconds * 1_000_000)}",
                         f"STATUS={_one_line(status)}")

    def watchdog(self) -> bool:
        """Keep-alive; send through :class:`Watchdog` so it only goes out while healthy."""
        return self.send("WATCHDOG=1")

    def stopping(self) -> bool:
        """Shutdown has begun, so systemd does not take the slow exit for a hang."""
        return self.send("STOPPING=1")

    def reloading(self) -> bool:
        """A reload has begun; call :meth:`ready` when it is done.

        ``MONOTONIC_USEC`` is what systemd 253+ (``Type=notify-reload``) uses to tell this
        reload from an earlier one; older systemd ignores it.
        """
        now_usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        return self.send("RELOADING=1", f"MONOTONIC_USEC={now_usec}")

    def close(self) -> None:
        with self._lock:
            if self._socket is not None:
                self._socket.close()
                self._socket = None


def watchdog_interval(environ: Mapping[str, str] | None = None,
                      pid: int | None = None) -> float | None:
    """Seconds between ``WATCHDOG=1`` pings, or None when systemd expects none.

    ``WATCHDOG_USEC`` is the unit's ``WatchdogSec=``. ``WATCHDOG_PID``, when set, names the
    process the watchdog is meant for: a child that inherited the environment (a helper
    started with subprocess) must not ping on the daemon's behalf, so a mismatch means None.
    """
    env = os.environ if environ is None else environ
    watchdog_pid = env.get("WATCHDOG_PID")
    if watchdog_pid:
        try:
            if int(watchdog_pid) != (os.getpid() if pid is None else pid):
                return None
        except ValueError:
            return None
    try:
        usec = int(env.get("WATCHDOG_USEC", ""))
    except ValueError:
        return None
    if usec <= 0:
        return None
    return usec / 1_000_000 * PING_FRACTION


class Watchdog:
    """Pings systemd's watchdog from the daemon's main loop, and only while it is healthy.

    Call :meth:`tick` once per main-loop iteration and bound the loop's poll timeout with
    :meth:`next_due`. There is deliberately no background thread: a thread that pings on a
    timer proves only that the thread runs. If the main loop deadlocks on a device, or the
    journal write hangs, a free-running thread would keep pinging and systemd would never
    restart the table. Pinging from the loop, after ``healthy()`` says yes, ties each ping to
    real progress, so a wedged or sick daemon misses its pings and ``WatchdogSec=`` fires.

    ``healthy`` should be cheap and must not block (e.g. "the journal accepted a write and the
    publisher is not backed up"). A fault the table handles itself, such as a lost shoe that
    puts the hand in ``PAUSED``, is not unhealthy: restarting would not bring the shoe back.
    If ``healthy`` raises, the ping is withheld as if it returned False.

    ``interval`` defaults to :func:`watchdog_interval`; with None the watchdog is disabled,
    ``tick`` never sends and ``next_due`` returns None (no deadline). ``clock`` is injectable
    so tests need no sleeps.
    """

    def __init__(self, notifier: Notifier, healthy: Callable[[], bool], *,
                 clock: Callable[[], float] = time.monotonic,
                 interval: float | None = None, environ: Mapping[str, str] | None = None) -> None:
        self.notifier = notifier
        self.healthy = healthy
        self.clock = clock
        self.interval = interval if interval is not None else watchdog_interval(environ)
        if self.interval is not None and self.interval <= 0:
            raise ValueError(f"watchdog interval must be positive, not {self.interval}")
        self._due = clock()  # the first tick pings at once
        self._unhealthy_logged = False

    @property
    def enabled(self) -> bool:
        return self.interval is not None and self.notifier.enabled

    def _is_healthy(self) -> bool:
        try:
            return bool(self.healthy())
        except Exception as exc:  # noqa: BLE001 - a broken check withholds the ping, no more
            log.warning("watchdog_health_check_raised", error=repr(exc))
            return False

    def tick(self) -> bool:
        """Ping if the interval has elapsed and the daemon is healthy; True if a ping went out."""
        if self.interval is None or not self.notifier.enabled:
            return False
        now = self.clock()
        if now < self._due:
            return False
        if not self._is_healthy():
            if not self._unhealthy_logged:
                self._unhealthy_logged = True
                log.warning("watchdog_withheld", reason="unhealthy")
            self._due = now + self.interval * RECHECK_FRACTION
            return False
        if self._unhealthy_logged:
            self._unhealthy_logged = False
            log.info("watchdog_resumed")
        # Advance even if the send failed: retrying at once would spin the loop, and the
        # notifier has already logged the failure.
        self._due = now + self.interval
        return self.notifier.watchdog()

    def next_due(self) -> float | None:
        """Seconds until :meth:`tick` next has work (0 if overdue), or None when disabled."""
        if self.interval is None or not self.notifier.enabled:
            return None
        return max(0.0, self._due - self.clock())

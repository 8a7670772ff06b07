"""The sd_notify client and the watchdog, against real AF_UNIX datagram sockets."""

from __future__ import annotations

import os

import pytest
from structlog.testing import capture_logs

from controller.daemon.systemd_notify import (
    RECHECK_FRACTION,
    Notifier,
    Watchdog,
    watchdog_interval,
)

from tests.support.systemd import NotifySocket


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


# -- messages -------------------------------------------------------------------------------

@pytest.fixture(params=["path_socket", "abstract_socket"])
def notify_socket(request: pytest.FixtureRequest) -> NotifySocket:
    notify: NotifySocket = request.getfixturevalue(request.param)
    return notify


def test_each_message_is_one_exact_datagram(notify_socket: NotifySocket) -> None:
    notifier = Notifier.from_environment()
    assert notifier.enabled
    assert notifier.ready()
    assert notifier.ready(status="table CALI-01 open")
    assert notifier.status("hand 17: dealing")
    assert notifier.watchdog()
    assert notifier.stopping()
    assert [notify_socket.receive() for _ in range(5)] == [
        b"READY=1",
        b"READY=1\nSTATUS=table CALI-01 open",
        b"STATUS=hand 17: dealing",
        b"WATCHDOG=1",
        b"STOPPING=1",
    ]
    assert notify_socket.pending() == []
    notifier.close()


def test_a_long_start_extends_the_timeout(path_socket: NotifySocket) -> None:
    assert Notifier.from_environment().extend_timeout(30, "checking the journal: seq 1 of 9")
    assert path_socket.receive() == \
        b"EXTEND_TIMEOUT_USEC=30000000\nSTATUS=checking the journal: seq 1 of 9"


def test_status_is_kept_to_one_line(path_socket: NotifySocket) -> None:
    # A newline would start a second KEY=value line, e.g. a forged READY=1.
    assert Notifier.from_environment().status("PAUSED\nREADY=1")
    assert path_socket.receive() == b"STATUS=PAUSED READY=1"


def test_reloading_carries_monotonic_usec(path_socket: NotifySocket) -> None:
    assert Notifier.from_environment().reloading()
    first, second = path_socket.receive().split(b"\n")
    assert first == b"RELOADING=1"
    key, value = second.split(b"=")
    assert key == b"MONOTONIC_USEC" and int(value) > 0


def test_without_notify_socket_everything_is_a_no_op(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    notifier = Notifier.from_environment()
    assert not notifier.enabled
    assert not any([notifier.ready("x"), notifier.status("x"), notifier.watchdog(),
                    notifier.stopping(), notifier.reloading()])
    assert notifier._socket is None  # not even a socket was opened


def test_an_address_we_cannot_speak_to_disables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOTIFY_SOCKET", "vsock:2:1234")
    with capture_logs() as logs:
        notifier = Notifier.from_environment()
    assert not notifier.enabled and not notifier.ready()
    assert [entry["event"] for entry in logs] == ["notify_socket_unsupported"]


def test_an_unreachable_socket_never_raises_and_logs_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOTIFY_SOCKET", "/nonexistent/lowball-table/notify")
    notifier = Notifier.from_environment()
    with capture_logs() as logs:
        results = [notifier.ready(), notifier.watchdog(), notifier.watchdog(), notifier.stopping()]
    assert results == [False, False, False, False]
    assert [(e["event"], e["message"]) for e in logs] == [("sd_notify_failed", "READY=1")]


def test_a_new_outage_after_recovery_is_logged_again(path_socket: NotifySocket) -> None:
    notifier = Notifier.from_environment()
    gone = Notifier("/nonexistent/notify")
    with capture_logs() as logs:
        assert not gone.watchdog() and not gone.watchdog()
        gone.address = notifier.address  # the socket is back
        assert gone.watchdog()
        gone.address = "/nonexistent/notify"
        assert not gone.watchdog()
    assert [e["event"] for e in logs] == ["sd_notify_failed", "sd_notify_failed"]
    assert path_socket.receive() == b"WATCHDOG=1"


# -- watchdog interval ----------------------------------------------------------------------

def test_interval_is_half_the_watchdog_period(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WATCHDOG_USEC", "10000000")  # WatchdogSec=10s
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    assert watchdog_interval() == 5.0
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    assert watchdog_interval() == 5.0


def test_watchdog_pid_of_another_process_disables(monkeypatch: pytest.MonkeyPatch) -> None:
    # A child that inherited the daemon's environment must not ping for it.
    monkeypatch.setenv("WATCHDOG_USEC", "10000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid() + 1))
    assert watchdog_interval() is None
    assert watchdog_interval({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "42"}, pid=42) == 5.0


@pytest.mark.parametrize("environ", [
    {},
    {"WATCHDOG_USEC": ""},
    {"WATCHDOG_USEC": "0"},
    {"WATCHDOG_USEC": "-5"},
    {"WATCHDOG_USEC": "ten seconds"},
    {"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "not-a-pid"},
])
def test_no_or_bad_watchdog_settings_mean_no_watchdog(environ: dict[str, str]) -> None:
    assert watchdog_interval(environ) is None


# -- Watchdog -------------------------------------------------------------------------------

def make_watchdog(health: list[bool], clock: FakeClock,
                  interval: float | None = 5.0) -> Watchdog:
    def healthy() -> bool:
        return health[-1]
    return Watchdog(Notifier.from_environment(), healthy, clock=clock, interval=interval)


def test_pings_once_per_interval(path_socket: NotifySocket) -> None:
    clock = FakeClock()
    watchdog = make_watchdog([True], clock)
    assert watchdog.enabled and watchdog.next_due() == 0.0
    assert watchdog.tick()  # the first tick pings at once
    assert not watchdog.tick()  # not again until the interval has passed
    clock.advance(4.9)
    assert watchdog.next_due() == pytest.approx(0.1)
    assert not watchdog.tick()
    clock.advance(0.1)
    assert watchdog.next_due() == 0.0
    assert watchdog.tick()
    assert watchdog.next_due() == 5.0
    assert path_socket.pending() == [b"WATCHDOG=1", b"WATCHDOG=1"]


def test_no_ping_while_unhealthy_and_no_busy_loop(path_socket: NotifySocket) -> None:
    clock = FakeClock()
    health = [False]
    watchdog = make_watchdog(health, clock)
    with capture_logs() as logs:
        assert not watchdog.tick()
        # Due but unhealthy: look again after a fraction of the interval, not at once.
        assert watchdog.next_due() == 5.0 * RECHECK_FRACTION
        for _ in range(10):
            clock.advance(watchdog.next_due() or 0.0)
            assert not watchdog.tick()
        assert path_socket.pending() == []
        health.append(True)
        clock.advance(watchdog.next_due() or 0.0)
        assert watchdog.tick()
    assert path_socket.pending() == [b"WATCHDOG=1"]
    assert [e["event"] for e in logs] == ["watchdog_withheld", "watchdog_resumed"]


def test_a_health_check_that_raises_withholds_the_ping(path_socket: NotifySocket) -> None:
    def broken() -> bool:
        raise RuntimeError("journal gone")
    watchdog = Watchdog(Notifier.from_environment(), broken, clock=FakeClock(), interval=5.0)
    with capture_logs():
        assert not watchdog.tick()
    assert path_socket.pending() == []


def test_a_failed_send_still_advances() -> None:
    # Otherwise next_due() would stay 0 and spin the main loop while the socket is gone.
    clock = FakeClock()
    watchdog = Watchdog(Notifier("/nonexistent/notify"), lambda: True, clock=clock,
                        interval=5.0)
    with capture_logs():
        assert not watchdog.tick()
    assert watchdog.next_due() == 5.0


def test_disabled_without_watchdog_usec(path_socket: NotifySocket,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    watchdog = Watchdog(Notifier.from_environment(), lambda: True, clock=FakeClock())
    assert not watchdog.enabled
    assert not watchdog.tick() and watchdog.next_due() is None
    assert path_socket.pending() == []


def test_disabled_without_notify_socket(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    monkeypatch.setenv("WATCHDOG_USEC", "10000000")
    watchdog = Watchdog(Notifier.from_environment(), lambda: True, clock=FakeClock())
    assert watchdog.interval == 5.0 and not watchdog.enabled
    assert not watchdog.tick() and watchdog.next_due() is None


def test_interval_comes_from_the_environment(path_socket: NotifySocket,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WATCHDOG_USEC", "2000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    clock = FakeClock()
    watchdog = Watchdog(Notifier.from_environment(), lambda: True, clock=clock)
    assert watchdog.tick()
    assert watchdog.next_due() == 1.0
    assert path_socket.pending() == [b"WATCHDOG=1"]


def test_a_non_positive_interval_is_refused() -> None:
    with pytest.raises(ValueError, match="positive"):
        Watchdog(Notifier(None), lambda: True, interval=0.0)

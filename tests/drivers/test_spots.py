"""The spot-controller driver against the simulated controller over a pty / socket."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from drivers.config import SpotsConfig
from drivers.spots import (
    ATTRACT,
    CHANGED_AFTER_LOCK,
    LOSE,
    PROGRESSIVE_WINNER,
    PUSH,
    TO_ACT,
    WAGER_ACCEPTED,
    WIN,
    Color,
    Lamp,
    LineRejected,
    Mode,
    Reply,
    SpotCommandRefused,
    SpotControllerLost,
    SpotsConnected,
    SpotsLost,
    WagerSensor,
    lamp_from_text,
)
from drivers.spots_ascii import AsciiSpotController, decode_line
from simulators.spots import SpotControllerModel

from tests.support.drivers import EventWaiter, make_transport


@pytest.fixture
def spots_rig(transport_kind: str) -> Iterator[tuple[Any, AsciiSpotController, EventWaiter]]:
    sim = make_transport(transport_kind, SpotControllerModel(), name="spots").start()
    # 0.5 s rather than the protocol's 0.25 s: answered commands must never time out on a
    # loaded test machine; unanswered ones (ignore_commands) time out whatever the value.
    driver = AsciiSpotController(SpotsConfig(port=sim.url, reply_timeout_s=0.5,
                                             reconnect_initial_s=0.05, reconnect_max_s=0.2))
    driver.start()
    waiter = EventWaiter(driver)
    waiter.next(SpotsConnected)
    yield sim, driver, waiter
    driver.stop()
    sim.stop()


def test_lamp_conventions() -> None:
    assert ATTRACT.mode is Mode.CHASE
    assert WAGER_ACCEPTED.mode is Mode.SOLID
    assert CHANGED_AFTER_LOCK == Lamp(Color.RED, Mode.BLINK)
    assert TO_ACT == Lamp(Color.AMBER, Mode.BLINK)
    assert WIN.color is Color.GREEN and LOSE.color is Color.OFF
    assert PUSH.color is Color.AMBER
    assert PROGRESSIVE_WINNER == Lamp(Color.WHITE, Mode.BLINK)


def test_decode_lines() -> None:
    assert decode_line("S 3 1") == WagerSensor(3, True)
    refused, ok = decode_line("ERR SPOT"), decode_line("OK")
    assert isinstance(refused, Reply) and refused.error == "SPOT"
    assert isinstance(ok, Reply) and ok.error is None
    for bad in ("S 0 1", "S 9 1", "OK!", "HELLO"):
        with pytest.raises(ValueError, match=repr(bad)):
            decode_line(bad)
    with pytest.raises(ValueError, match="unknown lamp color 'pink'"):
        lamp_from_text("pink", "solid")


def test_lamps_reach_the_spots(spots_rig: Any) -> None:
    sim, driver, waiter = spots_rig
    driver.set_all(ATTRACT)
    driver.set_lamp(3, TO_ACT)
    driver.ping()
    lamps = sim.device.lamps
    assert lamps[3] == TO_ACT and lamps[1] == ATTRACT and lamps[7] == ATTRACT
    assert sim.device.commands == ["L 0 BLUE CHASE", "L 3 AMBER BLINK", "P"]


def test_refused_command_raises_with_code(spots_rig: Any) -> None:
    sim, driver, waiter = spots_rig
    sim.device.refuse_next("OVERHEAT")
    with pytest.raises(SpotCommandRefused, match="ERR OVERHEAT") as info:
        driver.set_lamp(2, WIN)
    assert info.value.code == "OVERHEAT"
    driver.set_lamp(2, WIN)  # the next one works


def test_unanswered_command_is_retried(spots_rig: Any) -> None:
    sim, driver, waiter = spots_rig
    sim.device.ignore_commands(2)
    driver.set_lamp(1, PUSH)
    assert driver.attempts_made == 3
    assert sim.device.commands == ["L 1 AMBER SOLID"] * 3


def test_three_failures_mean_lost_then_found(spots_rig: Any) -> None:
    sim, driver, waiter = spots_rig
    sim.device.ignore_commands(3)
    with pytest.raises(SpotControllerLost, match="after 3 tries"):
        driver.ping()
    assert "after 3 tries" in waiter.next(SpotsLost).reason
    driver.ping()
    waiter.next(SpotsConnected)


def test_unsolicited_sensor_reports_are_events(spots_rig: Any) -> None:
    sim, driver, waiter = spots_rig
    sim.device.cover(4)
    assert waiter.next(WagerSensor) == WagerSensor(4, True)
    sim.device.uncover(4)
    assert waiter.next(WagerSensor) == WagerSensor(4, False)


def test_sensor_query_answers_without_an_event(spots_rig: Any) -> None:
    sim, driver, waiter = spots_rig
    with sim.lock:
        sim.model.sensors[5] = True
    assert driver.query_sensor(5) is True
    assert driver.query_sensor(6) is False
    sim.device.cover(1)
    assert waiter.next(WagerSensor) == WagerSensor(1, True)  # the first event after queries


def test_garbage_lines_rejected_not_fatal(spots_rig: Any) -> None:
    sim, driver, waiter = spots_rig
    sim.device.send_raw(b"\xff\xfeNOISE\r\nS 9 1\r\n")
    assert "printable" in waiter.next(LineRejected).reason
    assert "S 9 1" in waiter.next(LineRejected).reason
    driver.ping()


def test_bad_spot_never_sent(spots_rig: Any) -> None:
    sim, driver, waiter = spots_rig
    with pytest.raises(ValueError, match="spot must be 0-7"):
        driver.set_lamp(8, WIN)
    with pytest.raises(ValueError, match="spot must be 1-7"):
        driver.query_sensor(0)
    assert sim.device.commands == []


def test_disconnected_controller_raises_lost(spots_rig: Any) -> None:
    sim, driver, waiter = spots_rig
    sim.disconnect()
    waiter.next(SpotsLost)
    with pytest.raises(SpotControllerLost):
        driver.ping()
    sim.reconnect()
    waiter.next(SpotsConnected)
    driver.ping()


def test_a_driver_with_a_listener_keeps_no_backlog_of_its_events(transport_kind: str) -> None:
    """The daemon's drivers have listeners and never call get_event(): an event kept for it
    as well would stay for the life of the process."""
    from tests.support.drivers import poll_until

    heard: list[Any] = []
    with make_transport(transport_kind, SpotControllerModel(), name="spots") as sim:
        with AsciiSpotController(SpotsConfig(port=sim.url, reply_timeout_s=0.5),
                                 listener=heard.append) as driver:
            poll_until(lambda: any(isinstance(event, SpotsConnected) for event in heard))
            sim.device.cover(4)
            poll_until(lambda: WagerSensor(4, True) in heard)
            assert driver.get_event(timeout=0) is None

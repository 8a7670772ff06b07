"""The wager sensors' gate (device_hub.SensorGate), on a clock the test moves: a spot's first
change goes on at once, the rest of its window are held, the newest one goes on when the
window ends, and the table is never told a state it already has."""

from __future__ import annotations

from controller.daemon.device_hub import SENSOR_WINDOW_S, Report, SensorGate


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_first_change_goes_on_and_the_window_ends_on_the_last() -> None:
    clock = Clock()
    gate = SensorGate(clock)
    assert gate.admit(1, True) == Report("sensor", (1, True))
    assert [gate.admit(1, covered) for covered in (False, True, False)] == [None] * 3
    assert gate.admit(2, True) == Report("sensor", (2, True))     # each spot its own window
    assert gate.release() == []
    due = gate.next_due()
    assert due is not None and abs(due - SENSOR_WINDOW_S) < 1e-9
    clock.now += SENSOR_WINDOW_S + 0.001
    assert gate.release() == [Report("sensor", (1, False))]
    assert gate.next_due() is None
    # Still bouncing: a new window is open, so the next change is held again.
    assert gate.admit(1, True) is None
    clock.now += SENSOR_WINDOW_S + 0.001
    assert gate.release() == [Report("sensor", (1, True))]


def test_a_bounce_back_to_what_the_table_knows_is_not_reported_again() -> None:
    clock = Clock()
    gate = SensorGate(clock)
    gate.admit(3, True)
    gate.admit(3, False)
    gate.admit(3, True)
    clock.now += SENSOR_WINDOW_S + 0.001
    assert gate.release() == []
    clock.now += SENSOR_WINDOW_S + 0.001
    assert gate.admit(3, False) == Report("sensor", (3, False))   # quiet again: at once


def test_another_report_of_the_device_flushes_what_is_held_first() -> None:
    clock = Clock()
    gate = SensorGate(clock)
    gate.admit(1, True)
    gate.admit(1, False)
    assert gate.flush() == [Report("sensor", (1, False))]
    clock.now += SENSOR_WINDOW_S + 0.001
    assert gate.release() == []

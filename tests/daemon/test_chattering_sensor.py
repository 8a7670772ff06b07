"""A wager sensor with a bouncing contact sends valid ``S <spot> <0|1>`` lines as fast as the
line carries them. Each valid report used to be one synced journal transaction, and the
command channel served nothing while a device report waited: a status waited 3.6 s behind
8000 bounces, and for ever behind continuous chatter. Now the hub passes a spot's changes on
at most once a window (device_hub.SensorGate), ending on the sensor's last state, and a
backlog of device reports, however it came, holds a command back one turn at most."""

from __future__ import annotations

import time
from typing import Any

import zmq

from controller.daemon.device_hub import Report

from tests.support.rig import RigFactory
from tests.support.waits import DEADLINE_S, wait_for

#: Sensor reports the bouncing contact sends in one burst (a few seconds of the line).
BOUNCES = 8000
#: What a command may wait behind a device, at most, however busy it is.
ANSWER_S = 1.0


def _status_wait(req: zmq.Socket[bytes]) -> float | None:
    asked = time.monotonic()
    req.send(b'{"command":"status"}')
    answered = req.poll(int(DEADLINE_S * 1000))
    waited = time.monotonic() - asked
    if not answered:
        return None
    req.recv()
    return waited


def test_a_bouncing_sensor_costs_a_few_records_and_the_table_ends_on_its_last_state(
        rig_factory: RigFactory) -> None:  # noqa: F811
    rig = rig_factory("three-card-lowball")
    rig.status()                                       # the REQ socket is connected
    reported: list[Any] = []
    rig.daemon.observers.append(lambda records, events: reported.extend(
        event for event in events if type(event).__name__ == "SensorReport"))
    # Covered on the first bounce, uncovered on the last.
    burst = b"".join(f"S 1 {bounce % 2}\n".encode() for bounce in range(1, BOUNCES + 1))
    with rig.spots.lock:
        rig.spots.model.send_raw(burst)
    wait_for(lambda: reported, "the first bounce to reach the table")
    assert rig.req is not None
    waited = _status_wait(rig.req)
    assert waited is not None and waited < ANSWER_S, f"status answered after {waited} s"
    wait_for(lambda: reported and not reported[-1].covered and len(reported) > 1,
             "the sensor's last state (uncovered) to reach the table")
    assert reported[0].covered
    assert len(reported) < 100, f"{len(reported)} sensor records for one burst"


def test_a_device_backlog_does_not_hold_the_commands_back(rig_factory: RigFactory) -> None:  # noqa: F811
    rig = rig_factory("three-card-lowball")
    rig.status()
    daemon = rig.daemon
    before = daemon.journal.last_seq
    for bounce in range(1, BOUNCES + 1):
        daemon.devices.reports.put(Report("sensor", (1, bool(bounce % 2))))
    daemon.devices.wake_loop()
    wait_for(lambda: daemon.journal.last_seq > before + 50, "the backlog to be under way")
    assert rig.req is not None
    waited = _status_wait(rig.req)
    behind = daemon.devices.reports.qsize()     # (the rig's stop does not wait for them)
    assert waited is not None and waited < ANSWER_S, (
        f"status answered after {waited} s, with {behind} reports still queued")

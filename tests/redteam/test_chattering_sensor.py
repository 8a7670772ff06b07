"""A wager sensor with a bouncing contact sends valid ``S <spot> <0|1>`` lines as fast as the
line carries them. Only *garbled* input is gated (device_hub.RejectionGate); every valid report
is one synced journal transaction, and the command channel serves nothing while a device
report waits (command_channel.serve_turn). So the dealer's and supervisor's commands, even a
status, wait for the whole backlog: with the sensor still bouncing, for ever."""

from __future__ import annotations

import time

import pytest
import zmq

from tests.test_daemon import DEADLINE_S, rig_factory, wait_for  # noqa: F401 (fixture)

#: Sensor reports the bouncing contact sends in one burst (a few seconds of the line).
BOUNCES = 8000
#: What a command may wait behind a device, at most, however busy it is.
ANSWER_S = 1.0


@pytest.mark.xfail(strict=True, reason="a chattering wager sensor starves the command channel: "
                                       "no command, not even status, is served until every "
                                       "queued sensor report has been journaled")
def test_a_bouncing_sensor_does_not_hold_the_commands_back(rig_factory):  # noqa: F811
    rig = rig_factory("three-card-lowball")
    rig.status()                                       # the REQ socket is connected
    burst = b"".join(f"S 1 {bounce % 2}\n".encode() for bounce in range(1, BOUNCES + 1))
    before = rig.daemon.journal.last_seq
    with rig.spots.lock:
        rig.spots.model.send_raw(burst)
    wait_for(lambda: rig.daemon.journal.last_seq > before + 50, "the bouncing to arrive")
    asked = time.monotonic()
    rig.req.send(b'{"command":"status"}')
    answered = rig.req.poll(int(DEADLINE_S * 1000))
    waited = time.monotonic() - asked
    rig.req.recv() if answered else None
    # Let the backlog drain before the rig closes (its stop would wait behind it too).
    wait_for(lambda: rig.daemon.devices.reports.empty(), "the backlog to drain", timeout=60)
    assert answered and waited < ANSWER_S, (
        f"status answered after {waited:.1f} s, behind "
        f"{rig.daemon.journal.last_seq - before} journaled sensor records")

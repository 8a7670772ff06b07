"""A stop request (SIGTERM from systemd, ``request_stop``) wakes the loop at once; the loop
handles a turn's worth of device reports at most (loop.MAX_REPORTS_PER_TURN) before it checks
the stop, beats the heartbeat and pings the systemd watchdog (TableDaemon._tick). Behind a
backlog of device reports, however long, the daemon still stops at once. (It used to drain the
whole queue first: 7.2 s behind 6000 sensor reports, long enough for systemd's watchdog.)"""

from __future__ import annotations

import time

from controller.daemon.device_hub import Report

from tests.support.rig import RigFactory
from tests.support.waits import wait_for

#: Reports waiting (seconds of synced journaling if the loop drained them all first).
BACKLOG = 6000
STOP_S = 1.0


def test_a_stop_is_not_held_behind_a_device_backlog(rig_factory: RigFactory) -> None:  # noqa: F811
    rig = rig_factory("three-card-lowball")
    daemon = rig.daemon
    before = daemon.journal.last_seq
    for bounce in range(1, BACKLOG + 1):        # what a burst of device reports leaves queued
        daemon.devices.reports.put(Report("sensor", (2, bool(bounce % 2))))
    daemon.devices.wake_loop()
    wait_for(lambda: daemon.journal.last_seq > before + 50, "the backlog to be under way")
    asked = time.monotonic()
    daemon.request_stop()
    rig.thread.join(STOP_S)
    waited = time.monotonic() - asked
    stopped = not rig.thread.is_alive()
    rig.thread.join(60)
    left = daemon.journal.last_seq - before
    daemon.close()
    rig.daemon = None
    assert stopped, f"the loop ran on {waited:.1f} s after the stop request"
    assert left < BACKLOG, "the whole backlog was journaled before the stop"

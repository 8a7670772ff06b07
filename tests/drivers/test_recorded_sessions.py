"""Recorded shoe sessions replayed through a real pty, gpsd regression-log style.

Each ``tests/data/shoe-*.lbs1.log`` holds the bytes as they crossed the wire; the driver must
decode exactly the events in the ``.chk`` beside it and answer with exactly the ACK/NAK bytes
the recording shows. The recordings are also checked to be reproducible from the provenance
in their header.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from drivers.config import ShoeConfig
from drivers.shoe_events import DEVICE_EVENTS, ShoeConnected, event_record
from drivers.shoe_serial import SerialShoe
from simulators.pty_transport import PtyTransport
from simulators.recorder import SESSIONS, record
from simulators.sessions import ReplayModel, SessionLog, dump_expected, load_expected

from tests.support.drivers import EventWaiter, poll_until

DATA = Path(__file__).resolve().parent.parent / "data"
LOGS = sorted(DATA.glob("shoe-*.lbs1.log"))


def test_there_are_sessions_of_each_kind() -> None:
    names = {path.name for path in LOGS}
    assert {"shoe-clean-deal.lbs1.log", "shoe-faults-noise.lbs1.log",
            "shoe-jam-door.lbs1.log", "shoe-halt-conflict.lbs1.log"} <= names


@pytest.mark.parametrize("log_path", LOGS, ids=lambda p: p.name)
def test_header_names_line_settings_and_source(log_path: Path) -> None:
    log = SessionLog.load(log_path)
    assert log.header_value("Serial") == "115200 8N1"
    assert (log.header_value("Protocol") or "").startswith("LBS1 with card counts")
    assert (log.header_value("Source") or "").startswith("simulators/recorder.py")
    assert log.records


@pytest.mark.parametrize("log_path", LOGS, ids=lambda p: p.name)
def test_replay_through_a_pty(log_path: Path) -> None:
    log = SessionLog.load(log_path)
    expected = load_expected(log_path.with_suffix(".chk"))
    replay = ReplayModel(log)
    with PtyTransport(replay, name="replay") as sim:
        with SerialShoe(ShoeConfig(port=sim.url)) as shoe:
            waiter = EventWaiter(shoe)
            waiter.next(ShoeConnected)
            sim.device.play()
            got = [event_record(waiter.next(lambda e: isinstance(e, DEVICE_EVENTS)))
                   for _ in expected]
            assert got == expected
            want = log.host_bytes()
            poll_until(lambda: len(sim.device.host_bytes) >= len(want))
            assert bytes(sim.device.host_bytes) == want


@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_recordings_are_reproducible(name: str) -> None:
    log, events = record(SESSIONS[name])
    path = DATA / f"shoe-{name}.lbs1.log"
    assert log.dumps() == path.read_text(encoding="ascii")
    assert dump_expected([event_record(e) for e in events]) == \
        path.with_suffix(".chk").read_text(encoding="utf-8")

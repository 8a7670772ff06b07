"""``lowball-table sim`` and ``lowball-table shoe-monitor`` end to end."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from controller.cli.main import main
from controller.cli.shoe_monitor import monitor
from drivers.config import ShoeConfig, SpotsConfig
from drivers.shoe_events import CardRead, ShoeConnected, ShoeFault
from drivers.shoe_serial import SerialShoe
from drivers.shoe_usb import UsbShoe
from drivers.spots import SpotsConnected, WagerSensor
from drivers.spots_ascii import AsciiSpotController
from simulators.pty_transport import PtyTransport
from simulators.shoe import Lbs1ShoeModel, UsbShoeModel
from simulators.usb_backend import SimulatedUsbShoe

from tests.support.drivers import EventWaiter, poll_until
from tests.support.waits import DEADLINE_S

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _restore_structlog() -> Iterator[None]:
    yield
    structlog.reset_defaults()


def start_sim(*args: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen([sys.executable, "-m", "controller.cli.main", "sim", *args],
                               cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, bufsize=1)
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    assert url, "sim printed no URL"
    return process, url


def tell(process: subprocess.Popen[str], line: str) -> str:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(line + "\n")
    process.stdin.flush()
    return process.stdout.readline().strip()


def finish(process: subprocess.Popen[str]) -> int:
    try:
        tell(process, "quit")
    except BrokenPipeError:
        pass
    return process.wait(DEADLINE_S)


def test_sim_shoe_on_a_pty() -> None:
    process, url = start_sim("shoe", "--pty", "--cards", "As 7d Kc")
    try:
        assert url.startswith("/")
        with SerialShoe(ShoeConfig(port=url)) as shoe:
            waiter = EventWaiter(shoe)
            waiter.next(ShoeConnected)
            assert tell(process, "deal 2") == "ok"
            assert tell(process, "jam") == "ok"
            assert tell(process, "door ajar") == "door: usage: door open|close"
            assert tell(process, "frobnicate").startswith("unknown command")
            assert [str(e.card) for e in waiter.collect(2, CardRead)] == ["As", "7d"]
            assert waiter.next(ShoeFault).code.value == "JAM"
    finally:
        assert finish(process) == 0


def test_sim_spots_on_tcp() -> None:
    process, url = start_sim("spots", "--tcp", "0")
    try:
        assert url.startswith("socket://127.0.0.1:")
        with AsciiSpotController(SpotsConfig(port=url)) as spots:
            waiter = EventWaiter(spots)
            waiter.next(SpotsConnected)
            spots.ping()
            assert tell(process, "cover 2") == "ok"
            assert waiter.next(WagerSensor) == WagerSensor(2, True)
            assert tell(process, "cover 9").startswith("cover:")
    finally:
        assert finish(process) == 0


def test_shoe_monitor_json(capsys: pytest.CaptureFixture[str]) -> None:
    model = Lbs1ShoeModel("As 7d", heartbeat_every_s=0.05)
    with PtyTransport(model, name="shoe") as sim:
        result: list[int] = []
        thread = threading.Thread(target=lambda: result.append(main(
            ["shoe-monitor", "--port", sim.url, "--json", "--count", "4", "--timeout", "20"])))
        thread.start()
        try:
            # The monitor is listening once it acknowledges a heartbeat.
            poll_until(lambda: any(kind == "acked" for kind, _ in sim.device.history))
            with sim.lock:
                sim.device.corrupt_next_crc()
                sim.device.deal(2)
                sim.device.jam()
        finally:
            thread.join(DEADLINE_S)
    assert result == [0]
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    device = [r for r in records if r["type"] not in ("connected", "lost")]
    assert device[0]["type"] == "rejected" and "bad CRC" in device[0]["reason"]
    assert device[1] == {"type": "card", "card": "As", "seq": device[1]["seq"],
                         "tag": "04A1B227", "count": 1}
    assert device[2]["card"] == "7d"
    assert device[3] == {"type": "fault", "code": "JAM"}


def test_shoe_monitor_timeout_without_events(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(tmp_path / "nothing")
    assert main(["shoe-monitor", "--port", missing, "--json", "--count", "1",
                 "--timeout", "0.3"]) == 1
    [line] = capsys.readouterr().out.splitlines()
    assert json.loads(line)["type"] == "lost" and missing in line


def test_shoe_monitor_config_errors_name_the_problem(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["shoe-monitor", "--protocol", "lbs1"]) == 2
    assert "port is required" in capsys.readouterr().err


def test_monitor_over_usb_text_output() -> None:
    backend = SimulatedUsbShoe(UsbShoeModel("Qh"))
    out = io.StringIO()
    with UsbShoe(ShoeConfig(driver="usb"), backend=backend) as shoe:
        with backend.lock:
            backend.device.deal()
            backend.device.open_door()
        assert monitor(shoe, out, count=3, timeout=DEADLINE_S) == 0
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("online usb:1209:4c42")
    assert lines[1].startswith("card   Qh") and "tag 04A1B225" in lines[1]
    assert lines[2] == "FAULT  DOOR" and lines[3] == "status DOOROPEN"


def test_sim_meter_prints_what_the_sign_shows() -> None:
    from drivers.config import MeterConfig
    from drivers.meter import AlphaMeter

    process, url = start_sim("meter", "--seed", "1")
    try:
        with AlphaMeter(MeterConfig(port=url)) as meter:
            assert meter.wait_connected(DEADLINE_S)
            meter.show_amount(1234567)
            assert process.stdout is not None
            assert process.stdout.readline().strip() == "meter shows: $12,345.67"
    finally:
        assert finish(process) == 0

"""Red team, invisible device trouble (issue 14): a meter sign whose port opens but cannot be
configured (a reused pty gives EINVAL, a path that is no tty ENOTTY: both termios errors)
must be published as ``device_status`` (surveillance and the CMS learn the sign is dark) and
its reconnect loop must log one line per change, not a traceback per attempt. Once the port is
a working sign again, ``connected`` is published and the sign shows the meter.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import serial
import structlog.testing
import zmq

from controller.core.money import format_cents
from controller.core.table_events import DeviceStatus
from controller.daemon.loop import TableDaemon
from controller.settings.table_config import Stream, load_config
from drivers.config import MeterConfig
from drivers.meter import AlphaMeter, MeterConnected, MeterLost
from simulators.meter import AlphaSignModel
from simulators.pty_transport import PtyTransport

from tests.support.daemon import config_file
from tests.support.waits import wait_for


def test_a_meter_that_cannot_be_configured_is_published_and_logged_once(tmp_path: Path) -> None:
    not_a_tty = tmp_path / "not-a-tty"
    not_a_tty.write_bytes(b"")
    port = tmp_path / "meter"
    port.symlink_to(not_a_tty)
    loaded = load_config(config_file(tmp_path))
    config = loaded.config
    devices = config.devices.model_validate({"meter": {
        "driver": "alpha", "port": str(port), "reconnect_initial_s": 0.01,
        "reconnect_max_s": 0.02}})
    stream = Stream(events=f"ipc://{tmp_path}/e", replay=f"ipc://{tmp_path}/r",
                    commands=f"ipc://{tmp_path}/c")
    loaded = loaded.model_copy(update={"config": config.model_copy(
        update={"devices": devices, "stream": stream})})
    context = zmq.Context()
    daemon = TableDaemon(loaded, state_dir=tmp_path / "state", context=context)
    published: list[Any] = []
    daemon.observers.append(lambda records, events: published.extend(events))
    sign = PtyTransport(AlphaSignModel(), name="meter")
    try:
        with structlog.testing.capture_logs() as logs:
            daemon.start()

            def statuses(status: str) -> list[DeviceStatus]:
                daemon.handle_device_reports()
                return [e for e in published if type(e) is DeviceStatus
                        and e.device == "meter" and e.status == status]
            (lost,) = wait_for(lambda: statuses("lost"), "the meter's device_status lost")
            assert "Inappropriate ioctl for device" in lost.detail
            # Many attempts, and still one line: no traceback, no error per attempt.
            wait_for(lambda: sum(line["event"] == "still unavailable" for line in logs) >= 20,
                     "twenty reconnect attempts")
            assert daemon.devices.meter is not None
            meter_lines = [line for line in logs if line.get("device") == daemon.devices.meter.name
                           and line["log_level"] not in ("debug", "info")]
            assert [line["event"] for line in meter_lines] == ["device lost"], meter_lines
            assert not any("exc_info" in line for line in logs)

            sign.start()
            os.replace(tmp_path / "meter", tmp_path / "old-link")
            (tmp_path / "meter").symlink_to(os.readlink(sign.url))
            wait_for(lambda: statuses("connected"), "the meter's device_status connected")
        assert len(statuses("lost")) == 1
        wait_for(lambda: sign.device.text == format_cents(daemon.table.meter),
                 "the sign to show the meter")
    finally:
        daemon.close()
        sign.stop()
        context.term()


def test_a_termios_error_on_open_is_a_lost_device_with_one_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(serial, "protocol_handler_packages",
                        [*serial.protocol_handler_packages, "tests.support.serial_urls"])
    heard: list[Any] = []
    meter = AlphaMeter(MeterConfig(port="einval://sign", reconnect_initial_s=0.005,
                                   reconnect_max_s=0.01), listener=heard.append)
    with structlog.testing.capture_logs() as logs:
        with meter:
            wait_for(lambda: sum(line["event"] == "still unavailable" for line in logs) >= 20,
                     "twenty reconnect attempts")
    (lost,) = heard
    assert type(lost) is MeterLost and "EINVAL" in lost.reason and "einval://sign" in lost.reason
    loud = [line for line in logs if line["log_level"] not in ("debug", "info")]
    assert [line["event"] for line in loud] == ["device lost"]
    assert not any("exc_info" in line for line in logs)
    assert not any(type(event) is MeterConnected for event in heard)

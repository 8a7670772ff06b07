"""Driver configuration and the driver registry."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from drivers import BACKENDS, UnknownDriver, driver_class, open_shoe
from drivers.base import Backoff
from drivers.config import MeterConfig, ShoeConfig, SpotsConfig
from drivers.lines import LineError, LineSplitter
from drivers.shoe_serial import SerialShoe
from drivers.shoe_usb import UsbShoe


def test_defaults_follow_the_protocols() -> None:
    shoe = ShoeConfig(port="/dev/ttyUSB0")
    assert (shoe.driver, shoe.baudrate, shoe.lost_after_s) == ("lbs1", 115200, 3.0)
    spots = SpotsConfig(port="socket://127.0.0.1:7000")
    assert (spots.baudrate, spots.reply_timeout_s, spots.attempts) == (9600, 0.25, 3)
    meter = MeterConfig(port="rfc2217://sign:2217")
    assert (meter.baudrate, meter.max_writes_per_s, meter.type_code) == (9600, 4.0, "Z")


def test_unknown_key_is_named() -> None:
    with pytest.raises(ValidationError, match="baud_rate"):
        ShoeConfig(port="/dev/ttyUSB0", baud_rate=9600)  # type: ignore[call-arg]  # deliberately


def test_unknown_driver_lists_the_choices() -> None:
    with pytest.raises(ValidationError, match="unknown shoe driver 'acme'.*lbs1, usb"):
        ShoeConfig(driver="acme", port="x")


def test_serial_drivers_need_a_port_usb_does_not() -> None:
    with pytest.raises(ValidationError, match="port is required for shoe driver 'lbs1'"):
        ShoeConfig()
    with pytest.raises(ValidationError, match="port is required"):
        MeterConfig()
    assert ShoeConfig(driver="usb", vendor_id=0x0483, product_id=0x5740).port is None


def test_meter_rate_limit_cannot_exceed_four() -> None:
    with pytest.raises(ValidationError, match="max_writes_per_s"):
        MeterConfig(port="x", max_writes_per_s=10)


def test_registry_resolves_every_row() -> None:
    for kind, table in BACKENDS.items():
        for name in table:
            assert driver_class(kind, name).protocol == name
    assert driver_class("shoe", "lbs1") is SerialShoe
    assert isinstance(open_shoe(ShoeConfig(driver="usb")), UsbShoe)
    with pytest.raises(UnknownDriver, match="unknown meter driver 'led'"):
        driver_class("meter", "led")
    with pytest.raises(UnknownDriver, match="unknown device kind"):
        driver_class("dice", "lbs1")


def test_backoff_doubles_to_a_cap_and_resets() -> None:
    backoff = Backoff(0.25, 1.0)
    assert [backoff.next_delay() for _ in range(5)] == [0.25, 0.5, 1.0, 1.0, 1.0]
    backoff.reset()
    assert backoff.next_delay() == 0.25
    with pytest.raises(ValueError):
        Backoff(0, 1)


def test_line_splitter() -> None:
    splitter = LineSplitter(max_line=8)
    out = splitter.feed(b"OK\r\nS 1 1\nTOO LONG A LINE\r\nERR X\r\n\xff\r\n")
    assert out[:2] == ["OK", "S 1 1"]
    assert isinstance(out[2], LineError) and "longer than 8" in out[2].reason
    assert out[3] == "ERR X"
    assert isinstance(out[4], LineError)

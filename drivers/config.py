"""Driver settings as pydantic models, so the table config can embed them as they are.

``extra="forbid"`` everywhere: a misspelt key in an operator's TOML is an error naming the key,
not a silently ignored setting. Defaults are the line settings and timings of docs/protocols.md.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from drivers.registry import driver_entry

#: USB ids of the simulated shoe (pid.codes test range); real shoes set theirs in config.
DEFAULT_USB_VENDOR_ID = 0x1209
DEFAULT_USB_PRODUCT_ID = 0x4C42


class DriverConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Which device kind this config is for; set by each subclass.
    device_kind: ClassVar[str] = "device"

    driver: str
    #: Name used in logs and events ("shoe", "spots", "meter", or e.g. "shoe-table-3").
    name: str = Field(default="", max_length=64)
    #: pyserial URL: /dev/ttyUSB0, socket://host:port, rfc2217://host:port, a pty path.
    port: str | None = Field(default=None, min_length=1)
    baudrate: int = Field(gt=0, le=4_000_000)
    reconnect_initial_s: float = Field(default=0.25, gt=0, le=60)
    reconnect_max_s: float = Field(default=5.0, gt=0, le=600)

    @field_validator("driver")
    @classmethod
    def _known_driver(cls, value: str) -> str:
        driver_entry(cls.device_kind, value)  # UnknownDriver (a ValueError) names the choices
        return value

    @model_validator(mode="after")
    def _port_when_needed(self) -> DriverConfig:
        if driver_entry(self.device_kind, self.driver).needs_port and self.port is None:
            raise ValueError(f"port is required for {self.device_kind} driver {self.driver!r} "
                             "(a device path, socket://host:port or rfc2217://host:port)")
        if self.reconnect_max_s < self.reconnect_initial_s:
            raise ValueError("reconnect_max_s must be at least reconnect_initial_s")
        return self

    @property
    def label(self) -> str:
        return self.name or self.device_kind


class ShoeConfig(DriverConfig):
    """A card shoe: ``driver`` is ``lbs1`` (serial) or ``usb``."""

    device_kind: ClassVar[str] = "shoe"

    driver: str = "lbs1"
    baudrate: int = Field(default=115200, gt=0, le=4_000_000)
    vendor_id: int = Field(default=DEFAULT_USB_VENDOR_ID, ge=0, le=0xFFFF)
    product_id: int = Field(default=DEFAULT_USB_PRODUCT_ID, ge=0, le=0xFFFF)
    #: How long the host gives one USB acknowledgement control transfer.
    ack_timeout_ms: int = Field(default=200, gt=0, le=10_000)
    #: The longest one wait for input lasts where nothing else bounds it. USB: a libusb read
    #: cannot be interrupted, so this is how long stopping the driver can take. Serial: stray
    #: bytes still waiting for an STX are reported once the line has been quiet this long.
    #: (Otherwise a driver sleeps until input, a stop request or the silence deadline.)
    read_timeout_ms: int = Field(default=250, gt=0, le=1_000)
    #: No frame at all for this long = shoe lost (docs/protocols.md: 3 s).
    lost_after_s: float = Field(default=3.0, gt=0, le=60)


class SpotsConfig(DriverConfig):
    """The betting-spot controller: LEDs and progressive wager sensors."""

    device_kind: ClassVar[str] = "spots"

    driver: str = "spots-ascii"
    baudrate: int = Field(default=9600, gt=0, le=4_000_000)
    #: No answer within this long = retry (docs/protocols.md: 250 ms).
    reply_timeout_s: float = Field(default=0.25, gt=0, le=10)
    #: Tries per command; this many unanswered in a row = controller lost (docs/protocols.md: 3).
    attempts: int = Field(default=3, ge=1, le=10)
    spots: int = Field(default=7, ge=1, le=7)


class MeterConfig(DriverConfig):
    """The progressive meter sign (Alpha protocol)."""

    device_kind: ClassVar[str] = "meter"

    driver: str = "alpha"
    baudrate: int = Field(default=9600, gt=0, le=4_000_000)
    #: Coalescing limit (docs/protocols.md: at most 4 writes a second).
    max_writes_per_s: float = Field(default=4.0, gt=0, le=4.0)
    #: Alpha addressing: type code ``Z`` = all signs, address ``00`` = broadcast.
    type_code: str = Field(default="Z", pattern=r"^[!-~]$")
    address: str = Field(default="00", pattern=r"^[0-9A-F]{2}$")
    file_label: str = Field(default="A", pattern=r"^[!-~]$")

"""Config name -> driver class, imported on demand (python-can's ``BACKENDS`` table).

A table config says ``driver = "lbs1"``; only then is :mod:`drivers.shoe_serial` imported, so a
missing USB library never breaks a serial-only table. A vendor protocol is one more row.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from controller.errors import LowballError


@dataclass(frozen=True, slots=True)
class DriverEntry:
    module: str
    class_name: str
    #: True for drivers that talk over a serial port and so need ``port`` in config.
    needs_port: bool = True


#: device kind -> config name -> where the driver lives
BACKENDS: dict[str, dict[str, DriverEntry]] = {
    "shoe": {
        "lbs1": DriverEntry("drivers.shoe_serial", "SerialShoe"),
        "usb": DriverEntry("drivers.shoe_usb", "UsbShoe", needs_port=False),
    },
    "spots": {
        "spots-ascii": DriverEntry("drivers.spots_ascii", "AsciiSpotController"),
    },
    "meter": {
        "alpha": DriverEntry("drivers.meter", "AlphaMeter"),
    },
}


class UnknownDriver(LowballError, ValueError):
    """A config named a driver no table row knows."""


def driver_entry(kind: str, name: str) -> DriverEntry:
    try:
        table = BACKENDS[kind]
    except KeyError:
        raise UnknownDriver(f"unknown device kind {kind!r}: expected one of "
                            f"{', '.join(sorted(BACKENDS))}") from None
    try:
        return table[name]
    except KeyError:
        raise UnknownDriver(f"unknown {kind} driver {name!r}: expected one of "
                            f"{', '.join(sorted(table))}") from None


def driver_class(kind: str, name: str) -> type[Any]:
    """Import and return the class for ``name``; the error names what is missing."""
    entry = driver_entry(kind, name)
    try:
        module = importlib.import_module(entry.module)
    except ImportError as exc:
        raise UnknownDriver(f"{kind} driver {name!r} cannot be loaded: {exc}") from exc
    found: type[Any] = getattr(module, entry.class_name)
    return found

"""``lowball-table shoe-monitor``: a technician's view of what a shoe is saying.

Connects to a shoe (LBS1 on any pyserial URL, or USB), acknowledges per protocol, and prints
each card, fault, status change and rejected frame as it arrives; ``--json`` prints one object
per line. Bad frames are printed, never fatal. ``--count`` / ``--timeout`` make it stop on its
own, for scripts and tests.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, TextIO

import structlog

from drivers.shoe_events import (
    DEVICE_EVENTS,
    Heartbeat,
    ShoeEvent,
    describe,
    event_record,
)


def register(subparsers: Any, name: str, help_text: str) -> None:
    p = subparsers.add_parser(name, help=help_text, description=__doc__.split("\n\n")[1])
    p.add_argument("--port", help="shoe port URL: /dev/ttyUSB0, socket://host:port, "
                   "rfc2217://host:port, or a simulator's pty path (needed for lbs1)")
    p.add_argument("--protocol", choices=["lbs1", "usb"], default="lbs1",
                   help="shoe protocol (default lbs1)")
    p.add_argument("--baudrate", type=int, default=115200, help="LBS1 baud rate")
    p.add_argument("--vendor-id", type=lambda text: int(text, 0), default=None,
                   help="USB vendor id, e.g. 0x1209")
    p.add_argument("--product-id", type=lambda text: int(text, 0), default=None,
                   help="USB product id, e.g. 0x4c42")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--heartbeats", action="store_true", help="print heartbeats too")
    p.add_argument("--count", type=int, default=None,
                   help="stop after N cards / faults / status changes / rejected frames")
    p.add_argument("--timeout", type=float, default=None, help="stop after S seconds")
    p.add_argument("--verbose", action="store_true", help="driver log on stderr")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from drivers import open_shoe
    from drivers.config import ShoeConfig

    _log_to_stderr(args.verbose)
    settings: dict[str, Any] = {"driver": args.protocol, "name": "shoe-monitor",
                                "baudrate": args.baudrate}
    if args.port is not None:
        settings["port"] = args.port
    if args.vendor_id is not None:
        settings["vendor_id"] = args.vendor_id
    if args.product_id is not None:
        settings["product_id"] = args.product_id
    try:
        config = ShoeConfig(**settings)
    except ValidationError as exc:
        print(f"shoe-monitor: {exc}", file=sys.stderr)
        return 2
    driver = open_shoe(config)
    with driver:
        return monitor(driver, sys.stdout, as_json=args.json, count=args.count,
                       timeout=args.timeout, heartbeats=args.heartbeats)


def monitor(driver: Any, out: TextIO, *, as_json: bool = False, count: int | None = None,
            timeout: float | None = None, heartbeats: bool = False) -> int:
    """Print events from a started shoe driver until ``count`` device events or ``timeout``.

    Returns 0, or 1 if a ``count`` was asked for and not reached in time.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    seen = 0
    while count is None or seen < count:
        wait = 0.2 if deadline is None else deadline - time.monotonic()
        if wait <= 0:
            break
        event: ShoeEvent | None = driver.get_event(timeout=min(wait, 0.2))
        if event is None:
            continue
        if isinstance(event, Heartbeat) and not heartbeats:
            continue
        if isinstance(event, DEVICE_EVENTS) and not isinstance(event, Heartbeat):
            seen += 1
        line = json.dumps(event_record(event)) if as_json else describe(event)
        out.write(line + "\n")
        out.flush()
    return 1 if count is not None and seen < count else 0


def _log_to_stderr(verbose: bool) -> None:
    """Keep stdout for events: the driver's structured log goes to stderr."""
    import logging

    structlog.configure(
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.DEBUG if verbose else logging.WARNING),
    )

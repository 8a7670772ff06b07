"""The USB shoe driver: interrupt reports read with pyusb, vendor control-transfer ACK.

pyusb is imported here only, so a serial-only table never needs it. The backend is a
constructor argument (default: whatever pyusb finds, libusb in practice); tests pass the
simulated shoe of :mod:`simulators.usb_backend`, so pyusb's real code path runs.

Unplug: any USB error other than a read timeout means the device is gone; the base class
reports :class:`~drivers.shoe_events.ShoeLost` and re-finds the device with backoff.

Waiting: a read waits for a report until the shoe's silence deadline, but never longer than
``read_timeout_ms``: a synchronous libusb transfer cannot be interrupted from another thread,
so that bound is how long :meth:`stop` can take, and an idle USB shoe's thread wakes that
often (4 times a second by default) besides the shoe's own heartbeats.
"""

from __future__ import annotations

import errno
import math
from collections.abc import Sequence
from typing import Any

import usb.core
import usb.util

from drivers.base import DeviceUnavailable
from drivers.config import ShoeConfig
from drivers.shoe import CONFLICT, Garbled, Inbound, Message, ShoeDriver
from drivers.shoe_events import FrameRejected
from drivers.usb_report import (
    ACK_REQUEST,
    ACK_REQUEST_TYPE,
    MAX_REPORT_SIZE,
    REFUSE_CONFLICT,
    REFUSE_REQUEST,
    REPORT_ENDPOINT,
    ReportError,
    decode_to_event,
    report_sequence,
)


def _is_timeout(exc: usb.core.USBError) -> bool:
    return isinstance(exc, usb.core.USBTimeoutError) or exc.errno == errno.ETIMEDOUT


class UsbShoe(ShoeDriver):
    """A shoe on USB (config ``driver = "usb"``, ``vendor_id`` / ``product_id``)."""

    protocol = "usb"

    def __init__(self, config: ShoeConfig, *, backend: Any = None, **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        self._backend = backend
        self._device: Any = None

    def _connect(self) -> None:
        ids = f"{self.config.vendor_id:04x}:{self.config.product_id:04x}"
        try:
            device = usb.core.find(idVendor=self.config.vendor_id,
                                   idProduct=self.config.product_id, backend=self._backend)
        except (usb.core.USBError, usb.core.NoBackendError) as exc:
            raise DeviceUnavailable(f"cannot look for USB shoe {ids}: {exc}") from exc
        if device is None:
            raise DeviceUnavailable(f"no USB shoe {ids} found")
        try:
            device.set_configuration()
            usb.util.claim_interface(device, 0)
        except usb.core.USBError as exc:
            usb.util.dispose_resources(device)
            raise DeviceUnavailable(f"cannot open USB shoe {ids}: {exc}") from exc
        self._device = device

    def _disconnect(self) -> None:
        device, self._device = self._device, None
        if device is not None:
            usb.util.dispose_resources(device)

    def _receive(self, timeout: float | None) -> Sequence[Inbound]:
        device = self._device
        if device is None:
            raise DeviceUnavailable("USB shoe is not open")
        wait_ms = self.config.read_timeout_ms
        if timeout is not None:
            # at least 1 ms: to libusb a timeout of 0 means "wait for ever"
            wait_ms = max(1, min(wait_ms, math.ceil(timeout * 1000)))
        try:
            report = bytes(device.read(REPORT_ENDPOINT, MAX_REPORT_SIZE, timeout=wait_ms))
        except usb.core.USBError as exc:
            if _is_timeout(exc):
                return []
            raise DeviceUnavailable(f"USB shoe gone: {exc}") from exc
        try:
            seq = report_sequence(report)
        except ReportError as exc:
            return [Garbled(FrameRejected(str(exc), report))]
        # An intact report of an unknown kind is still acknowledged: it arrived whole, and
        # asking again would only bring the same bytes back.
        return [Message(seq, decode_to_event(report), report.hex())]

    def _send_ack(self, seq: int) -> None:
        self._control(ACK_REQUEST, seq, 0, "acknowledging")

    def _send_nak(self, seq: int, code: str) -> None:
        # A USB report arrives whole or not at all, so the only refusal is a conflict.
        if code == CONFLICT:
            self._control(REFUSE_REQUEST, seq, REFUSE_CONFLICT, "refusing")

    def _control(self, request: int, seq: int, index: int, doing: str) -> None:
        device = self._device
        if device is None:
            raise DeviceUnavailable("USB shoe is not open")
        try:
            device.ctrl_transfer(ACK_REQUEST_TYPE, request, seq, index, None,
                                 timeout=self.config.ack_timeout_ms)
        except usb.core.USBError as exc:
            if _is_timeout(exc):
                # The shoe will retransmit and we will answer again.
                self.log.warning(f"USB {doing} timed out", seq=seq)
                return
            raise DeviceUnavailable(f"USB shoe gone while {doing}: {exc}") from exc

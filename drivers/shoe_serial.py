"""The LBS1 serial shoe driver: pyserial I/O around the pure :mod:`drivers.lbs1` codec."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import serial

from drivers.base import DeviceUnavailable, open_serial_port
from drivers.config import ShoeConfig
from drivers.lbs1 import (
    Frame,
    FrameContentError,
    FrameError,
    FrameParser,
    encode_frame,
    frame_to_event,
)
from drivers.shoe import Garbled, Inbound, Message, ShoeDriver
from drivers.shoe_events import FrameRejected


def frame_to_inbound(item: Frame | FrameError) -> Inbound:
    """Parser output -> what the shoe rules act on (pure; shared with the session recorder)."""
    if isinstance(item, FrameError):
        return Garbled(FrameRejected(item.reason, item.raw), item.seq, item.nak_code)
    try:
        event = frame_to_event(item)
    except FrameContentError as exc:
        event = FrameRejected(str(exc), item.encode())
    return Message(item.seq, event, item.type + item.payload)


class HostFrames:
    """The host's outgoing frames, with their own SEQ counter (wrapping FF -> 00)."""

    def __init__(self) -> None:
        self._seq = 0

    def _next(self, type_: str, payload: str = "") -> bytes:
        frame = encode_frame(self._seq, type_, payload)
        self._seq = (self._seq + 1) & 0xFF
        return frame

    def ack(self, seq: int) -> bytes:
        return self._next("A", f"{seq:02X}")

    def nak(self, seq: int, code: str) -> bytes:
        return self._next("N", f"{seq:02X},{code}")

    def query(self) -> bytes:
        return self._next("Q")

    def reset(self) -> bytes:
        return self._next("R")


class SerialShoe(ShoeDriver):
    """A shoe speaking LBS1 on any port pyserial can open (config ``driver = "lbs1"``)."""

    protocol = "lbs1"

    def __init__(self, config: ShoeConfig, **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        self._port: serial.SerialBase | None = None
        self._parser = FrameParser()
        self._host = HostFrames()

    def _connect(self) -> None:
        assert self.config.port is not None
        self._port = open_serial_port(self.config.port, baudrate=self.config.baudrate)
        self._parser = FrameParser()

    def _receive(self, timeout: float | None) -> Sequence[Inbound]:
        port = self._port
        if port is None:
            raise DeviceUnavailable("port is closed")
        quiet = self.config.read_timeout_ms / 1000
        noise = self._parser.has_noise
        if noise:
            # Stray bytes wait for an STX; if the line stays quiet this long, report them.
            timeout = quiet if timeout is None else min(timeout, quiet)
        data = b""
        if self._wait_port(port, timeout):
            data = self._read_available(port)
        if data:
            items = self._parser.feed(data)
        elif noise and not self._stopping.is_set():
            items = list(self._parser.flush())
        else:
            items = []
        return [frame_to_inbound(item) for item in items]

    def _send(self, make: Callable[[], bytes]) -> None:
        """Build and write one host frame under the write lock, so SEQs go out in order."""
        with self._write_lock:
            port = self._port
            if port is None:
                raise DeviceUnavailable(f"{self.port_label} is not open")
            frame = make()
            try:
                port.write(frame)
            except (serial.SerialException, OSError) as exc:
                raise DeviceUnavailable(f"write to {self.port_label} failed: {exc}") from exc

    def _send_ack(self, seq: int) -> None:
        self._send(lambda: self._host.ack(seq))

    def _send_nak(self, seq: int, code: str) -> None:
        self._send(lambda: self._host.nak(seq, code))

    # -- commands from the table -------------------------------------------------------

    def request_status(self) -> None:
        """Send ``Q``; the shoe answers with a status frame (a :class:`ShoeStatus` event)."""
        self._command(self._host.query)

    def reset(self) -> None:
        """Send ``R``: the shoe clears its fault and reports its status."""
        self._command(self._host.reset)

    def _command(self, make: Callable[[], bytes]) -> None:
        try:
            self._send(make)
        except DeviceUnavailable as exc:
            self.log.warning("shoe command not sent", reason=str(exc))
            raise

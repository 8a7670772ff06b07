"""A simulated Alpha LED sign as a pure byte machine: it shows what it is told.

It answers nothing (Alpha signs do not acknowledge broadcast writes); it keeps every text it
was written with the time, and every packet it could not accept with the reason.
"""

from __future__ import annotations

from collections.abc import Callable

from drivers.alpha import PacketError, PacketParser, TextWrite


class AlphaSignModel:
    def __init__(self, *, type_code: str = "Z", address: str = "00",
                 on_write: Callable[[str], None] | None = None) -> None:
        self.type_code, self.address = type_code, address
        self.text: str | None = None
        self.writes: list[tuple[float, str]] = []
        self.errors: list[str] = []
        self.on_write = on_write
        self._parser = PacketParser()

    def receive(self, data: bytes, now: float) -> None:
        for item in self._parser.feed(data):
            if isinstance(item, PacketError):
                self.errors.append(item.reason)
                continue
            assert isinstance(item, TextWrite)
            if item.type_code not in ("Z", self.type_code) or \
                    item.address not in ("00", self.address):
                continue  # addressed to another sign
            self.text = item.text
            self.writes.append((now, item.text))
            if self.on_write is not None:
                self.on_write(item.text)

    def poll(self, now: float) -> bytes:
        return b""

"""Splitting an ASCII line protocol into lines: pure, bounded, never raises on input."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LineError:
    reason: str
    raw: bytes


class LineSplitter:
    """Bytes in, lines out. Lines end in ``\\r\\n`` (a bare ``\\n`` is accepted too).

    A line longer than ``max_line`` bytes, or holding bytes outside printable ASCII, is
    rejected with a reason, and the next line still comes through.
    """

    def __init__(self, max_line: int = 80) -> None:
        self.max_line = max_line
        self._buffer = bytearray()
        self._overflowed = False

    def feed(self, data: bytes) -> list[str | LineError]:
        out: list[str | LineError] = []
        for byte in data:
            if byte == 0x0A:  # LF ends a line; a CR before it is part of the terminator
                line = bytes(self._buffer).removesuffix(b"\r")
                self._buffer.clear()
                if self._overflowed:
                    self._overflowed = False
                    continue
                if not all(0x20 <= b <= 0x7E for b in line):
                    out.append(LineError(f"line {line!r} has bytes outside printable ASCII",
                                         line))
                elif line:
                    out.append(line.decode("ascii"))
                continue
            if self._overflowed:
                continue
            self._buffer.append(byte)
            if len(self._buffer) > self.max_line:
                out.append(LineError(f"line longer than {self.max_line} bytes",
                                     bytes(self._buffer)))
                self._buffer.clear()
                self._overflowed = True
        return out

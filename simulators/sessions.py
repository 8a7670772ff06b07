"""Recorded shoe sessions: the file format, and a model that plays one back onto a port.

A session file (``tests/data/*.lbs1.log``) holds the bytes exactly as they crossed the wire,
gpsd-style: ``#`` header lines giving line settings and provenance, then one line per
transmission::

    # Serial: 115200 8N1
    # Source: simulators/recorder.py session clean-deal, seed 7
    0.000 S 023030433...     <- seconds, direction (S shoe->host, H host->shoe), hex bytes

Beside it, ``<name>.chk`` holds the events the host must decode from the ``S`` bytes, one
JSON object per line in the ``shoe-monitor --json`` shape.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SHOE_TO_HOST = "S"
HOST_TO_SHOE = "H"


@dataclass(frozen=True, slots=True)
class Transmission:
    time_s: float
    direction: str
    data: bytes


@dataclass(slots=True)
class SessionLog:
    header: list[str] = field(default_factory=list)
    records: list[Transmission] = field(default_factory=list)

    def shoe_bytes(self) -> bytes:
        return b"".join(r.data for r in self.records if r.direction == SHOE_TO_HOST)

    def host_bytes(self) -> bytes:
        return b"".join(r.data for r in self.records if r.direction == HOST_TO_SHOE)

    def dumps(self) -> str:
        lines = [f"# {line}" if line else "#" for line in self.header]
        lines += [f"{r.time_s:.3f} {r.direction} {r.data.hex().upper()}" for r in self.records]
        return "\n".join(lines) + "\n"

    @classmethod
    def loads(cls, text: str, source: str = "session") -> SessionLog:
        log = cls()
        for number, line in enumerate(text.splitlines(), 1):
            if line.startswith("#"):
                log.header.append(line[1:].strip())
                continue
            if not line.strip():
                continue
            try:
                time_text, direction, hex_text = line.split()
                if direction not in (SHOE_TO_HOST, HOST_TO_SHOE):
                    raise ValueError(f"direction {direction!r} is not S or H")
                log.records.append(Transmission(float(time_text), direction,
                                                bytes.fromhex(hex_text)))
            except ValueError as exc:
                raise ValueError(f"{source}:{number}: bad record {line!r}: {exc}") from None
        return log

    @classmethod
    def load(cls, path: Path) -> SessionLog:
        return cls.loads(path.read_text(encoding="ascii"), str(path))

    def header_value(self, key: str) -> str | None:
        prefix = key.lower() + ":"
        for line in self.header:
            if line.lower().startswith(prefix):
                return line[len(prefix):].strip()
        return None


def load_expected(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def dump_expected(events: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(event, sort_keys=True) + "\n" for event in events)


class ReplayModel:
    """A byte machine that says a recording's shoe bytes once :meth:`play` is called (after the
    driver has opened its port: a tty drops what arrived before it was opened), and keeps what
    the host answered for comparison with the recording."""

    def __init__(self, log: SessionLog) -> None:
        self._data = log.shoe_bytes()
        self._playing = False
        self.host_bytes = bytearray()

    def play(self) -> None:
        self._playing = True

    def receive(self, data: bytes, now: float) -> None:
        self.host_bytes += data

    def poll(self, now: float) -> bytes:
        if not self._playing:
            return b""
        data, self._data = self._data, b""
        return data

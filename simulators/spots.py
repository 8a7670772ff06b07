"""A simulated spot controller as a pure byte machine (docs/protocols.md section 3).

Lamps and wager sensors for spots 1-7. Tests cover and uncover sensors (unsolicited
``S <spot> <0|1>``), make it ignore commands (the host retries, then calls it lost) or refuse
them, and read back the lamp each spot shows.
"""

from __future__ import annotations

from collections import deque

from drivers.lines import LineError, LineSplitter
from drivers.spots import Color, Lamp, Mode


class SpotControllerModel:
    def __init__(self, spots: int = 7) -> None:
        self.spots = spots
        self.lamps: dict[int, Lamp] = {spot: Lamp(Color.OFF) for spot in range(1, spots + 1)}
        self.sensors: dict[int, bool] = {spot: False for spot in range(1, spots + 1)}
        self.commands: list[str] = []
        self._splitter = LineSplitter()
        self._out: deque[bytes] = deque()
        self._ignore = 0
        self._refuse: deque[str] = deque()
        self.silent = False

    # -- the felt ---------------------------------------------------------------------

    def cover(self, spot: int) -> None:
        """A chip lands on ``spot``'s wager sensor."""
        self._sensor(spot, True)

    def uncover(self, spot: int) -> None:
        self._sensor(spot, False)

    def _sensor(self, spot: int, covered: bool) -> None:
        if spot not in self.sensors:
            raise ValueError(f"no spot {spot}")
        if self.sensors[spot] != covered:
            self.sensors[spot] = covered
            self._say(f"S {spot} {int(covered)}")

    # -- faults -------------------------------------------------------------------------

    def ignore_commands(self, count: int = 1) -> None:
        """Say nothing to the next ``count`` commands (the host must retry)."""
        self._ignore += count

    def refuse_next(self, code: str = "BUSY") -> None:
        self._refuse.append(code)

    def go_silent(self) -> None:
        self.silent = True

    def resume(self) -> None:
        self.silent = False

    def send_raw(self, data: bytes) -> None:
        """Put ``data`` on the line as is (garbage injection)."""
        self._out.append(bytes(data))

    # -- bytes ------------------------------------------------------------------------

    def receive(self, data: bytes, now: float) -> None:
        for line in self._splitter.feed(data):
            if isinstance(line, LineError):
                self._reply_unless_ignored("ERR SYNTAX")
                continue
            self.commands.append(line)
            if self.silent:
                continue
            if self._ignore:
                self._ignore -= 1
                continue
            if self._refuse:
                self._say(f"ERR {self._refuse.popleft()}")
                continue
            self._say(self._execute(line.split()))

    def _reply_unless_ignored(self, text: str) -> None:
        if not self.silent:
            self._say(text)

    def _execute(self, words: list[str]) -> str:
        if words == ["P"]:
            return "OK"
        if len(words) == 2 and words[0] == "Q":
            spot = self._spot(words[1], allow_all=False)
            if spot is None:
                return "ERR SPOT"
            self._say(f"S {spot} {int(self.sensors[spot])}")
            return "OK"
        if len(words) == 4 and words[0] == "L":
            spot = self._spot(words[1], allow_all=True)
            if spot is None:
                return "ERR SPOT"
            if words[2] not in Color.__members__:
                return "ERR COLOR"
            if words[3] not in Mode.__members__:
                return "ERR MODE"
            lamp = Lamp(Color(words[2]), Mode(words[3]))
            for target in (self.lamps if spot == 0 else [spot]):
                self.lamps[target] = lamp
            return "OK"
        return "ERR SYNTAX"

    def _spot(self, text: str, *, allow_all: bool) -> int | None:
        if not text.isdigit():
            return None
        spot = int(text)
        if spot == 0 and allow_all:
            return 0
        return spot if 1 <= spot <= self.spots else None

    def _say(self, line: str) -> None:
        self._out.append(line.encode("ascii") + b"\r\n")

    def poll(self, now: float) -> bytes:
        if self.silent:
            return b""
        out = b"".join(self._out)
        self._out.clear()
        return out

"""The ASCII spot-controller protocol (docs/protocols.md section 3), config ``spots-ascii``."""

from __future__ import annotations

import re

from drivers.spots import Lamp, Reply, SpotControllerDriver, WagerSensor

_SENSOR = re.compile(r"S ([0-7]) ([01])")
_ERR = re.compile(r"ERR (\S{1,16})")


def decode_line(line: str) -> Reply | WagerSensor:
    """``OK``, ``ERR <code>`` or ``S <spot> <0|1>``; ValueError naming the line otherwise."""
    if line == "OK":
        return Reply()
    match = _ERR.fullmatch(line)
    if match:
        return Reply(match.group(1))
    match = _SENSOR.fullmatch(line)
    if match:
        spot = int(match.group(1))
        if spot == 0:
            raise ValueError(f"sensor report {line!r} names spot 0; sensors are spots 1-7")
        return WagerSensor(spot, match.group(2) == "1")
    raise ValueError(f"unexpected line from spot controller: {line!r} "
                     "(expected OK, ERR <code> or S <spot> <0|1>)")


class AsciiSpotController(SpotControllerDriver):
    protocol = "spots-ascii"

    def _encode_lamp(self, spot: int, lamp: Lamp) -> bytes:
        return f"L {spot} {lamp.color.value} {lamp.mode.value}\r\n".encode("ascii")

    def _encode_ping(self) -> bytes:
        return b"P\r\n"

    def _encode_query(self, spot: int) -> bytes:
        return f"Q {spot}\r\n".encode("ascii")

    def _decode_line(self, line: str) -> Reply | WagerSensor:
        return decode_line(line)

"""``einval://``: a port that opens and then cannot be configured, as a pty whose number was
reused fails in ``tcsetattr`` with ``termios.error`` EINVAL (pyserial lets that error through
its ``open``, unlike the ENOTTY of ``tcgetattr``, which it wraps)."""

from __future__ import annotations

import errno
import termios

from serial.serialutil import SerialBase


class Serial(SerialBase):  # type: ignore[misc]  # pyserial has no type hints
    def open(self) -> None:
        raise termios.error(errno.EINVAL, "Invalid argument")

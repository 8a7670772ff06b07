"""The unit files' tests: the paths, a notify socket as systemd opens one, the tools they need."""

from __future__ import annotations

import os
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.waits import DEADLINE_S


ROOT = Path(__file__).resolve().parents[2]


SYSTEMD_DIR = ROOT / "systemd"


UNIT = SYSTEMD_DIR / "lowball-table.service"




@dataclass
class NotifySocket:
    """The receiving end of ``NOTIFY_SOCKET``, as systemd would hold it."""

    sock: socket.socket
    env_value: str  # what goes into NOTIFY_SOCKET: a path, or "@name" for the abstract namespace

    def receive(self) -> bytes:
        """The next datagram; fails (socket.timeout) if none arrives within the deadline."""
        self.sock.settimeout(DEADLINE_S)
        return self.sock.recv(4096)

    def pending(self) -> list[bytes]:
        """Every datagram already queued, without waiting."""
        self.sock.setblocking(False)
        datagrams = []
        try:
            while True:
                datagrams.append(self.sock.recv(4096))
        except BlockingIOError:
            return datagrams


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require_tool(name: str) -> str:
    """The path of a systemd tool; skip without it on a workstation, fail without it in CI.

    A skipped check in CI is a check that silently never runs, so under CI a missing tool is
    an error telling how to install it (``make deps`` does).
    """
    path = shutil.which(name)
    if path is not None:
        return path
    message = (f"{name} not found; install it with `apt-get install --no-install-recommends "
               f"systemd` (or `make deps` as root)")
    if in_ci():
        pytest.fail(f"{message}; CI must run the systemd checks")
    pytest.skip(message)

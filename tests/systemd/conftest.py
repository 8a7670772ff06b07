"""Fixtures for the systemd tests: notify sockets to receive on, and required systemd tools.

A notify datagram is queued in the receiving socket by the time ``sendto`` returns, so tests
read what was sent without waiting; a socket timeout is only a deadline for failure.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SYSTEMD_DIR = ROOT / "systemd"
UNIT = SYSTEMD_DIR / "lowball-table.service"
DEADLINE_S = 10.0


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


@pytest.fixture
def path_socket(monkeypatch: pytest.MonkeyPatch) -> Iterator[NotifySocket]:
    """A datagram socket bound to a file path, with NOTIFY_SOCKET pointing at it.

    The directory comes from ``tempfile`` rather than ``tmp_path``: an AF_UNIX path is limited
    to 107 bytes, and pytest's per-test directories (named after the test) can exceed it.
    """
    directory = tempfile.mkdtemp(prefix="lbt-notify-")
    path = os.path.join(directory, "notify")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    try:
        yield NotifySocket(sock, path)
    finally:
        sock.close()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def abstract_socket(monkeypatch: pytest.MonkeyPatch) -> Iterator[NotifySocket]:
    """A datagram socket in the abstract namespace (``@name``), as systemd's manager uses."""
    name = f"lowball-table-test-{uuid.uuid4().hex}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    monkeypatch.setenv("NOTIFY_SOCKET", "@" + name)
    try:
        yield NotifySocket(sock, "@" + name)
    finally:
        sock.close()


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

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

import pytest

from tests.support.systemd import NotifySocket


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

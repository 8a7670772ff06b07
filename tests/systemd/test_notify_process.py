"""A real process under a fake systemd: READY=1 once up, STOPPING=1 on SIGTERM.

The receiving socket asks the kernel for the sender's credentials (SO_PASSCRED), as systemd
does to enforce NotifyAccess=main: the messages must come from the process systemd started.
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import subprocess
import sys
import textwrap

from tests.support.systemd import ROOT, NotifySocket
from tests.support.waits import DEADLINE_S

# Blocks SIGTERM before announcing READY and then waits for it with sigwait, so the signal can
# neither arrive before the program is ready for it nor be lost between a check and a pause.
PROGRAM = textwrap.dedent("""
    import signal
    from controller.daemon.systemd_notify import Notifier

    notifier = Notifier.from_environment()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    notifier.ready(status="waiting for SIGTERM")
    signal.sigwait({signal.SIGTERM})
    notifier.stopping()
""")

_UCRED = struct.Struct("iII")  # struct ucred: pid, uid, gid


def receive_with_sender(notify: NotifySocket) -> tuple[bytes, int]:
    """One datagram and the pid of the process that sent it."""
    notify.sock.settimeout(DEADLINE_S)  # a failure deadline only: the send is already queued
    data, ancillary, _flags, _address = notify.sock.recvmsg(4096, socket.CMSG_SPACE(_UCRED.size))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
            pid, _uid, _gid = _UCRED.unpack(payload[:_UCRED.size])
            return data, pid
    raise AssertionError(f"no sender credentials with {data!r}")


def test_ready_then_stopping_on_sigterm(path_socket: NotifySocket) -> None:
    path_socket.sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    env = {**os.environ, "NOTIFY_SOCKET": path_socket.env_value}
    process = subprocess.Popen([sys.executable, "-c", PROGRAM], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert receive_with_sender(path_socket) == (
            b"READY=1\nSTATUS=waiting for SIGTERM", process.pid)
        process.send_signal(signal.SIGTERM)
        assert receive_with_sender(path_socket) == (b"STOPPING=1", process.pid)
        _out, err = process.communicate(timeout=DEADLINE_S)
        assert process.returncode == 0, err.decode()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert path_socket.pending() == []


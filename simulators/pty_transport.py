"""A simulated device on a pseudo-terminal: the driver opens the slave path as a real tty.

The URL handed out is a symlink in a private temporary directory pointing at the current
slave (``/dev/pts/N``), so that :meth:`disconnect` / :meth:`reconnect` can give the driver a
fresh pty at the *same* path, as a USB-serial adapter comes back as the same ``/dev/ttyUSB0``.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
import tty
from typing import Any

from simulators.transport import M, SerialTransport


class PtyTransport(SerialTransport[M]):
    def __init__(self, model: M, *, name: str = "device", **kwargs: Any) -> None:
        super().__init__(model, name=name, **kwargs)
        self._dir = tempfile.mkdtemp(prefix=f"lowball-sim-{name}-")
        self._link = os.path.join(self._dir, name)
        self._master: int | None = None
        self._slave: int | None = None
        self._open_pty()

    @property
    def url(self) -> str:
        return self._link

    def _open_pty(self) -> None:
        master, slave = os.openpty()
        # Raw at once: with the default line discipline the slave would echo our own output
        # back to us before the driver has even opened it.
        tty.setraw(slave)
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        tmp = self._link + ".new"
        os.symlink(os.ttyname(slave), tmp)
        os.replace(tmp, self._link)

    def _stream_fd(self) -> int | None:
        return self._master

    def _read_stream(self) -> bytes:
        assert self._master is not None
        try:
            return os.read(self._master, 4096)
        except BlockingIOError:
            return b""
        except OSError as exc:
            if exc.errno == errno.EIO:  # no slave open: nothing to read
                return b""
            raise

    def _write_stream(self, data: bytes) -> int:
        assert self._master is not None
        try:
            return os.write(self._master, data)
        except BlockingIOError:
            return 0

    def _unplug(self) -> None:
        self._close_fds()

    def _replug(self) -> None:
        if self._master is None:
            self._open_pty()

    def _close_fds(self) -> None:
        for fd in (self._master, self._slave):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._master = self._slave = None

    def _close_stream(self) -> None:
        with self.lock:
            self._close_fds()
        shutil.rmtree(self._dir, ignore_errors=True)

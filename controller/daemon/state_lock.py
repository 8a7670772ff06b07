"""One daemon per state directory: an exclusive ``flock`` on ``<state dir>/daemon.lock``.

The daemon takes the lock before it opens the journal, binds a socket or opens a device, and
holds it for its whole life (the kernel drops it when the process ends, however it ends, so a
crash never leaves a stale lock). The file holds the holder's pid, for the message a second
daemon gives before it exits without touching anything.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from controller.errors import LowballError

LOCK_FILE = "daemon.lock"


class StateDirLocked(LowballError, RuntimeError):
    """Another daemon holds the state directory."""


class StateLock:
    """The held lock; :meth:`release` (or the end of the process) lets it go."""

    def __init__(self, state_dir: Path):
        self.path = Path(state_dir) / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise :class:`StateDirLocked` naming the holder's pid.
        :class:`OSError` if the directory cannot be created or the file opened."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o640)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise StateDirLocked(
                f"another daemon (pid {holder}) runs on the state directory "
                f"{self.path.parent}: stop it first, or give this one its own state "
                f"directory") from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        self._fd = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the descriptor drops the flock

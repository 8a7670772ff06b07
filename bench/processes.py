"""Stopping a child process the benchmarks or the tests started."""

from __future__ import annotations

import subprocess
from typing import Any


def stop(process: subprocess.Popen[Any], deadline_s: float) -> int:
    """Ask ``process`` to stop (SIGTERM) and wait for it; SIGKILL it if it is still there after
    ``deadline_s`` (blocked, say, writing a log no one reads). Its exit status."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(deadline_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode

"""The daemon on one CPU and the bench on another, for comparisons that move by some 5 % from
run to run instead of 15 % (the machine's two cores otherwise share the daemon's threads, the
simulated devices and the dealer as the scheduler likes, and each run's caches differ).

Loaded by path (``runpy.run_path``) into either tree's process, like
:mod:`bench.plain_requests`, so it imports nothing of the tree it runs in.
"""

from __future__ import annotations

import os
from typing import Any


def pin(pid: int, cpu: int) -> None:
    """Every thread of process ``pid`` onto ``cpu`` (a thread's affinity is its own)."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            os.sched_setaffinity(int(tid), {cpu})
        except OSError:  # a thread that ended meanwhile
            continue


def install(pipeline: Any) -> None:
    """Make every ``pipeline.DaemonProcess`` (of whichever tree), once started, run on the
    last CPU, and this process on the first."""
    started = pipeline.DaemonProcess.__init__

    def start_pinned(self: Any, *args: Any, **kwargs: Any) -> None:
        started(self, *args, **kwargs)
        cpus = sorted(os.sched_getaffinity(0))
        pin(self.process.pid, cpus[-1])
        pin(os.getpid(), cpus[0])

    pipeline.DaemonProcess.__init__ = start_pinned

"""The daemon's CPU per input, thread by thread.

``python -m bench.daemon_cpu [--hands N]`` deals N one-spot Cali LowBall hands through the
daemon process over the simulators (``--durability batched``: the software's own cost, not
the disk's), after 20 to warm up, and prints each thread's user and system CPU per input,
read from ``/proc/PID/task/*/stat`` before and after: the main thread (the loop: table,
journal, stream) apart from the device threads and ZeroMQ's I/O thread. To compare two
trees, run this file alternately with each tree's venv and the tree on ``PYTHONPATH`` (it
uses only ``bench.pipeline``, which older trees have) and ``--plain-requests`` (the same
requests to both: :mod:`bench.plain_requests`) and ``--pin``; the figures move by some 15 %
from run to run (5 % pinned), so compare the medians of many alternations.
"""

from __future__ import annotations

import argparse
import os
import runpy
from pathlib import Path
from typing import Any

from bench import pipeline


def _threads(pid: int) -> dict[int, tuple[str, int, int]]:
    """Each thread of ``pid``: its name, user and system CPU in clock ticks."""
    found = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/task/{tid}/comm") as comm:
                name = comm.read().strip()
        except OSError:  # a thread that ended meanwhile
            continue
        found[int(tid)] = (name, int(fields[11]), int(fields[12]))
    return found


def _loaded(name: str) -> dict[str, Any]:
    """A module of this folder loaded by path (it runs in an older tree's process too)."""
    return runpy.run_path(str(Path(__file__).with_name(name)))


def measure(hands: int, pin: bool = False) -> tuple[float, list[tuple[int, str, float, float]]]:
    """Hands per second, and (thread, name, user µs, system µs) per input of each thread.
    ``pin``: the daemon on the last CPU, this process (the simulated devices, the dealer) on
    the first: each keeps its caches, and runs move by some 5 % instead of 15 %."""
    daemon = pipeline.DaemonProcess("cali_lowball", "batched")
    dealer = pipeline.StreamedDealer(daemon, seats=(1,))
    try:
        assert daemon.ask({"command": "open"})["ok"]
        if pin:
            cpus, pin_to = sorted(os.sched_getaffinity(0)), _loaded("pinning.py")["pin"]
            pin_to(daemon.process.pid, cpus[-1])
            pin_to(os.getpid(), cpus[0])
        for _ in range(20):
            dealer.hand()
        dealer.cards = dealer.inputs = 0
        pid = daemon.process.pid
        before = _threads(pid)
        _, elapsed = pipeline.timed_hands(dealer, hands=hands)
        after = _threads(pid)
        per_input = 1_000_000 / pipeline.CLK_TCK / dealer.inputs
        rows = [(tid - pid, name, (user - before.get(tid, (name, 0, 0))[1]) * per_input,
                 (system - before.get(tid, (name, 0, 0))[2]) * per_input)
                for tid, (name, user, system) in sorted(after.items())]
        return hands / elapsed, rows
    finally:
        daemon.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--hands", type=int, default=1000, choices=range(50, 100_001),
                        metavar="50-100000")
    parser.add_argument("--plain-requests", action="store_true",
                        help="commands without request_id, as a tree older than it sent them")
    parser.add_argument("--pin", action="store_true",
                        help="the daemon on the last CPU, the bench on the first")
    args = parser.parse_args(argv)
    if args.plain_requests:
        _loaded("plain_requests.py")["install"](pipeline)
    rate, rows = measure(args.hands, pin=args.pin)
    print(f"{args.hands:,} one-spot Cali LowBall hands, {rate:.0f} hands/s; CPU per input: "
          f"{sum(user + system for _, _, user, system in rows):.0f} µs")
    for offset, name, user, system in rows:
        if user + system >= 1:
            label = "main thread" if offset == 0 else f"thread +{offset} ({name})"
            print(f"  {label:28s} user {user:6.1f} µs  system {system:6.1f} µs")


if __name__ == "__main__":
    main()

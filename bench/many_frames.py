"""One ZeroMQ message of very many small frames, sent to the daemon's sockets from outside.

``MAXMSGSIZE`` bounds each frame, not how many a message has; and ZeroMQ delivers a message
whole (a reader sees none of it before its last frame has arrived), so a message's frames are
all held in the daemon's memory before it reads the first. For the command socket and the
replay socket of a real daemon process (``lowball-table run`` on the simulators), a hostile
client (its own process) sends one message of ``--frames`` empty frames then its request;
reported:

* the daemon's resident memory before, its peak (``VmHWM``) and after;
* how long until another client's ``status`` is answered (the loop's stall), and whether the
  hostile client was answered and with how many frames.

``python -m bench.many_frames [--frames N] [--messages M] [--socket commands|replay|both]``
(one message of 1,000,000 frames by default; M of them back to back show what libzmq holds
while a client sends faster than the daemon reads).
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from typing import Any

import zmq

from bench.pipeline import DaemonProcess


def _memory(pid: int) -> dict[str, int]:
    """The process's resident memory now and its peak, in KiB."""
    fields = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0])
    return fields


def _hostile(endpoint: str, frames: int, request: bytes, results: Any, messages: int = 1
             ) -> None:
    context = zmq.Context()
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.LINGER, 0)
    socket.setsockopt(zmq.SNDHWM, 0)
    socket.connect(endpoint)
    start = time.perf_counter()
    for _ in range(messages):
        for _ in range(frames):
            socket.send(b"", zmq.SNDMORE)
        socket.send(request)
    sent = time.perf_counter() - start
    answer: dict[str, Any] = {"sent_s": sent}
    for _ in range(messages):
        if not socket.poll(120_000):
            break
        reply = socket.recv_multipart()
        answer.update(reply_frames=len(reply), last=reply[-1][:200].decode("utf-8", "replace"),
                      answered_s=time.perf_counter() - start)
    results.put(answer)
    context.destroy(linger=0)


def measure(frames: int, which: str, messages: int = 1) -> dict[str, Any]:
    daemon = DaemonProcess()
    try:
        endpoint = daemon.endpoint if which == "commands" else daemon.replay_endpoint
        request = b'{"command": "status"}' if which == "commands" else \
            b'{"after": 0, "limit": 1}'
        daemon.ask({"command": "status"})
        before = _memory(daemon.process.pid)
        results: Any = multiprocessing.Queue()
        hostile = multiprocessing.Process(target=_hostile,
                                          args=(endpoint, frames, request, results, messages))
        start = time.perf_counter()
        hostile.start()
        # another client's status, asked again and again while the message arrives: the
        # slowest answer is the loop's stall
        slowest, asked = 0.0, 0
        while hostile.is_alive() and time.perf_counter() - start < 300:
            began = time.perf_counter()
            daemon.ask({"command": "status"}, timeout_s=60)
            slowest, asked = max(slowest, time.perf_counter() - began), asked + 1
        hostile.join(300)
        after = _memory(daemon.process.pid)
        answer = results.get(timeout=5) if not results.empty() else {}
        return {"socket": which, "frames": frames, "messages": messages, "rss_before_kib": before["VmRSS"],
                "peak_kib": after["VmHWM"], "rss_after_kib": after["VmRSS"],
                "slowest_status_s": round(slowest, 3), "statuses": asked,
                "alive": daemon.process.poll() is None, **answer}
    finally:
        daemon.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--messages", type=int, default=1,
                        help="such messages sent back to back (what libzmq holds at once)")
    parser.add_argument("--socket", choices=("commands", "replay", "both"), default="both")
    args = parser.parse_args()
    for which in ("commands", "replay") if args.socket == "both" else (args.socket,):
        print(measure(args.frames, which, args.messages), flush=True)


if __name__ == "__main__":
    main()

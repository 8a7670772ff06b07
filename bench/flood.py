"""A command flood against the daemon process, while the dealer deals: what it costs the shoe.

One client (its own process) pipelines ``--commands`` junk commands (80,000 by default) into
the command socket as fast as ZeroMQ takes them, then reads every answer. Meanwhile a scripted
dealer plays Cali LowBall hands one card at a time through the simulated shoe. Reported:

* each card's latency (frame written to the shoe pty -> ``card_dealt`` at a subscriber),
  during the flood and in a baseline without it;
* the longest gap between two heartbeats on the event stream, and between two systemd
  watchdog pings (the daemon runs with ``NOTIFY_SOCKET`` and ``WATCHDOG_USEC`` set, as under
  systemd), during the flood;
* the commands answered per second, and what the flood added to the journal.

The table's contract: no client delays a card, a device report, the heartbeat or the watchdog
by more than 100 ms. ``python -m bench.flood [--commands N] [--baseline-seconds S]``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import socket
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import zmq

from bench.pipeline import DaemonProcess, StreamedDealer, summary

#: WatchdogSec of the benchmark's daemon (it pings at half of it, as under systemd).
WATCHDOG_S = 2.0


def _flooder(endpoint: str, commands: int, results: Any) -> None:
    """The hostile client: every command at once, then every answer."""
    from controller.stream.command_client import CommandClient

    context = zmq.Context()
    client = CommandClient(endpoint, context=context, in_flight=0)
    start = time.perf_counter()
    for number in range(commands):
        client.send_payload(b'{"command": "fly", "n": %d}' % number)
    answered = refused = 0
    while answered < commands and (got := client.receive(30.0)) is not None:
        answered += 1
        refused += not got[1].ok
    results.put({"answered": answered, "refused": refused,
                 "seconds": time.perf_counter() - start})
    client.close()
    context.destroy(linger=0)


class _Listener(threading.Thread):
    """Times of heartbeats on the stream, or of watchdog pings on the notify socket: a
    ``receive`` factory is called on the listener's own thread (ZeroMQ sockets stay on the
    thread that made them) and returns (wait for the next one -> bool, close)."""

    def __init__(self, receiver: Any):
        super().__init__(daemon=True)
        self.receiver, self.stopping = receiver, False
        self.times: list[float] = []

    def run(self) -> None:
        receive, close = self.receiver()
        try:
            while not self.stopping:
                if receive():
                    self.times.append(time.perf_counter())
        finally:
            close()

    def stop(self) -> None:
        self.stopping = True
        self.join()

    def gaps_ms(self, start: float, end: float) -> list[float]:
        times = [t for t in self.times if start <= t <= end]
        return [(b - a) * 1000 for a, b in zip(times, times[1:])]


def _journaled_kinds(state_dir: Path, after_seq: int) -> Counter[str]:
    """How many records of each type the journal holds after ``after_seq``."""
    from controller.stream.journal import Journal, journal_path

    journal = Journal.open_readonly(journal_path(state_dir))
    try:
        return Counter(record.type for record in journal.records(after_seq=after_seq))
    finally:
        journal.close()


def flood(commands: int = 80_000, baseline_seconds: float = 5.0,
          verbose: bool = True) -> dict[str, Any]:
    notify_dir = Path(os.environ.get("TMPDIR", "/tmp"))
    notify_path = notify_dir / f"lowball-flood-notify-{os.getpid()}"
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(notify_path))
    notify.settimeout(0.2)
    daemon = DaemonProcess("cali_lowball", env={
        "NOTIFY_SOCKET": str(notify_path), "WATCHDOG_USEC": str(int(WATCHDOG_S * 1e6))})

    def heartbeat_receiver() -> tuple[Any, Any]:
        beats = daemon.context.socket(zmq.SUB)
        beats.setsockopt(zmq.LINGER, 0)
        beats.setsockopt(zmq.SUBSCRIBE, daemon.topic("heartbeat"))
        beats.connect(daemon.events_endpoint)

        def heartbeat() -> bool:
            if beats.poll(200):
                beats.recv_multipart()
                return True
            return False
        return heartbeat, beats.close

    def ping_receiver() -> tuple[Any, Any]:
        def ping() -> bool:
            try:
                return b"WATCHDOG=1" in notify.recv(4096)
            except TimeoutError:
                return False
        return ping, lambda: None

    heartbeats, pings = _Listener(heartbeat_receiver), _Listener(ping_receiver)
    written: list[float] = []
    latencies: list[tuple[float, float]] = []          # (when received, latency)

    def tap(direction: str, data: bytes) -> None:
        if direction == "tx" and data[3:4] == b"C":      # STX SEQ SEQ 'C': a card frame
            written.append(time.perf_counter())

    daemon.shoe.tap = tap
    dealer = StreamedDealer(daemon, seats=(1, 2, 3), one_card_at_a_time=True,
                            on_card=lambda when: latencies.append((when, when - written[-1])))
    seq_before = 0
    try:
        heartbeats.start()
        pings.start()
        assert daemon.ask({"command": "open"})["ok"]
        start = time.perf_counter()
        while time.perf_counter() - start < baseline_seconds:
            dealer.hand()
        baseline = [latency for _, latency in latencies]
        seq_before = daemon.ask({"command": "status"})["seq"]
        results = multiprocessing.get_context("spawn").Queue()
        client = multiprocessing.get_context("spawn").Process(
            target=_flooder, args=(daemon.endpoint, commands, results))
        flood_start = time.perf_counter()
        client.start()
        hands_during = 0
        while client.is_alive():
            dealer.hand()
            hands_during += 1
        flood_end = time.perf_counter()
        outcome = results.get(timeout=10)
        client.join()
        during = [latency for when, latency in latencies if flood_start <= when <= flood_end]
        kinds = _journaled_kinds(daemon.state_dir, after_seq=seq_before)
    finally:
        for listener in (heartbeats, pings):
            if listener.is_alive():
                listener.stop()
        daemon.close()
        notify.close()
        notify_path.unlink(missing_ok=True)
    result = {
        "commands": commands, **outcome, "hands_during": hands_during,
        "card_ms_baseline": summary([t * 1000 for t in baseline]),
        "card_ms_flood": summary([t * 1000 for t in during]) if during else None,
        "cards_over_100ms_baseline": sum(t > 0.1 for t in baseline),
        "cards_over_100ms_flood": sum(t > 0.1 for t in during),
        "heartbeat_gap_ms": max(heartbeats.gaps_ms(flood_start, flood_end), default=None),
        "watchdog_gap_ms": max(pings.gaps_ms(flood_start, flood_end), default=None),
        "journal_records_during": sum(kinds.values()),
        "journaled_refusals": kinds.get("command_refused", 0),
        "journaled_counts": kinds.get("refusals_counted", 0),
    }
    if verbose:
        print_flood(result)
    return result


def print_flood(r: dict[str, Any]) -> None:
    base, during = r["card_ms_baseline"], r["card_ms_flood"]
    print(f"  {r['answered']:,} of {r['commands']:,} junk commands answered in "
          f"{r['seconds']:.1f} s ({r['answered'] / r['seconds']:,.0f}/s), all refused: "
          f"{r['refused'] == r['answered']}")
    print(f"  cards without the flood: median {base['median']:.2f} ms, p99 {base['p99']:.2f}, "
          f"max {base['max']:.2f} ({base['n']} cards)")
    if during:
        print(f"  cards during the flood:  median {during['median']:.2f} ms, p99 "
              f"{during['p99']:.2f}, max {during['max']:.2f} ({during['n']} cards, "
              f"{r['hands_during']} hands); over 100 ms: {r['cards_over_100ms_flood']} "
              f"(without the flood: {r['cards_over_100ms_baseline']})")
    print(f"  longest gap during the flood: heartbeats {r['heartbeat_gap_ms']:.0f} ms "
          f"(sent every 1,000), watchdog pings {r['watchdog_gap_ms']:.0f} ms (every "
          f"{WATCHDOG_S * 500:,.0f}, WatchdogSec {WATCHDOG_S:g} s)")
    print(f"  the flood's journal records: {r['journaled_refusals']:,} refusals in full and "
          f"{r['journaled_counts']:,} counts (the dealer's hands: "
          f"{r['journal_records_during'] - r['journaled_refusals'] - r['journaled_counts']:,} "
          f"records)")


def main(argv: list[str] | None = None) -> None:
    from bench.machine import describe

    parser = argparse.ArgumentParser(prog="python -m bench.flood", description=__doc__)
    parser.add_argument("--commands", type=int, default=80_000)
    parser.add_argument("--baseline-seconds", type=float, default=5.0)
    args = parser.parse_args(argv)
    print(f"machine: {describe()}")
    print(f"a flood of {args.commands:,} junk commands from one client while the dealer deals")
    flood(args.commands, args.baseline_seconds)


if __name__ == "__main__":
    main()

"""Whole-pipeline benchmarks: latency, hands per second, memory and idle CPU, and a soak.

Run by ``make bench`` (``python -m bench``), or one at a time::

    python -m bench.pipeline latency   [--cards 600]
    python -m bench.pipeline hands     [--hands 300]
    python -m bench.pipeline memory    [--hands 300]
    python -m bench.pipeline idle      [--seconds 60]
    python -m bench.pipeline soak      [--hands 20000] [--sample-every 1000]

The one-million-hand soak of the issue is ``python -m bench.pipeline soak --hands 1000000``
(each game; at the ~70-85 hands/s measured through engine + table + journal on the 2-core
bench machine, about 3.5-4 hours per game, so run it with ``--game``, one game per core;
memory is sampled every ``--sample-every`` hands). ``make bench`` runs
:data:`MAKE_BENCH_SOAK_HANDS` hands per game to stay within a few minutes.

* **latency**: a card frame written by the shoe simulator to its pty (timestamped by the
  transport's ``tap`` just before the ``write``) -> that card's ``card_dealt`` message received
  by a ZeroMQ subscriber (timestamped on ``recv``), through the real daemon (driver, table,
  journal, publisher) running in this process. Measured in the same run: the bare pty, the
  same frame bytes written to a pty master and read by a thread blocked in pyserial on the
  slave, as the driver reads. Overhead = card - pty (per percentile).
* **hands**: complete hands through the daemon (journal, publisher, drivers over the pty
  simulators) played by a fast scripted dealer: commands on the command channel, cards
  from the simulated shoe (each card acknowledged by the driver only after its journal
  commit, so cards flow one at a time), progress read on the event stream.
* **memory / idle**: the daemon as its own process (``python -m controller.cli run``), resident
  set size (VmRSS from /proc) after N hands, and its CPU time (utime+stime from
  /proc/<pid>/stat) over an idle minute.
* **soak**: engine + table + journal (``durability="batched"``) for N hands per game, with
  money conservation (sum of wager nets and awards = players' net = -house result, for each
  hand and in total; the progressive meter = seed + contributions - jackpots + reseeds) and
  this process's RSS sampled every K hands.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import zmq

ROOT = Path(__file__).resolve().parent.parent
CREDENTIAL = "bench-supervisor-credential"
DEADLINE_S = 20.0
CLK_TCK = os.sysconf("SC_CLK_TCK")
#: Soak hands per game in ``make bench`` (~70 s per game on the bench machine).
MAKE_BENCH_SOAK_HANDS = 5_000


# --- figures -----------------------------------------------------------------------------------

def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


def summary(values: list[float]) -> dict[str, float]:
    return {"n": len(values), "median": statistics.median(values), "p99": percentile(values, 99),
            "max": max(values)}


def rss_kib(pid: int | str = "self") -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK     # utime + stime


def _quiet_logs(level_name: str = "INFO") -> None:
    """The daemon's logging as in production (JSON lines at INFO), into /dev/null."""
    import logging

    from controller import logs

    logs.configure(json_lines=True, level=getattr(logging, level_name),
                   stream=open(os.devnull, "w"))


# --- the in-process rig ------------------------------------------------------------------------

class PipelineRig:
    """Simulators on ptys, the daemon in a thread, a subscriber and a command client."""

    def __init__(self, game: str, *, durability: str = "full", topics: tuple[str, ...] = ()):
        from controller.commands.demo import demo_config
        from controller.daemon import TableDaemon
        from controller.systemd_notify import Notifier
        from controller.table_config import Limits, Stream
        from simulators.meter import AlphaSignModel
        from simulators.pty_transport import PtyTransport
        from simulators.shoe import Lbs1ShoeModel
        from simulators.spots import SpotControllerModel

        self.game = game
        self.tmp = tempfile.TemporaryDirectory(prefix="lowball-bench-")
        tmp = Path(self.tmp.name)
        self.shoe = PtyTransport(Lbs1ShoeModel(), name="shoe").start()
        self.spots = PtyTransport(SpotControllerModel(), name="spots").start()
        self.meter = PtyTransport(AlphaSignModel(), name="meter").start()
        self.stream = Stream(events=f"ipc://{tmp}/events", replay=f"ipc://{tmp}/replay",
                             commands=f"ipc://{tmp}/commands")
        loaded = demo_config(game, shoe=self.shoe.url, spots=self.spots.url,
                             meter=self.meter.url, credential=CREDENTIAL, stream=self.stream)
        limits = Limits(min_ante=1, max_ante=10**7, max_lowdown_bonus=10**7)
        loaded = loaded.model_copy(update={"config": loaded.config.model_copy(
            update={"limits": limits})})
        self.context = zmq.Context()
        self.daemon = TableDaemon(loaded, state_dir=tmp / "state", context=self.context,
                                  notifier=Notifier.from_environment({}), durability=durability)
        self.daemon.start()
        self.thread = threading.Thread(target=self.daemon.run, name="daemon", daemon=True)
        self.thread.start()
        from controller import wire

        self.table_id = self.daemon.table_id
        self.sub = self.context.socket(zmq.SUB)
        self.sub.setsockopt(zmq.LINGER, 0)
        self.sub.setsockopt(zmq.RCVHWM, 0)
        self._heartbeat = wire.topic(self.table_id, wire.HEARTBEAT)
        for topic in (*(wire.topic(self.table_id, kind) for kind in topics), self._heartbeat):
            self.sub.setsockopt(zmq.SUBSCRIBE, topic)
        self.sub.connect(self.stream.events)
        self.req = self.context.socket(zmq.REQ)
        self.req.setsockopt(zmq.LINGER, 0)
        self.req.connect(self.stream.commands)
        deadline = time.monotonic() + DEADLINE_S
        while True:                        # the slow joiner: a heartbeat proves the subscription
            if self.sub.poll(int(DEADLINE_S * 1000)):
                topic, _ = self.sub.recv_multipart()
                if topic == self._heartbeat:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("no heartbeat from the daemon")

    def topic(self, kind: str) -> bytes:
        from controller import wire

        return wire.topic(self.table_id, kind)

    def ask(self, request: dict[str, Any], supervisor: bool = False) -> dict[str, Any]:
        if supervisor:
            request = {**request, "credential": CREDENTIAL}
        self.req.send(json.dumps(request).encode())
        if not self.req.poll(int(DEADLINE_S * 1000)):
            raise RuntimeError(f"no answer to {request}")
        return json.loads(self.req.recv())

    def receive(self) -> tuple[bytes, bytes, float]:
        """The next non-heartbeat message: (topic, message, perf_counter at receipt)."""
        deadline = time.monotonic() + DEADLINE_S
        while True:
            if time.monotonic() > deadline or not self.sub.poll(int(DEADLINE_S * 1000)):
                raise RuntimeError("no event from the daemon")
            topic, message = self.sub.recv_multipart()
            now = time.perf_counter()
            if topic != self._heartbeat:
                return topic, message, now

    def close(self) -> None:
        self.daemon.request_stop()
        self.thread.join(10)
        self.daemon.close()
        for simulator in (self.shoe, self.spots, self.meter):
            simulator.stop()
        self.sub.close(0)
        self.req.close(0)
        self.context.term()
        self.tmp.cleanup()


# --- a fast scripted dealer ----------------------------------------------------------------------

def _decision(game: str, hand: Any, step: Any, seat: int) -> str:
    if game == "three_card_lowball":
        high = [card for card in hand.dealt[seat] if card.rank > 7][:2]
        return "discard:" + ",".join(str(card) for card in high) if high else "stand"
    options = step.options
    for preferred in (("raise", "bet") if seat % 2 else ("check", "bet")):
        if preferred in options:
            return preferred
    return options[0]


class FastDealer:
    """Plays complete hands through a :class:`PipelineRig` as fast as the table takes them.

    What the table waits for next is read from the daemon's table object, only once every
    event of the last input has been received (so the daemon thread is not changing it):
    a step's cards are dealt in one go (the shoe sends them one at a time, each after the
    previous one's acknowledgement), decisions are sent on the command channel.
    """

    def __init__(self, rig: PipelineRig, seats: tuple[int, ...] = (1,), seed: int = 7,
                 on_card: Callable[[float], None] | None = None, one_card_at_a_time=False):
        self.rig, self.seats, self.rng = rig, seats, random.Random(seed)
        self.second = "xtra_bonus" if rig.game == "cali_lowball" else "bonus"
        self.card_topic = rig.topic("card_dealt")
        self.settled_topic = rig.topic("hand_settled")
        self.fault_topic = rig.topic("fault")
        self.on_card = on_card
        self.one_card_at_a_time = one_card_at_a_time
        self.cards = 0

    def _wait_cards(self, count: int) -> None:
        got = 0
        while got < count:
            topic, message, when = self.rig.receive()
            if topic == self.card_topic:
                got += 1
                if self.on_card is not None:
                    self.on_card(when)
            elif topic == self.fault_topic:
                raise RuntimeError(f"the table paused: {message[:300]!r}")

    def hand(self) -> None:
        rig, table = self.rig, self.rig.daemon.table
        for seat in self.seats:
            for wager in ("ante", self.second):
                reply = rig.ask({"command": "place", "spot": seat, "wager": wager,
                                 "amount": 1000})
                assert reply["ok"], reply
        rig.shoe.device.load(seed=self.rng.randrange(2**32))
        assert rig.ask({"command": "lock"})["ok"]
        while table.hand is not None:
            hand = table.hand
            expected = hand.cards_expected()
            if expected:
                if self.one_card_at_a_time:
                    for _ in range(expected):
                        rig.shoe.device.deal(1)
                        self._wait_cards(1)
                else:
                    rig.shoe.device.deal(expected)
                    self._wait_cards(expected)
                self.cards += expected
                continue
            step = hand.next_step()
            if step.kind != "decision":
                break
            seat = step.seats[0]
            reply = rig.ask({"command": "decide", "spot": seat,
                             "decision": _decision(rig.game, hand, step, seat)})
            assert reply["ok"], reply


def _rig_for_play(game: str, durability: str, **kwargs: Any) -> PipelineRig:
    rig = PipelineRig(game, durability=durability,
                      topics=("card_dealt", "hand_settled", "fault"), **kwargs)
    assert rig.ask({"command": "open"})["ok"]
    return rig


# --- card frame to event latency -------------------------------------------------------------

def _bare_pty(frame: bytes, samples: int) -> list[float]:
    """Write ``frame`` to a pty master, read it on the slave with pyserial from a thread
    blocked in ``read`` (as the shoe driver is): seconds per frame."""
    import tty

    import serial

    master, slave = os.openpty()
    tty.setraw(slave)
    port = serial.serial_for_url(os.ttyname(slave), baudrate=115200, timeout=0.05)
    arrived: queue.SimpleQueue[float] = queue.SimpleQueue()
    stop = threading.Event()

    def reader() -> None:
        buffer = b""
        while not stop.is_set():
            data = port.read(1)
            if data:
                waiting = port.in_waiting
                if waiting:
                    data += port.read(waiting)
                buffer += data
                while len(buffer) >= len(frame):
                    buffer = buffer[len(frame):]
                    arrived.put(time.perf_counter())

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    times = []
    try:
        for _ in range(samples + 20):
            time.sleep(0.001)
            start = time.perf_counter()
            os.write(master, frame)
            times.append(arrived.get(timeout=5) - start)
    finally:
        stop.set()
        thread.join(2)
        port.close()
        os.close(master)
        os.close(slave)
    return times[20:]                    # the first few warm up


def latency(cards: int = 600, durability: str = "full", game: str = "three_card_lowball",
            verbose: bool = True) -> dict[str, Any]:
    """Card frame written to the shoe pty -> ``card_dealt`` received by a subscriber."""
    from drivers.lbs1 import FrameParser

    _quiet_logs()
    rig = _rig_for_play(game, durability)
    parser = FrameParser()
    written: list[float] = []
    sample_frame: list[bytes] = []

    def tap(direction: str, data: bytes) -> None:
        if direction == "tx":
            for item in parser.feed(data):
                if getattr(item, "type", None) == "C":
                    if not sample_frame:
                        sample_frame.append(bytes(data))
                    written.append(time.perf_counter())   # just before the write

    latencies: list[float] = []

    def on_card(received: float) -> None:
        latencies.append(received - written[-1])

    rig.shoe.tap = tap
    dealer = FastDealer(rig, seats=(1, 2, 3), on_card=on_card, one_card_at_a_time=True)
    settling: set[int] = set()          # the last card of a hand also carries its settlement
    try:
        while len(latencies) < cards + 20:
            dealer.hand()
            settling.add(len(latencies) - 1)
    finally:
        rig.close()
    card = latencies[20:]
    dealing = [t for index, t in enumerate(latencies) if index >= 20 and index not in settling]
    pty = _bare_pty(sample_frame[0], len(card))
    result = {"durability": durability, "card_ms": summary([t * 1000 for t in card]),
              "pty_ms": summary([t * 1000 for t in pty]),
              "not_settling_card_ms": summary([t * 1000 for t in dealing]),
              "settling_card_ms": summary([latencies[i] * 1000 for i in settling if i >= 20])}
    result["overhead_ms"] = {key: result["card_ms"][key] - result["pty_ms"][key]
                             for key in ("median", "p99")}
    if verbose:
        print_latency(result)
    return result


def print_latency(result: dict[str, Any]) -> None:
    card, pty, over = result["card_ms"], result["pty_ms"], result["overhead_ms"]
    print(f"  journal durability={result['durability']}, {card['n']} cards "
          f"(Three Card Lowball, 3 spots)")
    print(f"    frame -> card_dealt at subscriber   median {card['median']:.3f} ms   "
          f"p99 {card['p99']:.3f} ms   max {card['max']:.3f} ms")
    print(f"    bare pty (write -> serial read)     median {pty['median']:.3f} ms   "
          f"p99 {pty['p99']:.3f} ms   max {pty['max']:.3f} ms")
    plain, last = result["not_settling_card_ms"], result["settling_card_ms"]
    print(f"      cards that do not end the hand ({plain['n']}): median {plain['median']:.3f} ms, "
          f"p99 {plain['p99']:.3f} ms; the hand's last card, whose transaction also carries "
          f"the settlement ({last['n']}): median {last['median']:.3f} ms, "
          f"p99 {last['p99']:.3f} ms")
    verdict = "met" if over["p99"] < 1.0 else "NOT met"
    print(f"    software overhead above the pty     median {over['median']:.3f} ms   "
          f"p99 {over['p99']:.3f} ms   (target < 1 ms at p99: {verdict})")


# --- full-pipeline hands per second ------------------------------------------------------------

def hands_per_second(hands: int = 300, durability: str = "batched",
                     game: str = "three_card_lowball", seats: tuple[int, ...] = (1,),
                     verbose: bool = True) -> dict[str, Any]:
    """Complete hands through the daemon over the simulators: hands per wall-clock second,
    median and p99 of the time per hand, and where the daemon's thread spent its time."""
    _quiet_logs()
    rig = _rig_for_play(game, durability)
    dealer = FastDealer(rig, seats=seats)
    daemon = rig.daemon
    # Where the time goes: the daemon thread's time in the journal commit vs the rest of
    # apply (publish, lamps, meter); measured by wrapping the journal's append_all.
    spent = {"journal": 0.0, "apply": 0.0, "inputs": 0}
    journal_append, apply = daemon.journal.append_all, daemon.apply

    def timed_append(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return journal_append(*args, **kwargs)
        finally:
            spent["journal"] += time.perf_counter() - start

    def timed_apply(events: list[Any]) -> Any:
        start = time.perf_counter()
        try:
            return apply(events)
        finally:
            spent["apply"] += time.perf_counter() - start
            spent["inputs"] += 1

    daemon.journal.append_all, daemon.apply = timed_append, timed_apply
    try:
        for _ in range(20):                       # warm up
            dealer.hand()
        spent.update(journal=0.0, apply=0.0, inputs=0)
        dealer.cards = 0
        per_hand = []
        cpu_start = time.process_time()
        start = time.perf_counter()
        for _ in range(hands):
            begin = time.perf_counter()
            dealer.hand()
            per_hand.append(time.perf_counter() - begin)
        elapsed = time.perf_counter() - start
        cpu = time.process_time() - cpu_start
    finally:
        rig.close()
    result = {"game": game, "seats": len(seats), "durability": durability, "hands": hands,
              "hands_per_s": hands / elapsed, "hand_ms": summary([t * 1000 for t in per_hand]),
              "cards_per_hand": dealer.cards / hands, "inputs_per_hand": spent["inputs"] / hands,
              "journal_ms_per_hand": spent["journal"] * 1000 / hands,
              "apply_ms_per_hand": spent["apply"] * 1000 / hands,
              "process_cpu_ms_per_hand": cpu * 1000 / hands}
    if verbose:
        print_hands(result)
    return result


def print_hands(r: dict[str, Any]) -> None:
    verdict = "met" if r["hands_per_s"] >= 1000 else "NOT met"
    print(f"  {r['game']}, {r['seats']} spot(s), journal durability={r['durability']}: "
          f"{r['hands_per_s']:,.0f} hands/s (target >= 1,000: {verdict}); per hand median "
          f"{r['hand_ms']['median']:.2f} ms, p99 {r['hand_ms']['p99']:.2f} ms")
    print(f"    per hand: {r['inputs_per_hand']:.1f} inputs ({r['cards_per_hand']:.1f} cards); "
          f"daemon apply {r['apply_ms_per_hand']:.2f} ms of which journal commit "
          f"{r['journal_ms_per_hand']:.2f} ms; CPU of all threads of this process "
          f"{r['process_cpu_ms_per_hand']:.2f} ms")


# --- the daemon as a process: resident memory and idle CPU ------------------------------------

class DaemonProcess:
    """``python -m controller.cli run`` over simulators in this process."""

    def __init__(self, game: str = "three_card_lowball"):
        from bench.power_loss import write_config
        from simulators.meter import AlphaSignModel
        from simulators.pty_transport import PtyTransport
        from simulators.shoe import Lbs1ShoeModel
        from simulators.spots import SpotControllerModel

        self.game = game
        self.tmp = tempfile.TemporaryDirectory(prefix="lowball-bench-proc-")
        tmp = Path(self.tmp.name)
        self.shoe = PtyTransport(Lbs1ShoeModel(), name="shoe").start()
        self.spots = PtyTransport(SpotControllerModel(), name="spots").start()
        self.meter = PtyTransport(AlphaSignModel(), name="meter").start()
        config = write_config(tmp / "table.toml", game, shoe=self.shoe.url, spots=self.spots.url,
                              meter=self.meter.url, stream_dir=tmp)
        self.endpoint = f"ipc://{tmp}/commands"
        self.log = open(tmp / "daemon.log", "wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "controller.cli", "run", "--config", str(config),
             "--state-dir", str(tmp / "state"), "--log-format", "json"],
            cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT)
        self.context = zmq.Context()
        self.req = None
        deadline = time.monotonic() + DEADLINE_S
        while True:
            try:
                self.ask({"command": "status"}, timeout_s=1)
                break
            except RuntimeError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the daemon did not start: see {tmp / 'daemon.log'}")

    def ask(self, request: dict[str, Any], timeout_s: float = DEADLINE_S,
            supervisor: bool = False) -> dict[str, Any]:
        from bench.power_loss import CREDENTIAL as PROCESS_CREDENTIAL

        if self.req is None:
            self.req = self.context.socket(zmq.REQ)
            self.req.setsockopt(zmq.LINGER, 0)
            self.req.connect(self.endpoint)
        if supervisor:
            request = {**request, "credential": PROCESS_CREDENTIAL}
        self.req.send(json.dumps(request).encode())
        if not self.req.poll(int(timeout_s * 1000)):
            self.req.close(0)
            self.req = None
            raise RuntimeError(f"no answer to {request}")
        return json.loads(self.req.recv())

    def play(self, hands: int, seed: int = 11) -> None:
        """Hands driven by status: a card when the table wants one (one at a time), else a
        decision."""
        rng = random.Random(seed)
        second = "xtra_bonus" if self.game == "cali_lowball" else "bonus"
        for _ in range(hands):
            for seat in (1, 2, 3):
                for wager in ("ante", second):
                    assert self.ask({"command": "place", "spot": seat, "wager": wager,
                                     "amount": 1000})["ok"]
            self.shoe.device.load(seed=rng.randrange(2**32))
            assert self.ask({"command": "lock"})["ok"]
            while (state := self.ask({"command": "status"})["state"])["hand"] is not None:
                step = state["hand"]["next"]
                if step["kind"] == "card":
                    cards = sum(len(c) for c in state["hand"]["cards"].values())
                    self.shoe.device.deal(1)
                    deadline = time.monotonic() + DEADLINE_S
                    while sum(len(c) for c in (self.ask({"command": "status"})["state"]["hand"]
                                               or {"cards": {"x": [0] * (cards + 1)}})[
                                                   "cards"].values()) <= cards:
                        if time.monotonic() > deadline:
                            raise RuntimeError("a card did not reach the table")
                        time.sleep(0.0005)
                elif step["kind"] == "decision":
                    seat = step["seats"][0]
                    cards = state["hand"]["cards"].get(str(seat), [])
                    if self.game == "three_card_lowball":
                        high = [c for c in cards if c[:-1] in ("8", "9", "T", "J", "Q", "K")][:2]
                        decision = "discard:" + ",".join(high) if high else "stand"
                    else:
                        options = step["options"]
                        decision = "check" if "check" in options else (
                            "bet" if "bet" in options else options[0])
                    reply = self.ask({"command": "decide", "spot": seat, "decision": decision})
                    assert reply["ok"], reply
                else:
                    raise RuntimeError(f"unexpected step {step}")
            if state["state"] == "PAUSED":
                raise RuntimeError(f"the table paused: {state['fault']}")

    def close(self) -> None:
        if self.req is not None:
            self.req.close(0)
        self.context.term()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for simulator in (self.shoe, self.spots, self.meter):
            simulator.stop()
        self.log.close()
        self.tmp.cleanup()


def memory(hands: int = 300, verbose: bool = True) -> dict[str, Any]:
    """Resident set size of the daemon process at start and after ``hands`` hands."""
    daemon = DaemonProcess()
    try:
        assert daemon.ask({"command": "open"})["ok"]
        at_start = rss_kib(daemon.process.pid)
        samples = []
        step = max(1, hands // 5)
        played = 0
        while played < hands:
            daemon.play(min(step, hands - played), seed=played)
            played += min(step, hands - played)
            samples.append((played, rss_kib(daemon.process.pid)))
    finally:
        daemon.close()
    result = {"hands": hands, "rss_start_mib": at_start / 1024,
              "rss_after_mib": samples[-1][1] / 1024,
              "samples_mib": [(n, kib / 1024) for n, kib in samples]}
    if verbose:
        verdict = "met" if result["rss_after_mib"] < 60 else "NOT met"
        print(f"  daemon process (Three Card Lowball, 3 spots): RSS {result['rss_start_mib']:.1f} "
              f"MiB ready, {result['rss_after_mib']:.1f} MiB after {hands} hands "
              f"(target < 60 MB: {verdict})")
        print("    RSS by hands played: " + ", ".join(f"{n}: {mib:.1f}"
                                                      for n, mib in result["samples_mib"]))
    return result


def idle_cpu(seconds: float = 60.0, hands: int = 20, verbose: bool = True) -> dict[str, Any]:
    """CPU time of the idle daemon process over ``seconds`` (after a few hands, table open,
    devices connected, heartbeats flowing), as a percentage of one core."""
    daemon = DaemonProcess()
    try:
        assert daemon.ask({"command": "open"})["ok"]
        daemon.play(hands)
        time.sleep(1.0)
        pid = daemon.process.pid
        cpu0, wall0 = cpu_seconds(pid), time.monotonic()
        per_second = []
        last = cpu0
        while time.monotonic() - wall0 < seconds:
            time.sleep(1.0)
            now = cpu_seconds(pid)
            per_second.append(now - last)
            last = now
        cpu, wall = cpu_seconds(pid) - cpu0, time.monotonic() - wall0
        threads = len(os.listdir(f"/proc/{pid}/task"))
    finally:
        daemon.close()
    result = {"seconds": wall, "cpu_s": cpu, "percent_of_core": 100 * cpu / wall,
              "threads": threads,
              "per_second_ms": summary([s * 1000 for s in per_second])}
    if verbose:
        verdict = "met" if result["percent_of_core"] < 1 else "NOT met"
        ps = result["per_second_ms"]
        print(f"  idle daemon over {wall:.0f} s: {cpu * 1000:.0f} ms CPU = "
              f"{result['percent_of_core']:.2f} % of a core (target < 1 %: {verdict}); "
              f"{threads} threads; CPU per second median {ps['median']:.1f} ms, "
              f"p99 {ps['p99']:.1f} ms (clock tick {1000 / CLK_TCK:.0f} ms)")
    return result


# --- soak: engine + table + journal with money conservation ------------------------------------

class SoakFailure(AssertionError):
    pass


def soak(hands: int = 20_000, game: str = "three_card_lowball", sample_every: int = 1000,
         seed: int = 2026, durability: str = "batched", verbose: bool = True) -> dict[str, Any]:
    """``hands`` hands of ``game`` through :class:`controller.table.Table` and a journal, as
    the daemon applies them (each input and its effects in one transaction), checking money
    conservation per hand and over the run and sampling this process's RSS."""
    from controller.cards import DECK
    from controller.events import (
        HandSettled,
        MeterContributed,
        MeterSettled,
        ProgressiveAwarded,
        WagerSettled,
    )
    from controller.journal import Journal, journal_path
    from controller.table import Table
    from controller.table_commands import DEALER_ROLE, SUPERVISOR_ROLE, parse_command
    from controller.table_config import default_config_path, load_config
    from controller.table_events import CommandRefused, HandVoided, JackpotVerified, LockRefused

    loaded = load_config(default_config_path(game))
    loaded = loaded.model_copy(update={"config": loaded.config.model_copy(update={
        "limits": loaded.config.limits.model_copy(update={"max_ante": 10**7,
                                                          "max_lowdown_bonus": 10**7})})})
    table = Table(loaded)
    table_id = table.table_id
    rng = random.Random(seed)
    tmp = tempfile.TemporaryDirectory(prefix="lowball-soak-")
    journal = Journal(journal_path(Path(tmp.name)), durability=durability)
    progressive = loaded.config.progressive
    seed_amount = table.meter
    second = "xtra_bonus" if game == "cali_lowball" else "bonus"
    totals = {"wager_nets": 0, "players_net": 0, "house_result": 0, "contributions": 0,
              "jackpots": 0, "reseeds": 0, "jackpot_hands": 0, "voided": 0, "records": 0,
              "cards": 0}
    rss = [(0, rss_kib())]

    def apply(events: list[Any]) -> list[Any]:
        hand_id = table.hand_id
        journal.append_all(events, table_id=table_id, hand_id=hand_id)
        totals["records"] += len(events)
        for event in events:
            kind = type(event)
            if kind is MeterContributed:
                totals["contributions"] += event.contribution
            elif kind is MeterSettled:
                totals["jackpots"] += event.awards
                totals["reseeds"] += event.reseed
        return events

    def command(data: dict[str, Any], role: str = DEALER_ROLE) -> list[Any]:
        events = apply(table.command(parse_command(data), "soak", role))
        if type(events[0]) is CommandRefused or any(type(e) is LockRefused for e in events):
            raise SoakFailure(f"refused: {data}: {events}")
        return events

    start = time.perf_counter()
    cpu_start = time.process_time()
    command({"command": "open"})
    for number in range(1, hands + 1):
        spots = rng.sample(range(1, 8), rng.randint(1, 7))
        for spot in spots:
            ante = rng.choice((500, 1000, 2500))
            command({"command": "place", "spot": spot, "wager": "ante", "amount": ante,
                     "player": f"p{spot}"})
            command({"command": "place", "spot": spot, "wager": second, "amount": ante})
            if game == "cali_lowball" and rng.random() < 0.5:
                command({"command": "place", "spot": spot, "wager": "lowdown_bonus",
                         "amount": 500})
            if game == "three_card_lowball" and rng.random() < 0.7:
                command({"command": "place", "spot": spot, "wager": "progressive",
                         "amount": progressive.wager})
        command({"command": "lock"})
        deck = iter(rng.sample(DECK, 52))
        settled_hand: list[Any] = []
        shoe_seq = 0
        while table.hand is not None:
            hand = table.hand
            expected = hand.cards_expected()
            if expected:
                for _ in range(expected):
                    events = apply(table.shoe_card(next(deck), shoe_seq & 0xFF, ""))
                    shoe_seq += 1
                    totals["cards"] += 1
                    settled_hand += events
                continue
            step = hand.next_step()
            if step.kind != "decision":
                break
            seat = step.seats[0]
            settled_hand += command({"command": "decide", "spot": seat,
                                     "decision": _decision(game, hand, step, seat)})
        if table.state == "PAUSED":
            raise SoakFailure(f"hand {number} paused: {table.fault}")
        wager_nets = sum(e.net for e in settled_hand if type(e) is WagerSettled) + \
            sum(e.amount for e in settled_hand if type(e) is ProgressiveAwarded)
        result = [e for e in settled_hand if type(e) is HandSettled]
        if len(result) != 1:
            raise SoakFailure(f"hand {number}: {len(result)} hand_settled events")
        if wager_nets != result[0].players_net or result[0].players_net != \
                -result[0].house_result:
            raise SoakFailure(f"hand {number}: nets {wager_nets}, players_net "
                              f"{result[0].players_net}, house {result[0].house_result}")
        totals["wager_nets"] += wager_nets
        totals["players_net"] += result[0].players_net
        totals["house_result"] += result[0].house_result
        if table.jackpot is not None:
            totals["jackpot_hands"] += 1
            events = command({"command": "verify_jackpot"}, SUPERVISOR_ROLE)
            assert type(events[1]) is JackpotVerified
        if game == "three_card_lowball":
            expected_meter = seed_amount + totals["contributions"] - totals["jackpots"] + \
                totals["reseeds"]
            if table.meter != expected_meter:
                raise SoakFailure(f"hand {number}: meter {table.meter}, expected "
                                  f"{expected_meter} ({totals})")
        if number % sample_every == 0:
            rss.append((number, rss_kib()))
        assert not any(type(e) is HandVoided for e in settled_hand)
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    journal.close()
    verified = Journal(journal_path(Path(tmp.name)))
    report = verified.verify()
    verified.close()
    tmp.cleanup()
    if not report.ok:
        raise SoakFailure(f"journal does not verify: {report}")
    if totals["wager_nets"] != totals["players_net"] or \
            totals["players_net"] != -totals["house_result"]:
        raise SoakFailure(f"money not conserved over the run: {totals}")
    after_warmup = [kib for n, kib in rss if n >= hands // 5] or [rss[-1][1]]   # last 80 %
    result = {"game": game, "hands": hands, "durability": durability,
              "hands_per_s": hands / elapsed, "cpu_s": cpu, **totals,
              "meter": table.meter, "meter_seed": seed_amount,
              "journal_records_verified": report.records_checked,
              "rss_mib": [(n, kib / 1024) for n, kib in rss],
              "rss_growth_after_warmup_mib": (max(after_warmup) - min(after_warmup)) / 1024}
    if verbose:
        print_soak(result)
    return result


def print_soak(r: dict[str, Any]) -> None:
    print(f"  {r['game']}: {r['hands']:,} hands, {r['cards']:,} cards, "
          f"{r['journal_records_verified']:,} journal records (durability={r['durability']}, "
          f"verified) in {r['hands'] / r['hands_per_s']:.1f} s = {r['hands_per_s']:,.0f} hands/s")
    print(f"    money: sum of nets {r['wager_nets']:+,} = players' net {r['players_net']:+,} = "
          f"-house result {-r['house_result']:+,} cents (checked every hand): conserved")
    if r["game"] == "three_card_lowball":
        print(f"    meter {r['meter']:,} = seed {r['meter_seed']:,} + contributions "
              f"{r['contributions']:,} - jackpots {r['jackpots']:,} + reseeds {r['reseeds']:,} "
              f"({r['jackpot_hands']} jackpot hands verified; checked every hand)")
    samples = r["rss_mib"]
    shown = samples if len(samples) <= 6 else [samples[0], *samples[1::max(1, len(samples) // 5)],
                                               samples[-1]]
    print(f"    RSS (MiB) by hands: " + ", ".join(f"{n:,}: {mib:.1f}" for n, mib in shown) +
          f"; growth over the last 80 % of the run {r['rss_growth_after_warmup_mib']:.2f} MiB")


# --- make bench ------------------------------------------------------------------------------

def run_all(soak_hands: int = MAKE_BENCH_SOAK_HANDS, idle_seconds: float = 60.0) -> None:
    """Everything, as ``make bench`` prints it."""
    print("\ncard frame -> event latency (frame written to the shoe pty -> card_dealt at a "
          "ZeroMQ subscriber)")
    for durability in ("full", "batched"):
        latency(durability=durability)
    print("\nfull-pipeline hands per second (daemon + journal + publisher + drivers over pty "
          "simulators, scripted dealer)")
    for durability in ("batched", "full"):
        for game in ("three_card_lowball", "cali_lowball"):
            hands_per_second(game=game, durability=durability)
    print("\nresident memory of the daemon process")
    memory()
    print("\nidle CPU of the daemon process")
    idle_cpu(seconds=idle_seconds)
    print(f"\nsoak: engine + table + journal, {soak_hands:,} hands per game "
          f"(python -m bench.pipeline soak --hands 1000000 for the full million)")
    for game in ("cali_lowball", "three_card_lowball"):
        soak(soak_hands, game)


def main(argv: list[str] | None = None) -> None:
    from bench.machine import describe

    parser = argparse.ArgumentParser(prog="python -m bench.pipeline", description=__doc__)
    parser.add_argument("what", choices=("all", "latency", "hands", "memory", "idle", "soak"),
                        nargs="?", default="all")
    parser.add_argument("--cards", type=int, default=600)
    parser.add_argument("--hands", type=int)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--sample-every", type=int, default=1000)
    parser.add_argument("--durability", choices=("full", "batched"))
    parser.add_argument("--game", choices=("cali_lowball", "three_card_lowball"))
    args = parser.parse_args(argv)
    print(f"machine: {describe()}")
    games = [args.game] if args.game else ["cali_lowball", "three_card_lowball"]
    if args.what == "all":
        run_all(args.hands or MAKE_BENCH_SOAK_HANDS, args.seconds)
    elif args.what == "latency":
        for durability in [args.durability] if args.durability else ["full", "batched"]:
            latency(args.cards, durability)
    elif args.what == "hands":
        for durability in [args.durability] if args.durability else ["batched", "full"]:
            for game in games:
                hands_per_second(args.hands or 300, durability, game)
    elif args.what == "memory":
        memory(args.hands or 300)
    elif args.what == "idle":
        idle_cpu(args.seconds)
    else:
        for game in games:
            soak(args.hands or 20_000, game, args.sample_every,
                 durability=args.durability or "batched")


if __name__ == "__main__":
    main()

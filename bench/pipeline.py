"""Whole-pipeline benchmarks: latency, hands per second, memory and idle CPU, and a soak.

Run by ``make bench`` (``python -m bench``), or one at a time::

    python -m bench.pipeline latency   [--cards 600]
    python -m bench.pipeline hands     [--hands 300] [--spots 1] [--game G]
    python -m bench.pipeline memory    [--hands 300]
    python -m bench.pipeline idle      [--seconds 60]
    python -m bench.pipeline stalled   [--seconds 60] [--game G]
    python -m bench.pipeline soak      [--hands 20000] [--game G] [--segment-hands 10000]
                                       [--verify-every 10] [--sample-every 1000]

The one-million-hand soak of the issue is ``python -m bench.pipeline soak --hands 1000000
--game G``, one game per core (about 1.5-2 hours per game on the 2-core bench machine; it
prints a progress line per journal segment). ``make bench`` runs
:data:`MAKE_BENCH_SOAK_HANDS` hands per game to stay within a few minutes.

Everything but the soak runs the daemon as systemd does, as its own process
(``python -m controller.cli.main run``, journal durability full: every commit synced before the
table acts), against the device simulators on ptys in this process; a scripted dealer
(:class:`StreamedDealer`) plays through the command channel and follows each hand on the
event stream. The same run with ``--durability batched`` (commits not synced) shows the
software without the disk, and a bare synced SQLite commit is timed beside the latency.

* **latency**: a card frame written by the shoe simulator to its pty (timestamped by the
  transport's ``tap`` just before the ``write``) -> that card's ``card_dealt`` message received
  by a ZeroMQ subscriber here (timestamped on ``recv``; both processes read the same
  monotonic clock). Measured in the same run: the bare pty, the same frame bytes written to a
  pty master here and read on the slave with pyserial by another process, as the driver
  reads. Overhead = card (median, p99) - the pty's median.
* **hands**: complete hands as fast as the table takes them. The shoe sends one frame at a
  time and the daemon acknowledges a card only after its journal commit, so every card is a
  pty round trip plus a synced commit; the daemon's own CPU per hand is reported beside the
  rate.
* **memory / idle**: resident set size (VmRSS from /proc) after N hands, and CPU time
  (utime+stime from /proc/<pid>/stat) over an idle minute.
* **stalled**: a subscriber that reads nothing for a minute while the table deals as fast as
  it can: the table's pace beside its pace without it, then the subscriber catches up, every
  missed event recovered through the replay socket and checked against the journal.
* **soak**: engine + table + journal (``durability="batched"``: commits not synced, for
  benchmarks only) for N hands per game, with money conservation (sum of wager nets and
  awards = players' net = -house result, for each hand and in total; the progressive meter
  = seed + contributions - jackpots + reseeds) and this process's RSS sampled every K hands.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import zmq

from bench.processes import stop

from controller.errors import LowballError

if TYPE_CHECKING:
    from controller.stream.command_client import CommandClient
    from controller.stream.journal import Durability, Journal

ROOT = Path(__file__).resolve().parent.parent
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


# --- the daemon as its own process, over simulators in this one --------------------------------

class DaemonProcess:
    """``python -m controller.cli.main run`` (the daemon as systemd runs it) over simulators on
    ptys in this process, with a command client and a subscriber. ``durability="batched"``
    (``--durability batched``: commits not synced) shows the software without the disk."""

    def __init__(self, game: str = "three_card_lowball", durability: str = "full",
                 env: dict[str, str] | None = None):
        from bench.power_loss import write_config
        from simulators.meter import AlphaSignModel
        from simulators.pty_transport import PtyTransport
        from simulators.shoe import Lbs1ShoeModel
        from simulators.spots import SpotControllerModel

        self.game, self.durability = game, durability
        self.commands: CommandClient | None = None
        self.sub: zmq.Socket[bytes] | None = None
        #: What close() undoes, last acquired first: whatever fails part-way through the
        #: start, nothing started before it (the simulators, the daemon) is left running.
        self._resources = contextlib.ExitStack()
        try:
            self.tmp = tempfile.TemporaryDirectory(prefix="lowball-bench-proc-")
            self._resources.callback(self.tmp.cleanup)
            tmp = Path(self.tmp.name)
            self.shoe = self._simulator(PtyTransport(Lbs1ShoeModel(), name="shoe"))
            self.spots = self._simulator(PtyTransport(SpotControllerModel(), name="spots"))
            self.meter = self._simulator(PtyTransport(AlphaSignModel(), name="meter"))
            self.config = write_config(tmp / "table.toml", game, shoe=self.shoe.url,
                                       spots=self.spots.url, meter=self.meter.url,
                                       stream_dir=tmp)
            self.endpoint = f"ipc://{tmp}/commands"
            self.events_endpoint = f"ipc://{tmp}/events"
            self.replay_endpoint = f"ipc://{tmp}/replay"
            self.state_dir = tmp / "state"
            self.log = self._resources.enter_context(open(tmp / "daemon.log", "wb"))
            self.process = subprocess.Popen(
                [sys.executable, "-m", "controller.cli.main", "run", "--config", str(self.config),
                 "--state-dir", str(self.state_dir), "--log-format", "json",
                 "--durability", durability],
                cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT,
                env={**os.environ, **(env or {})})
            self._resources.callback(self._stop_daemon)
            self.context = zmq.Context()
            self._resources.callback(self._close_sockets)
            self._await_ready(tmp)
        except BaseException:   # never leave the daemon and the simulators running behind
            self.close()
            raise

    def _simulator(self, transport: Any) -> Any:
        transport.start()
        self._resources.callback(transport.stop)
        return transport

    def _await_ready(self, tmp: Path) -> None:
        """Wait for the daemon's answer to ``status``, then subscribe."""
        from controller.stream import wire

        from controller.stream.command_client import CommandTimeout

        deadline = time.monotonic() + DEADLINE_S
        while True:
            try:
                self.ask({"command": "status"}, timeout_s=1)
                break
            except CommandTimeout:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.log.flush()
                    tail = (tmp / "daemon.log").read_bytes()[-2000:].decode("utf-8", "replace")
                    raise RuntimeError(f"the daemon did not start; its log ends:\n{tail}")
        self.table_id = self.ask({"command": "status"})["state"]["table_id"]
        self.sub = self.context.socket(zmq.SUB)
        self.sub.setsockopt(zmq.LINGER, 0)
        self.sub.setsockopt(zmq.RCVHWM, 0)
        self.heartbeat_topic = wire.topic(self.table_id, wire.HEARTBEAT)
        for kind in ("card_dealt", "hand_settled", "fault", wire.HEARTBEAT):
            self.sub.setsockopt(zmq.SUBSCRIBE, wire.topic(self.table_id, kind))
        self.sub.connect(self.events_endpoint)
        while True:                        # the slow joiner: a heartbeat proves the subscription
            topic, _, _ = self.receive(heartbeats=True)
            if topic == self.heartbeat_topic:
                break

    def topic(self, kind: str) -> bytes:
        from controller.stream import wire

        return wire.topic(self.table_id, kind)

    def ask(self, request: dict[str, Any], timeout_s: float = DEADLINE_S,
            supervisor: bool = False) -> dict[str, Any]:
        """The daemon's reply, as the command socket sent it; CommandTimeout if none."""
        from bench.power_loss import CREDENTIAL as PROCESS_CREDENTIAL
        from controller.stream.command_client import CommandClient

        if self.commands is None:
            self.commands = CommandClient(self.endpoint, context=self.context,
                                          credential=PROCESS_CREDENTIAL)
        return self.commands.ask(request, supervisor=supervisor, timeout_s=timeout_s).wire()

    def receive(self, heartbeats: bool = False) -> tuple[bytes, bytes, float]:
        """The next message (heartbeats skipped unless asked for): (topic, message,
        perf_counter at receipt)."""
        sub = self.sub
        if sub is None:
            raise RuntimeError("the daemon is not started: nothing to receive")
        deadline = time.monotonic() + DEADLINE_S
        while True:
            if time.monotonic() > deadline or not sub.poll(int(DEADLINE_S * 1000)):
                raise RuntimeError("no event from the daemon")
            topic, message = sub.recv_multipart()
            now = time.perf_counter()
            if heartbeats or topic != self.heartbeat_topic:
                return topic, message, now

    def _close_sockets(self) -> None:
        self.context.destroy(linger=0)    # every socket made in it too, so term cannot hang

    def _stop_daemon(self) -> None:
        stop(self.process, 10)

    def close(self) -> None:
        self._resources.close()


# --- a fast scripted dealer ----------------------------------------------------------------------

def _decision(game: str, hand: Any, step: Any, seat: int) -> str:
    if game == "three_card_lowball":
        high = [card for card in hand.dealt[seat] if card.rank > 7][:2]
        return "discard:" + ",".join(str(card) for card in high) if high else "stand"
    options = step.options
    for preferred in (("raise", "bet") if seat % 2 else ("check", "bet")):
        if preferred in options:
            return preferred
    return str(options[0])


class StreamedDealer:
    """Plays complete hands against a :class:`DaemonProcess` as fast as the table takes them.

    It follows each hand on the event stream with its own copy of the game engine (the same
    wagers, every ``card_dealt`` the table publishes, every decision it accepted), so it knows
    what the table waits for without asking: a step's cards are dealt by the simulated shoe
    (one frame at a time, each after the previous one's acknowledgement, which the daemon
    sends only after the card's journal commit), decisions go on the command channel, and a
    hand is over at its ``hand_settled``.
    """

    def __init__(self, daemon: DaemonProcess, seats: tuple[int, ...] = (1,), seed: int = 7,
                 on_card: Callable[[float], None] | None = None,
                 one_card_at_a_time: bool = False):
        from controller.core.games import CaliLowballHand, ThreeCardLowballHand
        from controller.settings.table_config import load_config

        self.daemon, self.seats, self.rng = daemon, seats, random.Random(seed)
        self.second = "xtra_bonus" if daemon.game == "cali_lowball" else "bonus"
        self.engine = CaliLowballHand if daemon.game == "cali_lowball" else ThreeCardLowballHand
        self.setup = load_config(daemon.config).setup()
        self.card_topic = daemon.topic("card_dealt")
        self.settled_topic = daemon.topic("hand_settled")
        self.fault_topic = daemon.topic("fault")
        self.on_card = on_card
        self.one_card_at_a_time = one_card_at_a_time
        self.cards = self.inputs = 0

    def _next(self) -> tuple[bytes, bytes, float]:
        topic, message, when = self.daemon.receive()
        if topic == self.fault_topic:
            raise RuntimeError(f"the table paused: {message[:300]!r}")
        return topic, message, when

    def _wait_cards(self, hand: Any, count: int) -> None:
        from controller.core.cards import parse_card

        got = 0
        while got < count:
            topic, message, when = self._next()
            if topic == self.card_topic:
                hand.deal(parse_card(json.loads(message)["data"]["card"]))
                got += 1
                if self.on_card is not None:
                    self.on_card(when)

    def _ask(self, request: dict[str, Any]) -> None:
        reply = self.daemon.ask(request)
        self.inputs += 1
        if not reply["ok"]:
            raise RuntimeError(f"refused: {request}: {reply}")

    def hand(self) -> None:
        from controller.core.games import Decision

        daemon = self.daemon
        wagers = {seat: {"ante": 1000, self.second: 1000} for seat in self.seats}
        for seat, amounts in wagers.items():
            for wager, amount in amounts.items():
                self._ask({"command": "place", "spot": seat, "wager": wager, "amount": amount})
        daemon.shoe.device.load(seed=self.rng.randrange(2**32))
        self._ask({"command": "lock"})
        hand = self.engine(self.setup, wagers)
        while True:
            expected = hand.cards_expected()
            if expected:
                for count in [1] * expected if self.one_card_at_a_time else [expected]:
                    daemon.shoe.device.deal(count)
                    self._wait_cards(hand, count)
                self.cards += expected
                self.inputs += expected
                continue
            step = hand.next_step()
            if step.kind == "settled":
                break
            seat = step.seats[0]
            decision = _decision(daemon.game, hand, step, seat)
            self._ask({"command": "decide", "spot": seat, "decision": decision})
            hand.decide(seat, Decision.parse(decision))
        while self._next()[0] != self.settled_topic:
            pass


def timed_hands(dealer: StreamedDealer, *, hands: int | None = None,
                seconds: float | None = None) -> tuple[list[float], float]:
    """Hands one after another, at least one, until ``hands`` were played or ``seconds`` have
    passed: each hand's time and the wall time of them all."""
    times: list[float] = []
    start = time.perf_counter()
    while True:
        begin = time.perf_counter()
        dealer.hand()
        now = time.perf_counter()
        times.append(now - begin)
        if len(times) == hands or (seconds is not None and now - start >= seconds):
            return times, now - start


# --- card frame to event latency -------------------------------------------------------------

_PTY_READER = """
import sys, time, serial
port = serial.serial_for_url(sys.argv[1], baudrate=115200, timeout=1)
size, count, buffer = int(sys.argv[2]), int(sys.argv[3]), b""
print("ready", flush=True)
while count:
    data = port.read(1)
    data += port.read(port.in_waiting)
    buffer += data
    while len(buffer) >= size:
        buffer, count = buffer[size:], count - 1
        print(time.perf_counter(), flush=True)
"""


def _bare_pty(frame: bytes, samples: int) -> list[float]:
    """The bare transport, as the daemon meets it: ``frame`` written to a pty master here,
    read on the slave with pyserial by another process blocked in ``read`` (the shoe driver's
    way); seconds per frame (both ends read the same monotonic clock)."""
    import tty

    master, slave = os.openpty()
    tty.setraw(slave)
    total = samples + 20
    reader = subprocess.Popen([sys.executable, "-c", _PTY_READER, os.ttyname(slave),
                               str(len(frame)), str(total)],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    times = []
    try:
        assert reader.stdout is not None and reader.stdout.readline().strip() == "ready"
        for _ in range(total):
            time.sleep(0.002)                 # one frame at a time, as the shoe sends them
            start = time.perf_counter()
            os.write(master, frame)
            times.append(float(reader.stdout.readline()) - start)
        reader.wait(10)
    finally:
        if reader.poll() is None:
            reader.kill()
            reader.wait()
        os.close(master)
        os.close(slave)
    return times[20:]                    # the first few warm up


def _bare_commit(samples: int, pause_s: float = 0.002) -> list[float]:
    """The disk's part: one small row committed to a SQLite WAL database with
    ``synchronous=FULL`` (as the journal commits), ``pause_s`` apart (paced like cards by
    default); seconds per commit."""
    import sqlite3

    with tempfile.TemporaryDirectory(prefix="lowball-bench-sync-") as tmp:
        connection = sqlite3.connect(Path(tmp) / "sync.sqlite3", isolation_level=None)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=FULL")
        connection.execute("CREATE TABLE t (seq INTEGER PRIMARY KEY, message BLOB)")
        times = []
        for _ in range(samples + 20):
            time.sleep(pause_s)
            start = time.perf_counter()
            connection.execute("BEGIN IMMEDIATE")
            connection.execute("INSERT INTO t (message) VALUES (?)", (b"x" * 200,))
            connection.execute("COMMIT")
            times.append(time.perf_counter() - start)
        connection.close()
    return times[20:]


def latency(cards: int = 600, game: str = "three_card_lowball", durability: str = "full",
            verbose: bool = True) -> dict[str, Any]:
    """Card frame written to the shoe pty -> ``card_dealt`` received by a subscriber, through
    the daemon process; the bare pty (and for ``full``, a bare synced commit) beside it."""
    from drivers.lbs1 import FrameParser

    daemon = DaemonProcess(game, durability)
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

    daemon.shoe.tap = tap
    dealer = StreamedDealer(daemon, seats=(1, 2, 3), on_card=on_card, one_card_at_a_time=True)
    settling: set[int] = set()          # the last card of a hand also carries its settlement
    try:
        assert daemon.ask({"command": "open"})["ok"]
        while len(latencies) < cards + 20:
            dealer.hand()
            settling.add(len(latencies) - 1)
    finally:
        daemon.close()
    card = latencies[20:]
    dealing = [t for index, t in enumerate(latencies) if index >= 20 and index not in settling]
    pty = _bare_pty(sample_frame[0], len(card))
    sync = _bare_commit(len(card)) if durability == "full" else []
    result: dict[str, Any] = {"durability": durability, "game": game,
                              "card_ms": summary([t * 1000 for t in card]),
                              "pty_ms": summary([t * 1000 for t in pty]),
                              "sync_ms": summary([t * 1000 for t in sync]) if sync else None,
                              "not_settling_card_ms": summary([t * 1000 for t in dealing]),
                              "settling_card_ms": summary([latencies[i] * 1000
                                                           for i in settling if i >= 20])}
    # Above the pty's typical (median) transit: the pty's own outliers never offset ours.
    result["overhead_ms"] = {key: result["card_ms"][key] - result["pty_ms"]["median"]
                             for key in ("median", "p99")}
    if verbose:
        print_latency(result)
    return result


def print_latency(result: dict[str, Any]) -> None:
    card, pty, over = result["card_ms"], result["pty_ms"], result["overhead_ms"]
    print(f"  daemon process, journal durability={result['durability']}, {card['n']} cards "
          f"({result['game']}, 3 spots)")
    print(f"    frame -> card_dealt at subscriber   median {card['median']:.3f} ms   "
          f"p99 {card['p99']:.3f} ms   max {card['max']:.3f} ms")
    print(f"    bare pty (write -> serial read)     median {pty['median']:.3f} ms   "
          f"p99 {pty['p99']:.3f} ms   max {pty['max']:.3f} ms")
    plain, last = result["not_settling_card_ms"], result["settling_card_ms"]
    print(f"      cards that do not end the hand ({plain['n']}): median {plain['median']:.3f} ms, "
          f"p99 {plain['p99']:.3f} ms; the hand's last card, whose transaction also carries "
          f"the settlement ({last['n']}): median {last['median']:.3f} ms, "
          f"p99 {last['p99']:.3f} ms")
    sync = result["sync_ms"]
    if sync is not None:
        print(f"    bare synced SQLite commit           median {sync['median']:.3f} ms   "
              f"p99 {sync['p99']:.3f} ms   max {sync['max']:.3f} ms (the disk's part)")
    verdict = "met" if over["p99"] < 1.0 else "NOT met"
    print(f"    overhead above the pty's median     median {over['median']:.3f} ms   "
          f"p99 {over['p99']:.3f} ms   (target < 1 ms at p99: {verdict})")



# --- full-pipeline hands per second ------------------------------------------------------------

def hands_per_second(hands: int = 300, game: str = "three_card_lowball",
                     seats: tuple[int, ...] = (1,), durability: str = "full",
                     verbose: bool = True) -> dict[str, Any]:
    """Complete hands through the daemon process over the simulators: hands per wall-clock
    second, median and p99 of the time per hand, the daemon's CPU per hand."""
    daemon = DaemonProcess(game, durability)
    dealer = StreamedDealer(daemon, seats=seats)
    try:
        assert daemon.ask({"command": "open"})["ok"]
        for _ in range(20):                       # warm up
            dealer.hand()
        dealer.cards = dealer.inputs = 0
        cpu_start = cpu_seconds(daemon.process.pid)
        per_hand, elapsed = timed_hands(dealer, hands=hands)
        cpu = cpu_seconds(daemon.process.pid) - cpu_start
    finally:
        daemon.close()
    result: dict[str, Any] = {
        "game": game, "seats": len(seats), "durability": durability, "hands": hands,
        "hands_per_s": hands / elapsed, "hand_ms": summary([t * 1000 for t in per_hand]),
        "cards_per_hand": dealer.cards / hands, "inputs_per_hand": dealer.inputs / hands,
        "daemon_cpu_ms_per_hand": cpu * 1000 / hands}
    if durability == "full":
        # The floor this journal on this disk puts under a hand: every input is answered only
        # once its journal commit is synced (a card's ACK, else a power cut could lose a card
        # the shoe believes delivered; a command's reply), and the next input waits for that
        # answer (LBS1 is stop-and-wait: the shoe sends a card only once the previous one is
        # acknowledged; the dealer's console waits for each reply). So hands cost at least one
        # synced commit per input, one after another, and over many hands the mean commit
        # bounds the rate. Bare commits back to back (the disk's best case); the transports'
        # round trips and the daemon's CPU come on top.
        commit_ms = statistics.fmean(_bare_commit(200, pause_s=0)) * 1000
        floor_ms = result["inputs_per_hand"] * commit_ms
        result["commit_floor"] = {"commit_ms": commit_ms, "hand_ms": floor_ms,
                                  "hands_per_s": 1000 / floor_ms}
    if verbose:
        print_hands(result)
    return result


def print_hands(r: dict[str, Any]) -> None:
    verdict = "met" if r["hands_per_s"] >= 1000 else "NOT met"
    print(f"  {r['game']}, {r['seats']} spot(s), journal durability={r['durability']}: "
          f"{r['hands_per_s']:,.0f} hands/s (target >= 1,000: {verdict}); per hand median "
          f"{r['hand_ms']['median']:.2f} ms, p99 {r['hand_ms']['p99']:.2f} ms")
    print(f"    per hand: {r['inputs_per_hand']:.1f} inputs ({r['cards_per_hand']:.1f} cards, "
          f"each a shoe frame and its acknowledgement); daemon process CPU "
          f"{r['daemon_cpu_ms_per_hand']:.2f} ms")
    floor = r.get("commit_floor")
    if floor is not None:
        print(f"    the journal's floor on this disk: {r['inputs_per_hand']:.1f} inputs, each "
              f"answered only after its own synced commit (a bare SQLite commit, back to back: "
              f"mean {floor['commit_ms']:.3f} ms), one after another = "
              f"{floor['hand_ms']:.2f} ms a hand: at most {floor['hands_per_s']:,.0f} hands/s "
              f"before transport and CPU")


# --- resident memory and idle CPU --------------------------------------------------------------

def _play(daemon: DaemonProcess, hands: int, seed: int = 11) -> None:
    dealer = StreamedDealer(daemon, seats=(1, 2, 3), seed=seed)
    for _ in range(hands):
        dealer.hand()


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
            _play(daemon, min(step, hands - played), seed=played)
            played += min(step, hands - played)
            samples.append((played, rss_kib(daemon.process.pid)))
    finally:
        daemon.close()
    result: dict[str, Any] = {"hands": hands, "rss_start_mib": at_start / 1024,
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
        _play(daemon, hands)
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
    result: dict[str, Any] = {"seconds": wall, "cpu_s": cpu,
                              "percent_of_core": 100 * cpu / wall,
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


# --- a subscriber that stops reading --------------------------------------------------------------

def stalled_subscriber(seconds: float = 60.0, baseline_seconds: float = 10.0,
                       game: str = "cali_lowball", hands: int | None = None,
                       verbose: bool = True) -> dict[str, Any]:
    """A surveillance subscriber (:class:`controller.stream.client.StreamClient`, default
    queues) that reads nothing for ``seconds`` (or ``hands`` hands) while the table deals as
    fast as it can, through the daemon process with its journal synced. First
    ``baseline_seconds`` of hands without it, for the table's own pace. Then it reads again:
    every event it missed must come back through the replay socket, so that it ends with
    exactly the journal's seqs after its snapshot, each once, in order, each message byte for
    byte as journaled (checked as they arrive against the journal, read beside the running
    daemon), and nothing after them."""
    from controller.stream import wire
    from controller.stream.journal import Journal, journal_path
    from controller.stream.client import StreamClient

    with contextlib.ExitStack() as resources:          # undone last first, whatever fails
        daemon = DaemonProcess(game)
        resources.callback(daemon.close)
        dealer = StreamedDealer(daemon, seed=17)
        assert daemon.ask({"command": "open"})["ok"]
        baseline, baseline_s = timed_hands(dealer, seconds=baseline_seconds)
        client = StreamClient(daemon.context, table_id=daemon.table_id,
                              pub_endpoint=daemon.events_endpoint,
                              replay_endpoint=daemon.replay_endpoint)
        resources.callback(client.close)
        if client.await_heartbeat(DEADLINE_S) is None:
            raise RuntimeError("the stalled subscriber never heard the table")
        snapshot = client.sync(timeout=DEADLINE_S)
        # the client reads nothing meanwhile
        during, stalled_s = timed_hands(dealer, hands=hands,
                                        seconds=None if hands else seconds)
        last = daemon.ask({"command": "status"})["seq"]
        journal = resources.enter_context(Journal.open_readonly(journal_path(daemon.state_dir)))
        journaled = journal.records(after_seq=snapshot.seq)
        rss_before = rss_sampled = rss_kib()        # this process is the subscriber
        catch_up_start = time.perf_counter()
        expected = snapshot.seq
        while expected < last:
            if expected % 10_000 == 0:
                rss_sampled = max(rss_sampled, rss_kib())
            event = client.receive(timeout=DEADLINE_S)
            if event is None:
                raise RuntimeError(f"the subscriber is stuck after seq {expected} of {last}")
            expected += 1
            record = next(journaled, None)
            if record is None:
                raise RuntimeError(f"the journal ends before seq {expected}")
            if event.seq != expected or record.seq != expected:
                raise RuntimeError(f"seq {event.seq} arrived where {expected} was due")
            if wire.dumps(event) != record.message:
                raise RuntimeError(f"seq {expected} differs from the journal's message")
        catch_up_s = time.perf_counter() - catch_up_start
        extra = client.receive(timeout=0)
        if extra is not None:
            raise RuntimeError(f"seq {extra.seq} arrived after the last, {last}")
        replayed = sum(end - first + 1 for first, end in client.filled)
        gaps = client.gaps_filled
    result = {"game": game, "stalled_s": stalled_s,
              "baseline": {"hands": len(baseline), "hands_per_s": len(baseline) / baseline_s,
                           "hand_ms": summary([t * 1000 for t in baseline])},
              "stalled": {"hands": len(during), "hands_per_s": len(during) / stalled_s,
                          "hand_ms": summary([t * 1000 for t in during])},
              "missed_records": last - snapshot.seq, "replayed_records": replayed,
              "gaps_filled": gaps, "catch_up_s": catch_up_s,
              "subscriber_rss_mib": {"before": rss_before / 1024,
                                     "sampled_max": rss_sampled / 1024}}
    if verbose:
        print_stalled(result)
    return result


def print_stalled(r: dict[str, Any]) -> None:
    base, stall = r["baseline"], r["stalled"]
    print(f"  {r['game']}, 1 spot, journal synced; a subscriber that reads nothing for "
          f"{r['stalled_s']:.0f} s")
    print(f"    table without it: {base['hands_per_s']:.0f} hands/s, per hand median "
          f"{base['hand_ms']['median']:.2f} ms, p99 {base['hand_ms']['p99']:.2f} ms, max "
          f"{base['hand_ms']['max']:.2f} ms ({base['hands']} hands)")
    print(f"    table while it stalls: {stall['hands_per_s']:.0f} hands/s, per hand median "
          f"{stall['hand_ms']['median']:.2f} ms, p99 {stall['hand_ms']['p99']:.2f} ms, max "
          f"{stall['hand_ms']['max']:.2f} ms ({stall['hands']:,} hands)")
    print(f"    then it read again: {r['missed_records']:,} records published meanwhile, "
          f"{r['replayed_records']:,} of them dropped by ZeroMQ and recovered from the replay "
          f"socket ({r['gaps_filled']:,} gap(s)) in {r['catch_up_s']:.1f} s; every seq once, "
          f"in order, byte for byte as journaled")
    rss = r["subscriber_rss_mib"]
    print(f"    the subscriber's process while catching up: RSS {rss['before']:.1f} MiB before, "
          f"{rss['sampled_max']:.1f} MiB at most, sampled every 10,000 events (the gap is "
          f"replayed a batch at a time)")


# --- soak: engine + table + journal with money conservation ------------------------------------

class SoakFailure(LowballError, AssertionError):
    pass


class SegmentedJournal:
    """The soak's journal: one file per segment of hands, so that a million hands (some 130
    million records, about 40 GB) never need the disk at once. Each segment is a journal of
    its own (seq from 1, its own hash chain); a finished one is verified (hash chain and
    every message) when it is the first, every ``verify_every``-th or the last, then
    deleted."""

    def __init__(self, durability: Durability, verify_every: int):
        from controller.stream.journal import Journal, journal_path

        if verify_every < 1:
            raise ValueError(f"verify_every must be 1 or more, not {verify_every}")

        self._open: Callable[[Path], Journal] = \
            lambda folder: Journal(journal_path(folder), durability=durability)
        self.tmp = tempfile.TemporaryDirectory(prefix="lowball-soak-")
        self.verify_every = verify_every
        self.segments = self.verified_segments = self.records_verified = 0
        self.journal = self._start()

    def _start(self) -> Any:
        self.segments += 1
        self.folder = Path(self.tmp.name) / f"segment-{self.segments:05d}"
        return self._open(self.folder)

    def _finish(self, last: bool) -> None:
        from controller.stream.journal import Journal, journal_path

        self.journal.close()
        if last or (self.segments - 1) % self.verify_every == 0:
            with Journal(journal_path(self.folder)) as finished:
                report = finished.verify()
            if not report.ok:
                raise SoakFailure(f"journal segment {self.segments} does not verify: {report}")
            self.verified_segments += 1
            self.records_verified += report.records_checked
        for file in self.folder.iterdir():
            file.unlink()
        self.folder.rmdir()

    def rotate(self) -> None:
        self._finish(last=False)
        self.journal = self._start()

    def close(self) -> None:
        self._finish(last=True)
        self.tmp.cleanup()


def soak(hands: int = 20_000, game: str = "three_card_lowball", sample_every: int = 1000,
         seed: int = 2026, durability: Durability = "batched", segment_hands: int = 10_000,
         verify_every: int = 10, verbose: bool = True,
         journal: type[SegmentedJournal] = SegmentedJournal) -> dict[str, Any]:
    """``hands`` hands of ``game`` through :class:`controller.core.table.Table` and a journal, as
    the daemon applies them (each input and its effects in one transaction), checking money
    conservation per hand and over the run and sampling this process's RSS. The journal is
    a :class:`SegmentedJournal` of ``segment_hands`` hands per file, or the subclass given as
    ``journal`` (bench/journal_start.py keeps the last segment)."""
    from controller.core.cards import DECK
    from controller.core.events import (
        HandSettled,
        MeterContributed,
        MeterSettled,
        ProgressiveAwarded,
        WagerSettled,
    )
    from controller.stream.table_commands import DEALER_ROLE, SUPERVISOR_ROLE, parse_command
    from controller.settings.table_config import build_table, default_config_path, load_config
    from controller.core.table_events import CommandRefused, HandVoided, JackpotVerified, LockRefused

    loaded = load_config(default_config_path(game))
    loaded = loaded.model_copy(update={"config": loaded.config.model_copy(update={
        "limits": loaded.config.limits.model_copy(update={"max_ante": 10**7,
                                                          "max_lowdown_bonus": 10**7})})})
    table = build_table(loaded)
    table_id = table.table_id
    rng = random.Random(seed)
    if segment_hands < 1:
        raise ValueError(f"segment_hands must be 1 or more, not {segment_hands}")
    journals = journal(durability, verify_every)
    progressive = loaded.config.progressive
    seed_amount = table.meter
    second = "xtra_bonus" if game == "cali_lowball" else "bonus"
    totals = {"wager_nets": 0, "players_net": 0, "house_result": 0, "contributions": 0,
              "jackpots": 0, "reseeds": 0, "jackpot_hands": 0, "voided": 0, "records": 0,
              "cards": 0}
    rss = [(0, rss_kib())]

    def apply(events: list[Any]) -> list[Any]:
        journals.journal.append_all(events, table_id=table_id, hand_id=table.hand_id)
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
        shoe_seq = shoe_count = 0
        while table.hand is not None:
            hand = table.hand
            expected = hand.cards_expected()
            if expected:
                for _ in range(expected):
                    shoe_count += 1
                    events = apply(table.shoe_card(next(deck), shoe_seq & 0xFF, "",
                                                   shoe_count))
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
        settled = [e for e in settled_hand if type(e) is HandSettled]
        if len(settled) != 1:
            raise SoakFailure(f"hand {number}: {len(settled)} hand_settled events")
        if wager_nets != settled[0].players_net or settled[0].players_net != \
                -settled[0].house_result:
            raise SoakFailure(f"hand {number}: nets {wager_nets}, players_net "
                              f"{settled[0].players_net}, house {settled[0].house_result}")
        totals["wager_nets"] += wager_nets
        totals["players_net"] += settled[0].players_net
        totals["house_result"] += settled[0].house_result
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
        if number % segment_hands == 0 and number < hands:
            journals.rotate()
            if verbose:
                print(f"    {game}: {number:,} hands in {time.perf_counter() - start:,.0f} s, "
                      f"RSS {rss[-1][1] / 1024:.1f} MiB, money conserved so far", flush=True)
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    journals.close()
    if totals["wager_nets"] != totals["players_net"] or \
            totals["players_net"] != -totals["house_result"]:
        raise SoakFailure(f"money not conserved over the run: {totals}")
    after_warmup = [kib for n, kib in rss if n >= hands // 5] or [rss[-1][1]]   # last 80 %
    result = {"game": game, "hands": hands, "durability": durability,
              "hands_per_s": hands / elapsed, "cpu_s": cpu, **totals,
              "meter": table.meter, "meter_seed": seed_amount,
              "journal_segments": journals.segments,
              "journal_segments_verified": journals.verified_segments,
              "journal_records_verified": journals.records_verified,
              "rss_mib": [(n, kib / 1024) for n, kib in rss],
              "rss_growth_after_warmup_mib": (max(after_warmup) - min(after_warmup)) / 1024}
    if verbose:
        print_soak(result)
    return result


def print_soak(r: dict[str, Any]) -> None:
    print(f"  {r['game']}: {r['hands']:,} hands, {r['cards']:,} cards, {r['records']:,} journal "
          f"records (durability={r['durability']}) in {r['hands'] / r['hands_per_s']:,.1f} s = "
          f"{r['hands_per_s']:,.0f} hands/s")
    print(f"    journal: {r['journal_segments']:,} segment file(s), "
          f"{r['journal_segments_verified']:,} verified in full "
          f"({r['journal_records_verified']:,} records: hash chain and every message)")
    print(f"    money: sum of nets {r['wager_nets']:+,} = players' net {r['players_net']:+,} = "
          f"-house result {-r['house_result']:+,} cents (checked every hand): conserved")
    if r["game"] == "three_card_lowball":
        print(f"    meter {r['meter']:,} = seed {r['meter_seed']:,} + contributions "
              f"{r['contributions']:,} - jackpots {r['jackpots']:,} + reseeds {r['reseeds']:,} "
              f"({r['jackpot_hands']} jackpot hands verified; checked every hand)")
    samples = r["rss_mib"]
    shown = samples if len(samples) <= 6 else [samples[0], *samples[1::max(1, len(samples) // 5)],
                                               samples[-1]]
    print("    RSS (MiB) by hands: " + ", ".join(f"{n:,}: {mib:.1f}" for n, mib in shown) +
          f"; growth over the last 80 % of the run {r['rss_growth_after_warmup_mib']:.2f} MiB")


# --- make bench ------------------------------------------------------------------------------

def run_all(soak_hands: int = MAKE_BENCH_SOAK_HANDS, idle_seconds: float = 60.0) -> None:
    """Everything, as ``make bench`` prints it."""
    print("\ncard frame -> event latency (frame written to the shoe pty -> card_dealt at a "
          "ZeroMQ subscriber), the daemon as its own process")
    for durability in ("full", "batched"):
        latency(durability=durability)
    print("\nfull-pipeline hands per second (the daemon process: drivers over pty simulators, "
          "table, journal, publisher; a scripted dealer on the command channel)")
    for game in ("three_card_lowball", "cali_lowball"):
        hands_per_second(game=game)
    hands_per_second(game="cali_lowball", seats=tuple(range(1, 8)), hands=100)
    hands_per_second(game="cali_lowball", durability="batched")
    print("\nresident memory of the daemon process")
    memory()
    print("\nidle CPU of the daemon process")
    idle_cpu(seconds=idle_seconds)
    print(f"\nsoak: engine + table + journal, {soak_hands:,} hands per game "
          f"(python -m bench.pipeline soak --hands 1000000 for the full million)")
    for game in ("cali_lowball", "three_card_lowball"):
        soak(soak_hands, game)
    # After the soak, whose resident memory is this process's own.
    print("\na subscriber that stops reading for a minute, then recovers by replay")
    stalled_subscriber(seconds=idle_seconds)
    from bench.flood import flood
    print("\na flood of 80,000 junk commands from one client while the dealer deals")
    flood()


def main(argv: list[str] | None = None) -> None:
    from bench.machine import describe

    parser = argparse.ArgumentParser(prog="python -m bench.pipeline", description=__doc__)
    parser.add_argument("what", choices=("all", "latency", "hands", "memory", "idle", "stalled",
                                           "soak"),
                        nargs="?", default="all")
    parser.add_argument("--cards", type=int, default=600)
    parser.add_argument("--hands", type=int)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--sample-every", type=int, default=1000)
    parser.add_argument("--durability", choices=("full", "batched"),
                        help="the journal: the daemon's (default full) or the soak's "
                             "(default batched)")
    parser.add_argument("--segment-hands", type=int, default=10_000,
                        help="soak: hands per journal file (each is verified or not, then deleted)")
    parser.add_argument("--verify-every", type=int, default=10,
                        help="soak: verify the first, every Nth and the last journal file in full")
    parser.add_argument("--spots", type=int, default=1, choices=range(1, 8),
                        help="spots played in the hands benchmark")
    parser.add_argument("--game", choices=("cali_lowball", "three_card_lowball"))
    args = parser.parse_args(argv)
    print(f"machine: {describe()}")
    games = [args.game] if args.game else ["cali_lowball", "three_card_lowball"]
    if args.what == "all":
        run_all(args.hands or MAKE_BENCH_SOAK_HANDS, args.seconds)
    elif args.what == "latency":
        for durability in [args.durability] if args.durability else ["full", "batched"]:
            latency(args.cards, args.game or "three_card_lowball", durability)
    elif args.what == "hands":
        for game in games:
            hands_per_second(args.hands or 300, game, tuple(range(1, args.spots + 1)),
                             args.durability or "full")
    elif args.what == "memory":
        memory(args.hands or 300)
    elif args.what == "idle":
        idle_cpu(args.seconds)
    elif args.what == "stalled":
        stalled_subscriber(args.seconds, game=args.game or "cali_lowball")
    else:
        for game in games:
            soak(args.hands or 20_000, game, args.sample_every,
                 durability=args.durability or "batched", segment_hands=args.segment_hands,
                 verify_every=args.verify_every)


if __name__ == "__main__":
    main()

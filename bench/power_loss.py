"""Power loss at every journal boundary and at random instants: SIGKILL the real daemon
process, restart it (at once, or slower than the old shoe's retry window), finish the hand.

The daemon runs as its own process (``python -m controller.cli.main run --config <generated toml>
--state-dir <dir>``) against the LBS1 shoe, spot controller and meter simulators, which run on
ptys in this process. A hand of a scenario file is played through the command channel and the
simulated shoe by a *state-driven* dealer: it reads the table's status (and the journal, as a
surveillance screen would) and does whatever the table waits for next, so after a restart it
simply carries on: ``continue`` the hand held with ``controller_restart``, place the wagers
the layout lacks. The shoe keeps its deck and any card it has not had acknowledged, as a real
shoe does (it never drops a card), so the dealer never re-loads it mid-hand; it only waits
for a card the shoe still offers before dealing the next.

A *boundary* is the end of one journal transaction (one input and its effects: the records
share one timestamp). For a kill at boundary K, a watcher thread polls the journal (read-only,
from this process) and SIGKILLs the daemon as soon as the journal reaches K; the dealer does
not start another input meanwhile, so the kill lands exactly at that boundary, anywhere from
just after the commit (before the events were published and the reply sent) to while the
daemon idles. Then the daemon is restarted and the hand finished.

*Random* kills (:func:`random_campaign`) SIGKILL the daemon at a random instant of the hand
(up to 30 ms after the journal reaches a random record, so not at a boundary, whatever the
daemon is doing then, and anywhere in the hand however fast the machine), keep it down for a random time, most often longer than the 0.8 s after
which the earlier shoe protocol gave a card up, and, when the table (rebuilt from the journal,
as the restarted daemon will rebuild it) waits for a card and the shoe has none in flight,
deal one while the daemon is down: the card must reach its seat after the restart.

Checks after every run (:func:`check_run`): the journal verifies (hash chain, gapless seq); the
kill left the journal exactly at a boundary; the hand's ``wager_settled`` records equal
:func:`controller.settings.scenario.replay`'s settlement, once each; every scenario card was dealt once
(``card_dealt`` and ``shoe_card``, a card the shoe sent again counted once) and to the seat the
deal order gives it (else *misassigned*); no seq was published twice or with other bytes than
the journal's; the table's meter equals that of a run that was never killed. Cards that left
the simulated shoe (:attr:`ShoeModel.dealt`) but never reached the journal are reported as
lost.

``in_flight`` runs kill the daemon the moment the shoe simulator receives the daemon's ACK for
a card, before the journal commit has necessarily happened: that is the window in which the
shoe believes a card delivered that the table may never have recorded.

Entry points: :func:`run` (every boundary of a full hand of each game, an in-flight kill per
card, and random kills with slow restarts) and ``python -m bench.power_loss``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import zmq

from bench import processes
from controller.errors import LowballError
from controller.stream import wire
from controller.core.cards import Card
from controller.core.events import CardDealt
from controller.stream.command_client import CommandClient, CommandTimeout
from controller.stream.journal import Journal, journal_path
from controller.settings.scenario import Scenario, load_scenario, replay, settlement_report
from controller.core.table import Table
from controller.settings.table_config import (
    LoadedConfig,
    build_table,
    default_config_path,
    load_config,
    shipped_config_dir,
)
from drivers.lbs1 import Frame, FrameParser
from simulators.meter import AlphaSignModel
from simulators.pty_transport import PtyTransport
from simulators.shoe import Lbs1ShoeModel
from simulators.spots import SpotControllerModel

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "tests" / "data" / "scenarios"
CREDENTIAL = "power-loss-supervisor-credential"
DEADLINE_S = 20.0
POLL_S = 0.0005

#: One full hand per game for the bench (every boundary is killed).
BENCH_SCENARIOS = {"cali_lowball": "cali_all_xtra_lines_multiseat",
                   "three_card_lowball": "tcl_prog_five_high"}
#: The earlier shoe protocol gave a card up after three retransmissions 200 ms apart.
OLD_RETRY_WINDOW_S = 0.8
#: How long a randomly killed daemon stays down: mostly past the old retry window.
DOWNTIME_S = (0.2, 2.5)
RANDOM_KILLS = 30
#: A random kill lands up to this long after the journal reaches a random record.
KILL_JITTER_S = 0.03


class DaemonDied(LowballError):
    """The daemon process is gone (killed on purpose, or crashed: see its log)."""


Value = TypeVar("Value")


def wait_for(predicate: Callable[[], Value], what: str, timeout: float = DEADLINE_S,
             alive: Callable[[], bool] | None = None) -> Value:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if alive is not None and not alive():
            raise DaemonDied(what)
        time.sleep(POLL_S * 4)  # polling interval; the deadline only bounds a failure
    raise AssertionError(f"timed out waiting for {what}")


# --- the config ------------------------------------------------------------------------------

def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value))


def write_config(path: Path, game: str, *, shoe: str, spots: str, meter: str,
                 stream_dir: Path) -> Path:
    """A table config for ``game`` with the devices on the simulators' ptys and the stream on
    ipc:// endpoints in ``stream_dir``; paytables from the shipped file."""
    shipped = load_config(default_config_path(game)).config
    sections: dict[str, dict[str, Any]] = {
        "table": {"id": shipped.table.id, "game": game, "paytable": shipped.table.paytable,
                  "paytables_file": str(shipped_config_dir() / "paytables.toml"), "spots": 7},
        "limits": {"min_ante": 1, "max_ante": 10**7, "max_lowdown_bonus": 10**7},
        "devices.shoe": {"driver": "lbs1", "port": shoe},
        "devices.spots": {"driver": "spots-ascii", "port": spots},
        "devices.meter": {"driver": "alpha", "port": meter},
        "stream": {"events": f"ipc://{stream_dir}/events", "replay": f"ipc://{stream_dir}/replay",
                   "commands": f"ipc://{stream_dir}/commands"},
        "security": {"supervisor_credential_sha256":
                     hashlib.sha256(CREDENTIAL.encode()).hexdigest()},
    }
    text = "".join(f"[{name}]\n" + "".join(f"{key} = {_toml_value(value)}\n"
                                           for key, value in values.items()) + "\n"
                   for name, values in sections.items())
    path.write_text(text, encoding="utf-8")
    load_config(path)  # fail here, not in the daemon, if it is wrong
    return path


# --- the journal, read from outside ------------------------------------------------------------

class JournalView:
    """Read-only queries on the daemon's journal (WAL: safe while it writes)."""

    def __init__(self, path: Path):
        self.path = path

    def _query(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        if not self.path.exists():
            return []
        connection = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            return connection.execute(sql, args).fetchall()
        except sqlite3.OperationalError:  # not created yet
            return []
        finally:
            connection.close()

    def last_seq(self) -> int:
        rows = self._query("SELECT COALESCE(MAX(seq), 0) FROM journal")
        return rows[0][0] if rows else 0

    def records(self, hand_id: str | None = None) -> list[tuple[int, str, str, bytes]]:
        """(seq, ts, type, message) in seq order, of one hand or of all."""
        if hand_id is None:
            rows = self._query("SELECT seq, ts, type, message FROM journal ORDER BY seq")
        else:
            rows = self._query("SELECT seq, ts, type, message FROM journal WHERE hand_id = ? "
                               "ORDER BY seq", (hand_id,))
        return [(seq, ts, kind, bytes(message)) for seq, ts, kind, message in rows]

    def data(self, hand_id: str, kind: str) -> list[dict[str, Any]]:
        return [json.loads(message)["data"] for _, _, type_, message in self.records(hand_id)
                if type_ == kind]

    def inputs(self) -> list[tuple[int, str]]:
        """(last seq, kind) of each transaction: the kind of its second record when the first
        is ``command_accepted`` (``wager_placed``, ``hand_started``...), ``decide`` for a
        decision, else the input's own type (``shoe_card``)."""
        rows, out = self.records(), []
        ends = set(self.boundaries())
        start = 0
        for index, (seq, _, _, message) in enumerate(rows):
            if seq not in ends:
                continue
            first = rows[start]
            kind = first[2]
            if kind == "command_accepted":
                command = json.loads(first[3])["data"]["command"]
                kind = "decide" if command == "decide" else (
                    rows[start + 1][2] if start + 1 <= index else command)
            out.append((seq, kind))
            start = index + 1
        return out

    def boundaries(self) -> list[int]:
        """The last seq of each transaction (records of one append share one timestamp)."""
        rows = self.records()
        return [seq for index, (seq, ts, _, _) in enumerate(rows)
                if index + 1 == len(rows) or rows[index + 1][1] != ts]


# --- the rig ---------------------------------------------------------------------------------

@dataclass
class RunResult:
    game: str
    scenario: str
    kill_at: int | None
    killed_at_seq: int | None = None
    restarts: int = 0
    hand_id: str = ""
    settlements: list[dict[str, Any]] = field(default_factory=list)
    meter: int | None = None
    last_seq: int = 0
    boundaries: list[int] = field(default_factory=list)
    lost_cards: list[str] = field(default_factory=list)
    #: (card, where it went, where the deal order puts it) for each card dealt elsewhere
    misassigned: list[tuple[str, Any, Any]] = field(default_factory=list)
    unpublished: int = 0
    published_twice: list[int] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: (boundary seq, what the transaction was: its input's type, ``decide`` for a decision)
    inputs: list[tuple[int, str]] = field(default_factory=list)
    #: seconds from the daemon's first start to the settled hand
    hand_seconds: float = 0.0
    #: random kills: seconds the daemon stayed down, whether a card was dealt meanwhile, and
    #: whether the shoe held a card the dead daemon had not journaled (in flight or dealt)
    downtime_s: float = 0.0
    dealt_while_down: int = 0
    held_across_restart: int = 0


class PowerLossRig:
    """Simulators in this process, the daemon as a child process, a dealer and a subscriber."""

    def __init__(self, workdir: Path, game: str):
        self.workdir, self.game = workdir, game
        self.shoe_model = Lbs1ShoeModel()
        self.shoe = PtyTransport(self.shoe_model, name="shoe").start()
        self.spots = PtyTransport(SpotControllerModel(), name="spots").start()
        self.meter = PtyTransport(AlphaSignModel(), name="meter").start()
        self.state_dir = workdir / "state"
        self.config = write_config(workdir / "table.toml", game, shoe=self.shoe.url,
                                   spots=self.spots.url, meter=self.meter.url,
                                   stream_dir=workdir)
        self.loaded = load_config(self.config)
        self.stream = self.loaded.config.stream
        self.journal = JournalView(journal_path(self.state_dir))
        self.context = zmq.Context()
        self.sub = self.context.socket(zmq.SUB)
        self.sub.setsockopt(zmq.SUBSCRIBE, b"")
        self.sub.setsockopt(zmq.LINGER, 0)
        self.sub.connect(self.stream.events)
        self.received: list[tuple[int, bytes]] = []
        self.commands = CommandClient(self.stream.commands, context=self.context)
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.log = open(workdir / "daemon.log", "ab")

    # -- the daemon process -----------------------------------------------------------------

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start_daemon(self) -> None:
        environment = {key: value for key, value in os.environ.items()
                       if key not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "controller.cli.main", "run", "--config", str(self.config),
             "--state-dir", str(self.state_dir), "--log-format", "json"],
            cwd=ROOT, stdout=self.log, stderr=self.log, env=environment)
        self.starts += 1
        wait_for(self._answers, "the daemon to answer status", alive=self.alive)

    def _answers(self) -> bool:
        try:
            self.ask({"command": "status"}, timeout=0.5)
            return True
        except TimeoutError:
            return False

    def kill(self) -> None:
        if self.alive():
            assert self.proc is not None
            os.kill(self.proc.pid, signal.SIGKILL)
        self.reap()

    def reap(self) -> int | None:
        if self.proc is None:
            return None
        code = self.proc.wait(DEADLINE_S)
        self.commands.reset()
        return code

    def stop(self) -> None:
        if self.proc is not None:
            processes.stop(self.proc, DEADLINE_S)
        self.commands.reset()

    def close(self) -> None:
        try:
            self.stop()
        finally:
            for simulator in (self.shoe, self.spots, self.meter):
                simulator.stop()
            self.sub.close(0)
            self.context.term()
            self.log.close()

    # -- talking to it ----------------------------------------------------------------------

    def ask(self, request: dict[str, Any], timeout: float = DEADLINE_S) -> dict[str, Any]:
        """Send one command; its reply as the command socket sent it. CommandTimeout (a
        TimeoutError) if no answer, DaemonDied if the process is gone."""
        request_id = self.commands.send(request)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            reply = self.commands.reply_to(request_id, 0.02)
            if reply is not None:
                return reply.wire()
            if not self.alive():
                self.commands.reset()
                raise DaemonDied(f"while asking {request}")
        self.commands.reset()
        raise CommandTimeout(self.stream.commands, str(request.get("command")), timeout)

    def status(self) -> dict[str, Any]:
        state: dict[str, Any] = self.ask({"command": "status"})["state"]
        return state

    def drain(self) -> None:
        while self.sub.poll(0):
            _topic, message = self.sub.recv_multipart()
            decoded = wire.decode(message)
            if not isinstance(decoded, wire.Heartbeat):
                self.received.append((decoded.seq, message))


# --- the dealer ------------------------------------------------------------------------------

def _hand_id(loaded: LoadedConfig, number: int) -> str:
    return f"{loaded.config.table.id}-{number:06d}"


def received_cards(rig: PowerLossRig, hand_id: str) -> list[str]:
    """The cards the hand received, in order; a card the shoe sent again (the same SEQ,
    card and count, journaled as it arrived) counts once."""
    cards, last = [], None
    for data in rig.journal.data(hand_id, "shoe_card"):
        key = (data["shoe_seq"], data["card"], data["count"])
        if key != last:
            cards.append(data["card"])
        last = key
    return cards


def decisions_made(rig: PowerLossRig, hand_id: str, spot: int) -> int:
    return sum(1 for data in rig.journal.data(hand_id, "command_accepted")
               if data["command"] == "decide" and json.loads(data["arguments"])["spot"] == spot)


def load_shoe(rig: PowerLossRig, scenario: Scenario, hand_id: str) -> None:
    """The dealer puts back in the shoe the scenario's cards the table has not received."""
    got = len(received_cards(rig, hand_id))
    rig.shoe.device.load([str(card) for card in scenario.shoe[got:]])


def step(rig: PowerLossRig, scenario: Scenario, hand_number: int) -> bool:
    """Do the next thing the table waits for; True once the hand is settled."""
    hand_id = _hand_id(rig.loaded, hand_number)
    state = rig.status()
    if state["hand_number"] >= hand_number and state["hand"] is None:
        return True                                        # settled (or voided: see checks)
    if state["state"] == "PAUSED":
        fault = state["fault"]
        if fault["code"] != "controller_restart":
            raise AssertionError(f"the hand paused on {fault}")
        reply = rig.ask({"command": "continue"})
        assert reply["ok"], reply
        return False
    if state["hand"] is None:
        if state["state"] == "CLOSED":
            assert rig.ask({"command": "open"})["ok"]
            return False
        layout = state["layout"]
        for spot, wagers in scenario.seats.items():
            for wager, amount in wagers.items():
                if layout.get(spot, {}).get(wager) != amount:
                    reply = rig.ask({"command": "place", "spot": int(spot), "wager": wager,
                                     "amount": amount, "player": f"p{spot}"})
                    assert reply["ok"], reply
                    return False
        load_shoe(rig, scenario, hand_id)
        reply = rig.ask({"command": "lock"})
        assert reply["ok"], reply
        return False
    next_step = state["hand"]["next"]
    if next_step["kind"] == "card":
        if shoe_has_card_in_flight(rig):
            # A card dealt before a kill that the table has not journaled yet: the shoe
            # offers it until the daemon takes it. Deal the next one only after that.
            wait_for(lambda: not shoe_has_card_in_flight(rig),
                     "the shoe's card in flight to be acknowledged", alive=rig.alive)
            return False
        before = len(received_cards(rig, hand_id))
        rig.shoe.device.deal(1)
        wait_for(lambda: len(received_cards(rig, hand_id)) > before,
                 "the card to reach the journal", alive=rig.alive)
        return False
    spot = next_step["seats"][0]
    decision = scenario.decisions[str(spot)][decisions_made(rig, hand_id, spot)]
    reply = rig.ask({"command": "decide", "spot": spot, "decision": decision})
    assert reply["ok"], reply
    return False


def shoe_has_card_in_flight(rig: PowerLossRig) -> bool:
    model = rig.shoe_model
    with rig.shoe.lock:
        outstanding = model._outstanding
        queued = list(model._queue)
    return (outstanding is not None and outstanding.message.kind == "card") or \
        any(message.kind == "card" for message in queued)


def restart(rig: PowerLossRig) -> None:
    """Restart after a kill. The shoe keeps offering any card it has not had acknowledged
    (it never gives one up), so the new daemon takes it whenever it comes back."""
    rig.reap()
    rig.start_daemon()


def table_from_journal(rig: PowerLossRig) -> Table:
    """The table as the restarted daemon will rebuild it from the journal."""
    table = build_table(rig.loaded)
    table.replay([wire.to_event(wire.decode_event(message))
                  for _, _, _, message in rig.journal.records()])
    return table


def deal_while_down(rig: PowerLossRig) -> int:
    """With the daemon dead: deal one card if the table (as it will be rebuilt) waits for one
    and the shoe has none in flight. How many cards were dealt (0 or 1)."""
    table = table_from_journal(rig)
    hand = table.hand
    if hand is None or shoe_has_card_in_flight(rig) or rig.shoe_model.remaining == 0:
        return 0
    if table.fault is not None and not table.fault.recoverable:
        return 0
    if not hand.cards_expected():
        return 0
    rig.shoe.device.deal(1)
    return 1


def play_hand(rig: PowerLossRig, scenario: Scenario, hand_number: int,
              kill_at: int | None = None, in_flight_card: int | None = None, *,
              kill_near: tuple[int, float] | None = None, downtime_s: float = 0.0,
              result: RunResult | None = None) -> int | None:
    """Play the hand to settlement, SIGKILLing the daemon once (see the module docstring):
    when the journal reaches ``kill_at``, on the ACK of card ``in_flight_card``, or
    ``kill_near`` = (seq, seconds): that long after the journal reaches seq, at whatever the
    daemon is doing then (a random instant, however fast the machine); such a daemon stays down
    ``downtime_s``, and a card is dealt meanwhile if the table waits for one (counted in
    ``result.dealt_while_down``). Returns the journal's last seq right after the kill (None if
    no kill)."""
    killed_at: list[int] = []
    stop = threading.Event()
    watcher = None
    if kill_at is not None or kill_near is not None:
        process = rig.proc
        assert process is not None

        def kill() -> None:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(DEADLINE_S)
            killed_at.append(rig.journal.last_seq())

        def watch() -> None:  # signals only: the sockets belong to the dealer's thread
            if kill_near is not None:
                near, delay = kill_near
                while not stop.is_set() and rig.journal.last_seq() < near:
                    time.sleep(POLL_S)  # polling interval of the watcher
                if not stop.wait(delay):              # the random instant, unless settled
                    kill()
                return
            assert kill_at is not None  # one of the two is given, or nothing watches
            while not stop.is_set():
                if rig.journal.last_seq() >= kill_at:
                    kill()
                    return
                time.sleep(POLL_S)  # polling interval of the watcher
        watcher = threading.Thread(target=watch, name="killer", daemon=True)
        watcher.start()
    try:
        while True:
            if watcher is not None and kill_at is not None and not killed_at and \
                    rig.journal.last_seq() >= kill_at:
                watcher.join(DEADLINE_S)                  # let the kill land at this boundary
            try:
                if in_flight_card is not None and not killed_at:
                    if _deal_and_kill_on_ack(rig, scenario, hand_number, in_flight_card,
                                             killed_at):
                        continue
                if step(rig, scenario, hand_number):
                    return killed_at[0] if killed_at else None
            except (DaemonDied, TimeoutError):
                if watcher is not None:
                    watcher.join(DEADLINE_S)
                if not killed_at and rig.alive():
                    raise
                if not killed_at:
                    code = rig.proc.returncode if rig.proc is not None else None
                    raise AssertionError(f"the daemon died on its own (exit "
                                         f"{code}); see {rig.workdir}/daemon.log")
                if kill_near is not None:
                    rig.reap()
                    down = time.monotonic()
                    in_flight = shoe_has_card_in_flight(rig)
                    dealt = deal_while_down(rig)
                    if result is not None:
                        result.dealt_while_down += dealt
                        result.held_across_restart += bool(in_flight or dealt)
                    # The daemon stays down as long as a slow restart takes: the shoe offers
                    # its card to no one meanwhile.
                    time.sleep(max(0.0, downtime_s - (time.monotonic() - down)))
                    if result is not None:
                        result.downtime_s = time.monotonic() - down
                restart(rig)
    finally:
        stop.set()
        if watcher is not None:
            watcher.join(DEADLINE_S)


def _deal_and_kill_on_ack(rig: PowerLossRig, scenario: Scenario, hand_number: int,
                          card_index: int, killed_at: list[int]) -> bool:
    """When the table waits for card ``card_index`` of the hand: deal it and SIGKILL the
    daemon the moment the shoe simulator sees its ACK. True if it did."""
    hand_id = _hand_id(rig.loaded, hand_number)
    state = rig.status()
    if state["hand"] is None or state["state"] == "PAUSED" or \
            state["hand"]["next"]["kind"] != "card" or \
            len(received_cards(rig, hand_id)) != card_index:
        return False
    model, process = rig.shoe_model, rig.proc
    assert process is not None
    fired = threading.Event()
    parser = FrameParser()

    def tap(direction: str, data: bytes) -> None:
        # Runs in the simulator's thread, under its lock, as the ACK bytes arrive: before the
        # shoe has even processed them. SIGKILL at once; nothing else waits.
        if direction != "rx" or fired.is_set():
            return
        out = model._outstanding
        for item in parser.feed(data):
            if isinstance(item, Frame) and item.type == "A" and out is not None and \
                    out.message.kind == "card" and item.payload == f"{out.seq:02X}":
                os.kill(process.pid, signal.SIGKILL)
                fired.set()
                return

    # The journal can hold the previous card before the daemon has acknowledged it: wait for
    # that ACK, so the one that fires below is this card's and not the previous one's.
    wait_for(lambda: model._outstanding is None, "the previous frame's acknowledgement")
    rig.shoe.tap = tap
    try:
        rig.shoe.device.deal(1)
        wait_for(fired.is_set, "the daemon's ACK of the card")
    finally:
        rig.shoe.tap = None
    process.wait(DEADLINE_S)
    killed_at.append(rig.journal.last_seq())
    raise DaemonDied("killed on the card's ACK")


# --- one run and its checks ------------------------------------------------------------------

def run_once(game: str, scenario_name: str, kill_at: int | None = None, *,
             in_flight_card: int | None = None, kill_near: tuple[int, float] | None = None,
             downtime_s: float = 0.0, workdir: Path | None = None) -> RunResult:
    began = time.monotonic()
    scenario = load_scenario(SCENARIOS / f"{scenario_name}.json")
    assert scenario.game == game
    progress = RunResult(game, scenario_name, kill_at)
    with tempfile.TemporaryDirectory(prefix="lowball-power-", dir=workdir) as tmp:
        rig = PowerLossRig(Path(tmp), game)
        try:
            rig.start_daemon()
            hand_began = time.monotonic()
            try:
                killed = play_hand(rig, scenario, 1, kill_at, in_flight_card,
                                   kill_near=kill_near, downtime_s=downtime_s,
                                   result=progress)
            except (AssertionError, DaemonDied, TimeoutError) as error:
                progress.problems.append(f"the hand did not finish: {error!r}")
                progress.seconds = time.monotonic() - began
                return progress
            hand_seconds = time.monotonic() - hand_began
            rig.drain()
            status = rig.status()
            rig.drain()
            rig.stop()
            rig.drain()
            result = check_run(rig, scenario, status, kill_at, killed)
            result.scenario = scenario_name
            result.restarts = rig.starts - 1
            result.hand_seconds = hand_seconds
            result.downtime_s = progress.downtime_s
            result.dealt_while_down = progress.dealt_while_down
            result.held_across_restart = progress.held_across_restart
        finally:
            rig.close()
    result.seconds = time.monotonic() - began
    return result


def check_run(rig: PowerLossRig, scenario: Scenario, status: dict[str, Any],
              kill_at: int | None,
              killed: int | None) -> RunResult:
    hand_id = _hand_id(rig.loaded, 1)
    result = RunResult(rig.game, "", kill_at, killed, hand_id=hand_id)
    problems = result.problems
    with Journal.open_readonly(journal_path(rig.state_dir)) as journal:
        report = journal.verify()
        if not report.ok:
            problems.append(f"journal does not verify: {report}")
        records = {record.seq: record.message for record in journal.records()}
    result.last_seq = max(records, default=0)
    result.boundaries = rig.journal.boundaries()
    result.inputs = rig.journal.inputs()
    if killed is not None and killed not in result.boundaries:
        problems.append(f"the kill left the journal at seq {killed}, inside a transaction")
    expected_hand = replay(scenario, load_config(default_config_path(rig.game)))
    expected = settlement_report(expected_hand)
    # the rig places spot N's wagers for player pN: every settlement of the spot names it
    expected["settlements"] = [{**settled, "player": f"p{settled['seat']}"}
                               for settled in expected["settlements"]]
    result.settlements = rig.journal.data(hand_id, "wager_settled")
    if result.settlements != expected["settlements"]:
        problems.append(f"settlements {result.settlements} != replay {expected['settlements']}")
    hand_types = Counter(kind for _, _, kind, _ in rig.journal.records(hand_id))
    if hand_types["hand_settled"] != 1:
        problems.append(f"hand_settled {hand_types['hand_settled']} times")
    dealt_records = rig.journal.data(hand_id, "card_dealt")
    dealt = [data["card"] for data in dealt_records]
    shoe_cards = received_cards(rig, hand_id)
    wanted = [str(card) for card in scenario.shoe]
    if sorted(dealt) != sorted(wanted) or len(set(dealt)) != len(dealt):
        problems.append(f"card_dealt {dealt} != the scenario's {wanted}")
    # Every card to the seat the deal order gives it (the engine's own replay of the hand).
    seats = {str(event.card): event.to for event in expected_hand.history
             if type(event) is CardDealt}
    result.misassigned = [(data["card"], data["to"], seats.get(data["card"]))
                          for data in dealt_records if seats.get(data["card"]) != data["to"]]
    if result.misassigned:
        problems.append(f"cards dealt to the wrong seat (card, got, deal order): "
                        f"{result.misassigned}")
    if shoe_cards != wanted:
        problems.append(f"shoe_card {shoe_cards} != the scenario's {wanted}")
    # Cards that left the simulated shoe but never reached the journal.
    left_shoe = [str(card) for card in rig.shoe_model.dealt]
    lost = Counter(left_shoe) - Counter(shoe_cards)
    result.lost_cards = sorted(lost.elements())
    # The stream: never a seq twice, never other bytes than the journal's.
    seen = Counter(seq for seq, _ in rig.received)
    result.published_twice = sorted(seq for seq, count in seen.items() if count > 1)
    if result.published_twice:
        problems.append(f"seqs published twice: {result.published_twice}")
    for seq, message in rig.received:
        if records.get(seq) != message:
            problems.append(f"seq {seq} was published with bytes the journal does not hold")
            break
    result.unpublished = len(set(records) - set(seen))
    result.meter = status["meter"]
    if status["state"] != "SETTLED" or status["last_settled_hand"] != hand_id:
        problems.append(f"the table ended {status['state']}, last settled "
                        f"{status['last_settled_hand']}")
    return result


# --- the campaign ----------------------------------------------------------------------------

def campaign(game: str, scenario_name: str, kill_points: list[int] | None = None, *,
             in_flight: bool = False, log: Callable[[str], object] = print) -> dict[str, Any]:
    """A run never killed, then one run per kill point (every boundary of the hand when
    ``kill_points`` is None; else the given indexes into the boundary list, negative from the
    end). Returns survived/failed counts, lost cards and the problems found."""
    baseline = run_once(game, scenario_name)
    if baseline.problems:
        raise AssertionError(f"the unkilled run failed: {baseline.problems}")
    boundaries = baseline.boundaries
    points = boundaries if kill_points is None else sorted({boundaries[i] for i in kill_points})
    summary: dict[str, Any] = {"game": game, "scenario": scenario_name,
                               "boundaries": len(boundaries), "records": baseline.last_seq,
                               "kill_points": len(points), "survived": 0, "failed": [],
                               "lost_cards": [], "unpublished_then_replayable": 0,
                               "misassigned": [], "in_flight": []}
    log(f"{game} {scenario_name}: {baseline.last_seq} records in {len(boundaries)} "
        f"transactions; unkilled run {baseline.seconds:.1f} s, meter {baseline.meter}")
    for point in points:
        result = run_once(game, scenario_name, point)
        if result.meter != baseline.meter:
            result.problems.append(f"meter {result.meter} != unkilled {baseline.meter}")
        ok = not result.problems
        summary["survived"] += ok
        summary["unpublished_then_replayable"] += result.unpublished
        if result.lost_cards:
            summary["lost_cards"].append((point, result.lost_cards))
        if not ok:
            summary["failed"].append((point, result.problems))
        log(f"  kill at seq {point:>3} (journal at {result.killed_at_seq}): "
            f"{'survived' if ok else 'FAILED ' + '; '.join(result.problems)}"
            f"{'' if not result.lost_cards else f', lost {result.lost_cards}'}"
            f"  [{result.seconds:.1f} s]")
        summary["misassigned"] += result.misassigned
    if in_flight:
        for index in range(len(baseline_cards(scenario_name))):
            result = run_once(game, scenario_name, in_flight_card=index)
            if result.meter != baseline.meter:
                result.problems.append(f"meter {result.meter} != unkilled {baseline.meter}")
            summary["in_flight"].append({"card": index, "journal_at": result.killed_at_seq,
                                         "lost": result.lost_cards,
                                         "problems": result.problems})
            log(f"  kill on the ACK of card {index}: journal at {result.killed_at_seq}, "
                f"{'card lost ' + str(result.lost_cards) if result.lost_cards else 'no card lost'}"
                f"{'' if not result.problems else '; ' + '; '.join(result.problems)}")
    return summary


def baseline_cards(scenario_name: str) -> list[Card]:
    return list(load_scenario(SCENARIOS / f"{scenario_name}.json").shoe)


def random_kill(game: str, scenario_name: str, rng: random.Random, records: int,
                downtime: tuple[float, float] = DOWNTIME_S, *,
                workdir: Path | None = None) -> RunResult:
    """One run killed at a random instant of the hand: up to ``KILL_JITTER_S`` after the
    journal reaches a random one of the unkilled hand's ``records`` (so the instant falls
    anywhere in the hand, however fast the machine), kept down a random time drawn from
    ``downtime``."""
    return run_once(game, scenario_name,
                    kill_near=(rng.randrange(1, records), rng.uniform(0.0, KILL_JITTER_S)),
                    downtime_s=rng.uniform(*downtime), workdir=workdir)


def random_campaign(game: str, scenario_name: str, kills: int = RANDOM_KILLS, *,
                    seed: int | None = None, downtime: tuple[float, float] = DOWNTIME_S,
                    log: Callable[[str], object] = print) -> dict[str, Any]:
    """Runs until ``kills`` of them were SIGKILLed mid-hand (at a random instant; a run whose
    hand settled first counts as a run, not a kill; at most three runs per kill), each
    restarted after a random downtime (most past the old 0.8 s retry window), a card dealt
    while the daemon is down whenever the table waits for one. Counts the kills, the slow
    restarts, the cards the shoe held across a restart, and the cards lost or misassigned
    (all must be 0)."""
    rng = random.Random(seed)
    baseline = run_once(game, scenario_name)
    if baseline.problems:
        raise AssertionError(f"the unkilled run failed: {baseline.problems}")
    summary: dict[str, Any] = {"game": game, "scenario": scenario_name, "runs": 0,
                               "killed": 0, "slow_restarts": 0, "dealt_while_down": 0,
                               "held_across_restart": 0, "survived": 0, "lost_cards": [],
                               "misassigned": [], "failed": [], "seed": seed}
    log(f"{game} {scenario_name}: {kills} random kills; unkilled hand "
        f"{baseline.hand_seconds:.2f} s, meter {baseline.meter}")
    while summary["killed"] < kills and summary["runs"] < 3 * kills:
        run_number = summary["runs"]
        result = random_kill(game, scenario_name, rng, baseline.last_seq, downtime)
        if result.meter != baseline.meter:
            result.problems.append(f"meter {result.meter} != unkilled {baseline.meter}")
        killed = result.killed_at_seq is not None
        summary["runs"] += 1
        summary["killed"] += killed
        summary["slow_restarts"] += killed and result.downtime_s > OLD_RETRY_WINDOW_S
        summary["dealt_while_down"] += result.dealt_while_down
        summary["held_across_restart"] += result.held_across_restart
        summary["survived"] += not result.problems
        summary["lost_cards"] += result.lost_cards
        summary["misassigned"] += result.misassigned
        if result.problems:
            summary["failed"].append((run_number, result.problems))
        what = f"killed at seq {result.killed_at_seq}, down {result.downtime_s:.2f} s" + \
            (", a card dealt while down" if result.dealt_while_down else
             ", a card in flight" if result.held_across_restart else "") if killed \
            else "settled before the kill"
        log(f"  run {run_number:>2}: {what}: "
            f"{'survived' if not result.problems else 'FAILED ' + '; '.join(result.problems)}"
            f"  [{result.seconds:.1f} s]")
    return summary


def run(scenarios: dict[str, str] | None = None, *, in_flight: bool = True,
        random_kills: int = RANDOM_KILLS, seed: int | None = None,
        boundaries: bool = True, log: Callable[[str], object] = print,
        ) -> dict[str, dict[str, Any]]:
    """Every journal boundary of a full hand of each game (with an in-flight kill per card),
    then ``random_kills`` random kills with slow restarts per game."""
    results: dict[str, dict[str, Any]] = {}
    for game, name in (scenarios or BENCH_SCENARIOS).items():
        if boundaries:
            results[game] = campaign(game, name, in_flight=in_flight, log=log)
        if random_kills:
            results[f"{game} random"] = random_campaign(game, name, random_kills, seed=seed,
                                                        log=log)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.power_loss", description=(
        "SIGKILL the real daemon at every journal boundary of a full hand of each game and on "
        "each card's acknowledgement (restarted at once), then at random instants with "
        "restarts slower than the old shoe's 0.8 s retry window and a card dealt while the "
        "daemon is down; check every card reached its seat and nothing was lost."))
    parser.add_argument("--random", type=int, default=RANDOM_KILLS, metavar="N",
                        help=f"random kills per game (default {RANDOM_KILLS}; 0: none)")
    parser.add_argument("--seed", type=int, help="seed of the random kills (default: random)")
    parser.add_argument("--random-only", action="store_true",
                        help="skip the boundary and in-flight kills")
    parser.add_argument("--game", choices=sorted(BENCH_SCENARIOS),
                        help="one game only (default: both)")
    args = parser.parse_args(argv)
    if args.random < 0:
        parser.error("--random must be 0 or more")
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    scenarios = {args.game: BENCH_SCENARIOS[args.game]} if args.game else BENCH_SCENARIOS
    began = time.monotonic()
    print(f"random kills seed {seed}")
    results = run(scenarios, random_kills=args.random, seed=seed,
                  boundaries=not args.random_only)
    failed = 0
    for name, summary in results.items():
        failed += len(summary["failed"])
        if "kill_points" in summary:
            lost = sum(1 for item in summary["in_flight"] if item["lost"])
            print(f"{name}: {summary['survived']}/{summary['kill_points']} kill points "
                  f"survived; in-flight kills that lost a card: "
                  f"{lost}/{len(summary['in_flight'])}")
        else:
            print(f"{name}: {summary['survived']}/{summary['runs']} runs survived, "
                  f"{summary['killed']} killed mid-hand at a random instant; "
                  f"{summary['slow_restarts']} restarts slower than {OLD_RETRY_WINDOW_S} s; "
                  f"the shoe held a card across {summary['held_across_restart']} restarts "
                  f"({summary['dealt_while_down']} dealt while the daemon was down); "
                  f"cards lost {len(summary['lost_cards'])}, misassigned "
                  f"{len(summary['misassigned'])}")
    print(f"power loss: {time.monotonic() - began:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Power loss at every journal boundary: SIGKILL the real daemon process, restart, finish.

The daemon runs as its own process (``python -m controller.cli run --config <generated toml>
--state-dir <dir>``) against the LBS1 shoe, spot controller and meter simulators, which run on
ptys in this process. A hand of a scenario file is played through the command channel and the
simulated shoe by a *state-driven* dealer: it reads the table's status (and the journal, as a
surveillance screen would) and does whatever the table waits for next, so after a restart it
simply carries on: ``continue`` the hand held with ``controller_restart``, re-load the shoe
with the scenario's cards the table has not received, place the wagers the layout lacks.

A *boundary* is the end of one journal transaction (one input and its effects: the records
share one timestamp). For a kill at boundary K, a watcher thread polls the journal (read-only,
from this process) and SIGKILLs the daemon as soon as the journal reaches K; the dealer does
not start another input meanwhile, so the kill lands exactly at that boundary, anywhere from
just after the commit (before the events were published and the reply sent) to while the
daemon idles. Then the daemon is restarted and the hand finished.

Checks after every run (:func:`check_run`): the journal verifies (hash chain, gapless seq); the
kill left the journal exactly at a boundary; the hand's ``wager_settled`` records equal
:func:`controller.scenario.replay`'s settlement, once each; every scenario card was dealt once
(``card_dealt`` and ``shoe_card``); no seq was published twice or with other bytes than the
journal's; the table's meter equals that of a run that was never killed. Cards that left the
simulated shoe (:attr:`ShoeModel.dealt`) but never reached the journal are reported as lost.

``in_flight`` runs kill the daemon the moment the shoe simulator receives the daemon's ACK for
a card, before the journal commit has necessarily happened: that is the window in which the
shoe believes a card delivered that the table may never have recorded.

Entry points: :func:`run` (every boundary of a full hand of each game, and an in-flight kill
per card) and ``python -m bench.power_loss``.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zmq

from controller import wire
from controller.journal import Journal, journal_path
from controller.scenario import Scenario, load_scenario, replay, settlement_report
from controller.table_config import default_config_path, load_config, shipped_config_dir
from drivers.lbs1 import Frame, FrameParser
from simulators.meter import AlphaSignModel
from simulators.pty_transport import PtyTransport
from simulators.shoe import Lbs1ShoeModel
from simulators.spots import SpotControllerModel

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "tests" / "scenarios"
CREDENTIAL = "power-loss-supervisor-credential"
DEADLINE_S = 20.0
POLL_S = 0.0005

#: One full hand per game for the bench (every boundary is killed).
BENCH_SCENARIOS = {"cali_lowball": "cali_all_xtra_lines_multiseat",
                   "three_card_lowball": "tcl_prog_five_high"}


class DaemonDied(Exception):
    """The daemon process is gone (killed on purpose, or crashed: see its log)."""


def wait_for(predicate, what: str, timeout: float = DEADLINE_S, alive=None):
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

    def _query(self, sql: str, args: tuple = ()) -> list[tuple]:
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

    def data(self, hand_id: str, kind: str) -> list[dict]:
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
    settlements: list[dict] = field(default_factory=list)
    meter: int | None = None
    last_seq: int = 0
    boundaries: list[int] = field(default_factory=list)
    lost_cards: list[str] = field(default_factory=list)
    unpublished: int = 0
    published_twice: list[int] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: (boundary seq, what the transaction was: its input's type, ``decide`` for a decision)
    inputs: list[tuple[int, str]] = field(default_factory=list)


class PowerLossRig:
    """Simulators in this process, the daemon as a child process, a dealer and a subscriber."""

    def __init__(self, workdir: Path, game: str):
        self.workdir, self.game = workdir, game
        self.shoe = PtyTransport(Lbs1ShoeModel(), name="shoe").start()
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
        self.req: zmq.Socket | None = None
        self.proc: subprocess.Popen | None = None
        self.starts = 0
        self.log = open(workdir / "daemon.log", "ab")

    # -- the daemon process -----------------------------------------------------------------

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start_daemon(self) -> None:
        environment = {key: value for key, value in os.environ.items()
                       if key not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "controller.cli", "run", "--config", str(self.config),
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
        self._reset_req()
        return code

    def stop(self) -> None:
        if self.alive():
            assert self.proc is not None
            self.proc.terminate()
            try:
                self.proc.wait(DEADLINE_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reset_req()

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

    def _reset_req(self) -> None:
        if self.req is not None:
            self.req.close(0)
            self.req = None

    def ask(self, request: dict, timeout: float = DEADLINE_S) -> dict:
        """Send one command; TimeoutError if no answer, DaemonDied if the process is gone."""
        if self.req is None:
            self.req = self.context.socket(zmq.REQ)
            self.req.setsockopt(zmq.LINGER, 0)
            self.req.connect(self.stream.commands)
        self.req.send(json.dumps(request).encode())
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.req.poll(20):
                return json.loads(self.req.recv())
            if not self.alive():
                self._reset_req()
                raise DaemonDied(f"while asking {request}")
        self._reset_req()
        raise TimeoutError(f"no answer to {request}")

    def status(self) -> dict:
        return self.ask({"command": "status"})["state"]

    def drain(self) -> None:
        while self.sub.poll(0):
            _topic, message = self.sub.recv_multipart()
            decoded = wire.decode(message)
            if not isinstance(decoded, wire.Heartbeat):
                self.received.append((decoded.seq, message))


# --- the dealer ------------------------------------------------------------------------------

def _hand_id(loaded, number: int) -> str:
    return f"{loaded.config.table.id}-{number:06d}"


def received_cards(rig: PowerLossRig, hand_id: str) -> list[str]:
    return [data["card"] for data in rig.journal.data(hand_id, "shoe_card")]


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
    model = rig.shoe.model
    with rig.shoe.lock:
        outstanding = model._outstanding
        queued = list(model._queue)
    return (outstanding is not None and outstanding.message.kind == "card") or \
        any(message.kind == "card" for message in queued)


def restart(rig: PowerLossRig) -> None:
    """Restart after a kill, once the shoe has stopped retransmitting a card to the dead
    daemon (a real shoe gives up after three retries, 0.6 s; the new driver flushes the line)."""
    rig.reap()
    wait_for(lambda: not shoe_has_card_in_flight(rig), "the shoe to give up its card")
    rig.start_daemon()


def play_hand(rig: PowerLossRig, scenario: Scenario, hand_number: int,
              kill_at: int | None = None, in_flight_card: int | None = None) -> int | None:
    """Play the hand to settlement, SIGKILLing the daemon once (see the module docstring).
    Returns the journal's last seq right after the kill (None if no kill)."""
    killed_at: list[int] = []
    stop = threading.Event()
    watcher = None
    if kill_at is not None:
        process = rig.proc
        assert process is not None

        def watch() -> None:  # signals only: the sockets belong to the dealer's thread
            while not stop.is_set():
                if rig.journal.last_seq() >= kill_at:
                    os.kill(process.pid, signal.SIGKILL)
                    process.wait(DEADLINE_S)
                    killed_at.append(rig.journal.last_seq())
                    return
                time.sleep(POLL_S)  # polling interval of the watcher
        watcher = threading.Thread(target=watch, name="killer", daemon=True)
        watcher.start()
    try:
        while True:
            if kill_at is not None and not killed_at and rig.journal.last_seq() >= kill_at:
                watcher.join(DEADLINE_S)                  # let the kill land at this boundary
            try:
                if in_flight_card is not None and not killed_at:
                    if _deal_and_kill_on_ack(rig, scenario, hand_number, in_flight_card,
                                             killed_at):
                        continue
                if step(rig, scenario, hand_number):
                    return killed_at[0] if killed_at else None
            except (DaemonDied, TimeoutError):
                if kill_at is not None and watcher is not None:
                    watcher.join(DEADLINE_S)
                if not killed_at and rig.alive():
                    raise
                if not killed_at:
                    raise AssertionError(f"the daemon died on its own (exit "
                                         f"{rig.proc.returncode}); see {rig.workdir}/daemon.log")
                restart(rig)
                load_shoe(rig, scenario, _hand_id(rig.loaded, hand_number))
    finally:
        stop.set()
        if watcher is not None:
            watcher.join(DEADLINE_S)


def _deal_and_kill_on_ack(rig, scenario, hand_number, card_index, killed_at) -> bool:
    """When the table waits for card ``card_index`` of the hand: deal it and SIGKILL the
    daemon the moment the shoe simulator sees its ACK. True if it did."""
    hand_id = _hand_id(rig.loaded, hand_number)
    state = rig.status()
    if state["hand"] is None or state["state"] == "PAUSED" or \
            state["hand"]["next"]["kind"] != "card" or \
            len(received_cards(rig, hand_id)) != card_index:
        return False
    model, process = rig.shoe.model, rig.proc
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
             in_flight_card: int | None = None, workdir: Path | None = None) -> RunResult:
    began = time.monotonic()
    scenario = load_scenario(SCENARIOS / f"{scenario_name}.json")
    assert scenario.game == game
    with tempfile.TemporaryDirectory(prefix="lowball-power-", dir=workdir) as tmp:
        rig = PowerLossRig(Path(tmp), game)
        try:
            rig.start_daemon()
            try:
                killed = play_hand(rig, scenario, 1, kill_at, in_flight_card)
            except (AssertionError, DaemonDied, TimeoutError) as error:
                result = RunResult(game, scenario_name, kill_at,
                                   problems=[f"the hand did not finish: {error!r}"])
                result.seconds = time.monotonic() - began
                return result
            rig.drain()
            status = rig.status()
            rig.drain()
            rig.stop()
            rig.drain()
            result = check_run(rig, scenario, status, kill_at, killed)
            result.scenario = scenario_name
            result.restarts = rig.starts - 1
        finally:
            rig.close()
    result.seconds = time.monotonic() - began
    return result


def check_run(rig: PowerLossRig, scenario: Scenario, status: dict, kill_at: int | None,
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
    expected = settlement_report(replay(scenario, load_config(default_config_path(rig.game))))
    result.settlements = rig.journal.data(hand_id, "wager_settled")
    if result.settlements != expected["settlements"]:
        problems.append(f"settlements {result.settlements} != replay {expected['settlements']}")
    hand_types = Counter(kind for _, _, kind, _ in rig.journal.records(hand_id))
    if hand_types["hand_settled"] != 1:
        problems.append(f"hand_settled {hand_types['hand_settled']} times")
    dealt = [data["card"] for data in rig.journal.data(hand_id, "card_dealt")]
    shoe_cards = received_cards(rig, hand_id)
    wanted = [str(card) for card in scenario.shoe]
    if sorted(dealt) != sorted(wanted) or len(set(dealt)) != len(dealt):
        problems.append(f"card_dealt {dealt} != the scenario's {wanted}")
    if shoe_cards != wanted:
        problems.append(f"shoe_card {shoe_cards} != the scenario's {wanted}")
    # Cards that left the simulated shoe but never reached the journal.
    left_shoe = [str(card) for card in rig.shoe.model.dealt]
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
             in_flight: bool = False, log=print) -> dict[str, Any]:
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
                               "in_flight": []}
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


def baseline_cards(scenario_name: str) -> list:
    return list(load_scenario(SCENARIOS / f"{scenario_name}.json").shoe)


def run(scenarios: dict[str, str] | None = None, *, in_flight: bool = True,
        log=print) -> dict[str, dict[str, Any]]:
    """``make bench`` entry point: every journal boundary of a full hand of each game."""
    return {game: campaign(game, name, in_flight=in_flight, log=log)
            for game, name in (scenarios or BENCH_SCENARIOS).items()}


def main() -> int:
    began = time.monotonic()
    results = run()
    failed = 0
    for game, summary in results.items():
        failed += len(summary["failed"])
        lost = sum(1 for item in summary["in_flight"] if item["lost"])
        print(f"{game}: {summary['survived']}/{summary['kill_points']} kill points survived; "
              f"in-flight kills that lost a card: {lost}/{len(summary['in_flight'])}")
    print(f"power loss: {time.monotonic() - began:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

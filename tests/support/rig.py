"""The table in process: the real daemon in a thread over the simulated shoe, spot controller
and meter on ptys, with a ZeroMQ subscriber and a command client (:class:`Rig`,
``rig_factory``)."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq

from controller.cli.demo import demo_config as demo_config
from controller.daemon.loop import TableDaemon
from controller.daemon.systemd_notify import Notifier
from controller.settings.scenario import Scenario, replay
from controller.settings.table_config import Limits, Stream
from controller.stream import wire
from controller.stream.journal import Durability
from simulators.meter import AlphaSignModel
from simulators.pty_transport import PtyTransport
from simulators.shoe import Lbs1ShoeModel
from simulators.spots import SpotControllerModel

from tests.support.waits import DEADLINE_S, wait_for


SCENARIOS = Path(__file__).resolve().parents[1] / "data" / "scenarios"


CREDENTIAL = "test-supervisor-credential"


class Rig:
    """Simulators, a daemon in a thread, a subscriber and a command client."""

    def __init__(self, tmp_path: Path, game: str, notify_socket: str | None = None,
                 durability: Durability = "full", supervisors: dict[str, str] | None = None) -> None:
        self.tmp_path, self.game, self.durability = tmp_path, game, durability
        #: name -> credential of each supervisor (beside the shared CREDENTIAL)
        self.supervisors = supervisors or {}
        self.shoe = PtyTransport(Lbs1ShoeModel(), name="shoe").start()
        self.spots = PtyTransport(SpotControllerModel(), name="spots").start()
        self.meter = PtyTransport(AlphaSignModel(), name="meter").start()
        self.stream = Stream(events=f"ipc://{tmp_path}/events", replay=f"ipc://{tmp_path}/replay",
                             commands=f"ipc://{tmp_path}/commands",
                             table_events=f"ipc://{tmp_path}/table-events",
                             table_replay=f"ipc://{tmp_path}/table-replay",
                             cms_events=f"ipc://{tmp_path}/cms-events",
                             cms_replay=f"ipc://{tmp_path}/cms-replay")
        self.context = zmq.Context()
        self.sub = self.context.socket(zmq.SUB)
        self.sub.setsockopt(zmq.SUBSCRIBE, b"")
        self.sub.setsockopt(zmq.LINGER, 0)
        self.req: zmq.Socket[bytes] | None = None
        self.received: list[Any] = []
        self.notify_socket = notify_socket
        self._daemon: TableDaemon | None = None
        self.start_daemon()

    @property
    def daemon(self) -> TableDaemon:
        """The daemon running now (between :meth:`start_daemon` and :meth:`stop_daemon`)."""
        assert self._daemon is not None, "the daemon is stopped"
        return self._daemon

    @daemon.setter
    def daemon(self, daemon: TableDaemon | None) -> None:
        self._daemon = daemon

    def start_daemon(self) -> None:
        loaded = demo_config(self.game, shoe=self.shoe.url, spots=self.spots.url,
                             meter=self.meter.url, credential=CREDENTIAL, stream=self.stream)
        # A test lab's limits: the worked scenarios use small stakes.
        limits = Limits(min_ante=1, max_ante=10**7, max_lowdown_bonus=10**7)
        security = loaded.config.security.model_copy(update={"supervisors": {
            name: hashlib.sha256(credential.encode()).hexdigest()
            for name, credential in self.supervisors.items()}})
        loaded = loaded.model_copy(update={"config": loaded.config.model_copy(
            update={"limits": limits, "security": security})})
        environ = {"NOTIFY_SOCKET": self.notify_socket} if self.notify_socket else {}
        self.daemon = TableDaemon(loaded, state_dir=self.tmp_path / "state",
                                  context=self.context,
                                  notifier=Notifier.from_environment(environ),
                                  durability=self.durability)
        self.daemon.start()
        self.thread = threading.Thread(target=self.daemon.run, daemon=True)
        self.thread.start()
        self.sub.connect(self.stream.events)
        # The slow joiner: wait until a heartbeat proves the subscription is live.
        wait_for(lambda: self._drain(heartbeats=True), "the first heartbeat")

    def stop_daemon(self) -> None:
        if self._daemon is None:
            return
        self.daemon.request_stop()
        self.thread.join(10)
        self.daemon.close()
        self.daemon = None
        self.sub.disconnect(self.stream.events)
        if self.req is not None:
            self.req.close(0)
            self.req = None

    def close(self) -> None:
        self.stop_daemon()
        for simulator in (self.shoe, self.spots, self.meter):
            simulator.stop()
        self.sub.close(0)
        self.context.term()

    def _drain(self, heartbeats: bool = False) -> bool:
        got_heartbeat = False
        while self.sub.poll(0):
            topic, message = self.sub.recv_multipart()
            decoded = wire.decode(message)
            if isinstance(decoded, wire.Heartbeat):
                got_heartbeat = True
            else:
                self.received.append(decoded)
        return got_heartbeat if heartbeats else True

    def events(self, kind: str) -> list[Any]:
        self._drain()
        return [e for e in self.received if e.type == kind]

    def ask(self, request: dict[str, Any] | bytes, supervisor: bool = False) -> dict[str, Any]:
        if self.req is None:
            self.req = self.context.socket(zmq.REQ)
            self.req.setsockopt(zmq.LINGER, 0)
            self.req.connect(self.stream.commands)
        if supervisor:
            assert isinstance(request, dict), "a supervisor's request is a command"
            request = {**request, "credential": CREDENTIAL}
        self.req.send(json.dumps(request).encode() if isinstance(request, dict) else request)
        assert self.req.poll(int(DEADLINE_S * 1000)), f"no answer to {request!r}"
        reply: dict[str, Any] = json.loads(self.req.recv())
        return reply

    def status(self) -> dict[str, Any]:
        state: dict[str, Any] = self.ask({"command": "status"})["state"]
        return state

    def deal_one(self) -> None:
        before = len(self.events("card_dealt")) + len(self.events("fault"))
        self.shoe.device.deal(1)
        wait_for(lambda: len(self.events("card_dealt")) + len(self.events("fault")) > before,
                 "the card to reach the table")

    def play(self, scenario: Scenario) -> None:
        """Wagers, lock, then cards and decisions as the table asks for them."""
        self.start_hand(scenario)
        self.finish_hand({int(spot): list(texts) for spot, texts in scenario.decisions.items()})

    def start_hand(self, scenario: Scenario) -> None:
        """The scenario's deck in the shoe, its wagers placed, the lock."""
        self.shoe.device.load([str(card) for card in scenario.shoe])
        for spot, wagers in scenario.seats.items():
            for wager, amount in wagers.items():
                reply = self.ask({"command": "place", "spot": int(spot), "wager": wager,
                                  "amount": amount, "player": f"p{spot}"})
                assert reply["ok"], reply
        assert self.ask({"command": "lock"})["ok"]

    def finish_hand(self, decisions: dict[int, list[str]]) -> None:
        """Deal and decide as the table asks until the hand settles (a pause is a failure)."""
        while (state := self.status())["hand"] is not None:
            assert state["state"] != "PAUSED", state["fault"]
            step = state["hand"]["next"]
            if step["kind"] == "card":
                self.deal_one()
            else:
                spot = step["seats"][0]
                reply = self.ask({"command": "decide", "spot": spot,
                                  "decision": decisions[spot].pop(0)})
                assert reply["ok"], reply


#: The ``rig_factory`` fixture: make(game, **Rig options) -> a rig, closed after the test.
RigFactory = Callable[..., Rig]


@pytest.fixture
def rig_factory(tmp_path: Path) -> Iterator[RigFactory]:
    rigs: list[Rig] = []

    def make(game: str, **kwargs: Any) -> Rig:
        rig = Rig(tmp_path, game, **kwargs)
        rigs.append(rig)
        return rig

    yield make
    for rig in rigs:
        rig.close()


def scenarios_for(game: str, count: int) -> list[Path]:
    paths = sorted(p for p in SCENARIOS.glob("*.json") if not p.name.endswith(".expected.json")
                   and json.loads(p.read_text())["game"] == game
                   and not json.loads(p.read_text()).get("rules")
                   and json.loads(p.read_text())["paytable"] in ("example", "paytable-1")
                   and "meter" not in json.loads(p.read_text()))
    return paths[:count]


def played_by_p_spot(settlements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A scenario's settlements as the rig plays them: spot N's player is ``pN``."""
    return [{**settlement, "player": f"p{settlement['seat']}"} for settlement in settlements]

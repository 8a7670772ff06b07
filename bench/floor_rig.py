"""Tables and a floor service as real processes, for the floor's tests and its benchmark.

:class:`TableProcess` is the daemon (``python -m controller.cli.main run``) on simulators, as
:class:`bench.pipeline.DaemonProcess` runs it, with its own table id and a CMS stream, and it
can be killed (SIGKILL) and started again on the same journal and simulators.
:class:`FloorProcess` is ``lowball-table floor`` on a floor.toml naming those tables.
:class:`RatedDealer` plays hands with a player id on each spot, :class:`PoolDealer` with a
progressive wager on each spot too (and, when asked, a jackpot dealt).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from bench import processes
from bench.pipeline import ROOT, DaemonProcess, StreamedDealer
from bench.power_loss import CREDENTIAL, _toml_value
from controller.settings.table_config import default_config_path, load_config, shipped_config_dir

DEADLINE_S = 30.0
T = TypeVar("T")


def _toml(sections: dict[str, dict[str, Any]]) -> str:
    return "".join(f"[{name}]\n" + "".join(f"{key} = {_toml_value(value)}\n"
                                           for key, value in values.items()) + "\n"
                   for name, values in sections.items())


class TableProcess(DaemonProcess):
    """One table daemon with id ``table_id`` and a CMS stream, on simulators."""

    def __init__(self, table_id: str, game: str = "three_card_lowball",
                 durability: str = "full", root: Path | None = None,
                 link: tuple[str, str] | None = None, stale_after_ms: int | None = None):
        """``link``: (pool id, the floor's pool channel endpoint) makes the table linked;
        ``stale_after_ms``: how long it goes without hearing the pool before the link is lost
        (the table's default if None)."""
        from simulators.meter import AlphaSignModel
        from simulators.pty_transport import PtyTransport
        from simulators.shoe import Lbs1ShoeModel
        from simulators.spots import SpotControllerModel

        self.game, self.durability, self.table_id = game, durability, table_id
        self.link, self.stale_after_ms = link, stale_after_ms
        self.commands = self.sub = None
        self._resources = contextlib.ExitStack()
        try:
            self.tmp = tempfile.TemporaryDirectory(prefix=f"lowball-floor-{table_id}-",
                                                   dir=root)
            self._resources.callback(self.tmp.cleanup)
            self.dir = Path(self.tmp.name)
            self.shoe = self._simulator(PtyTransport(Lbs1ShoeModel(), name="shoe"))
            self.spots = self._simulator(PtyTransport(SpotControllerModel(), name="spots"))
            self.meter = self._simulator(PtyTransport(AlphaSignModel(), name="meter"))
            self.endpoint = f"ipc://{self.dir}/commands"
            self.events_endpoint = f"ipc://{self.dir}/events"
            self.replay_endpoint = f"ipc://{self.dir}/replay"
            self.cms_events = f"ipc://{self.dir}/cms-events"
            self.cms_replay = f"ipc://{self.dir}/cms-replay"
            self.state_dir = self.dir / "state"
            self.config = self._write_config()
            self.log = self._resources.enter_context(open(self.dir / "daemon.log", "ab"))
            import zmq
            self.context = zmq.Context()
            self._resources.callback(self._close_sockets)
            self._resources.callback(self._stop_daemon)
            self.start()
            opened = self.ask({"command": "open"})
            if not opened["ok"]:
                raise RuntimeError(f"table {table_id} did not open: {opened}")
        except BaseException:
            self.close()
            raise

    def _write_config(self) -> Path:
        shipped = load_config(default_config_path(self.game)).config
        path = self.dir / "table.toml"
        path.write_text(_toml({
            "table": {"id": self.table_id, "game": self.game, "paytable": shipped.table.paytable,
                      "paytables_file": str(shipped_config_dir() / "paytables.toml"),
                      "spots": 7},
            "limits": {"min_ante": 1, "max_ante": 10**7, "max_lowdown_bonus": 10**7},
            "devices.shoe": {"driver": "lbs1", "port": self.shoe.url},
            "devices.spots": {"driver": "spots-ascii", "port": self.spots.url},
            "devices.meter": {"driver": "alpha", "port": self.meter.url},
            "stream": {"events": self.events_endpoint, "replay": self.replay_endpoint,
                       "commands": self.endpoint, "cms_events": self.cms_events,
                       "cms_replay": self.cms_replay},
            "security": {"supervisor_credential_sha256":
                         hashlib.sha256(CREDENTIAL.encode()).hexdigest()},
        }) + ("" if self.link is None else _toml({"progressive.link": {
            "pool": self.link[0], "endpoint": self.link[1],
            **({} if self.stale_after_ms is None
               else {"stale_after_ms": self.stale_after_ms})}})),
            encoding="utf-8")
        load_config(path)
        return path

    def hears_pool(self) -> bool:
        """A linked table hears its pool: its last journaled ``pool_link`` is ``connected``."""
        from bench.power_loss import JournalView
        from controller.stream.journal import journal_path

        status = None
        for _seq, _ts, kind, message in JournalView(journal_path(self.state_dir)).records():
            if kind == "pool_link":
                status = json.loads(message)["data"]["status"]
        return status == "connected"

    @property
    def paytable(self) -> str:
        return load_config(self.config).config.table.paytable

    def start(self) -> None:
        """Start the daemon on this table's journal and wait until it answers."""
        self.process = subprocess.Popen(
            [sys.executable, "-m", "controller.cli.main", "run", "--config", str(self.config),
             "--state-dir", str(self.state_dir), "--log-format", "json",
             "--durability", self.durability],
            cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT)
        self._await_ready(self.dir)

    def _stop_daemon(self) -> None:
        if hasattr(self, "process"):  # set by start(): a start that failed left none to stop
            super()._stop_daemon()

    def kill(self) -> None:
        """SIGKILL the daemon, as a power cut would stop it."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        if self.commands is not None:
            self.commands.close()
        if self.sub is not None:
            self.sub.close(0)
        self.commands = self.sub = None

    def floor_entry(self) -> dict[str, str]:
        return {"id": self.table_id, "cms_events": self.cms_events,
                "cms_replay": self.cms_replay}


class RatedDealer(StreamedDealer):
    """A :class:`bench.pipeline.StreamedDealer` whose wagers name a player per spot."""

    def __init__(self, table: TableProcess, players: dict[int, str], **kwargs: Any):
        super().__init__(table, seats=tuple(sorted(players)), **kwargs)
        self.players = players

    def _ask(self, request: dict[str, Any]) -> None:
        if request.get("command") == "place":
            request = {**request, "player": self.players[request["spot"]]}
        super()._ask(request)


#: The pat 4-2-A dealt to the first seat and to the dealer of a jackpot hand.
_JACKPOT_SEAT, _JACKPOT_DEALER = ("4c", "2c", "Ah"), ("4d", "2d", "As")


def jackpot_deck(seats: int, seed: int = 0) -> list[str]:
    """A Three Card Lowball deck for ``seats`` spots whose first spot and the dealer are both
    dealt a pat 4-2-A (the jackpot); the other spots and the draws take cards shuffled with
    ``seed`` from the rest."""
    from simulators.shoe import card_order

    rest = [str(card) for card in card_order(seed=seed)
            if str(card) not in _JACKPOT_SEAT + _JACKPOT_DEALER]
    deck: list[str] = []
    for round_ in range(3):
        deck += [_JACKPOT_SEAT[round_], *(rest.pop() for _ in range(seats - 1)),
                 _JACKPOT_DEALER[round_]]
    return deck + rest


class PoolDealer(RatedDealer):
    """A :class:`RatedDealer` that places the progressive on every spot before each lock.
    After :meth:`jackpot_next` its next hand deals a jackpot to its first spot; the jackpot is
    verified (by :data:`bench.power_loss.CREDENTIAL`'s supervisor) when :meth:`verify` is
    called, or before the hand after it, as a supervisor would take a while to come."""

    def __init__(self, table: TableProcess, players: dict[int, str], **kwargs: Any):
        super().__init__(table, players, **kwargs)
        self.deck: list[str] | None = None
        self.awaiting_verification = False
        self.jackpots = 0
        #: called once the next lock is accepted (a test cuts the link mid-hand with it)
        self.after_lock: Callable[[], Any] | None = None

    def jackpot_next(self) -> None:
        self.deck = jackpot_deck(len(self.seats), self.rng.randrange(2**32))

    def verify(self) -> None:
        if self.awaiting_verification:
            if getattr(self.daemon, "link", None) is not None:
                # a linked table's jackpot is verified once the pool has claimed it
                wait_until(lambda: "waiting for pool" not in
                           self.daemon.ask({"command": "status"})["state"]["expecting"],
                           "the pool's claim of the jackpot", timeout=60, poll=0.1)
            self._ask({"command": "verify_jackpot", "credential": CREDENTIAL})
            self.awaiting_verification = False

    def hand(self) -> None:
        self.verify()
        jackpot = self.deck is not None
        super().hand()
        if jackpot:
            self.awaiting_verification = True
            self.jackpots += 1

    def _ask(self, request: dict[str, Any]) -> None:
        if request.get("command") == "lock":
            for seat in self.seats:
                super()._ask({"command": "place", "spot": seat, "wager": "progressive",
                              "amount": 100})
            if self.deck is not None:
                self.daemon.shoe.device.load(self.deck)
                self.deck = None
        super()._ask(request)
        if request.get("command") == "lock" and self.after_lock is not None:
            after, self.after_lock = self.after_lock, None
            after()


class FollowedTable(Protocol):
    """A table the floor follows, as its entry in floor.toml names it."""

    def floor_entry(self) -> dict[str, str]: ...


def write_floor_config(path: Path, dsn: str, tables: Sequence[FollowedTable],
                       house_edges: dict[str, str], pools: dict[str, list[str]] | None = None,
                       pool_link: str | None = None, **service: Any) -> Path:
    """floor.toml for ``tables``; ``pools``: pool id -> its tables (the progressive's
    defaults, as the tables' configs have them); ``pool_link``: the pool channel's endpoint."""
    sections: dict[str, dict[str, Any]] = {"database": {"dsn": dsn}}
    if service:
        sections["service"] = service
    if pool_link is not None:
        sections["pool_link"] = {"endpoint": pool_link}
    lines = [_toml(sections)]
    for table in tables:
        lines.append("[[tables]]\n" + "".join(f"{key} = {_toml_value(value)}\n"
                                              for key, value in table.floor_entry().items()))
    for pool_id, members in (pools or {}).items():
        lines.append(f"[[pools]]\nid = {_toml_value(pool_id)}\n"
                     f"tables = [{', '.join(_toml_value(table) for table in members)}]\n")
    for paytable, edge in house_edges.items():
        lines.append(f'[paytables."{paytable}"]\nhouse_edge = "{edge}"\n')
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


class FloorProcess:
    """``lowball-table floor --config PATH`` as its own process."""

    def __init__(self, config: Path, log: Path):
        self.config, self.log_path = config, log
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop/kill
        self.process = subprocess.Popen(
            [sys.executable, "-m", "controller.cli.main", "floor", "--config", str(self.config),
             "--log-format", "json"], cwd=ROOT, stdout=self._log, stderr=subprocess.STDOUT,
            env={**os.environ})

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self._log.close()

    def stop(self) -> int:
        assert self.process is not None
        code = processes.stop(self.process, DEADLINE_S)
        self._log.close()
        return code

    def log_tail(self) -> str:
        return self.log_path.read_bytes()[-3000:].decode("utf-8", "replace")


def wait_until(predicate: Callable[[], T], what: str, timeout: float = DEADLINE_S,
               poll: float = 0.05) -> T:
    """Poll ``predicate`` until it returns something true, or fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError(f"timed out waiting for {what}")

"""``lowball-table demo --floor N``: N Three Card Lowball tables, the floor service and one
linked pool, on a throwaway local PostgreSQL.

Each table is a daemon on its own simulated shoe, spot controller and meter sign, dealt by a
simulated dealer (progressive wagers, jackpots verified by its supervisor); its streams are on
``ipc://`` endpoints in its own directory. The floor service follows every table's CMS stream
into a PostgreSQL cluster started for the demo (``initdb``/``pg_ctl``, as the floor's tests
start theirs) and fills the pool ``LINK-1``'s ledger. Once a second the demo prints the hands
stored and the pool's meter (or the jackpot that locks it). The cluster is removed at the end;
the journals, logs and ``floor.toml`` stay in the state directory.
"""

from __future__ import annotations

import argparse
import contextlib
import secrets
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from controller.cli import logs
from controller.settings.table_config import Stream

POOL_ID = "LINK-1"
#: How long the demo waits, after the dealers stop, for the floor to store the last hands.
CATCH_UP_S = 30.0


def _table(number: int, state_dir: Path, credential: str, args: argparse.Namespace,
           resources: contextlib.ExitStack) -> tuple[str, Any, Any, Stream]:
    """Start table ``TCL-NN`` on simulators, linked to the pool; (table id, daemon, shoe
    simulator, endpoints)."""
    from controller.settings.table_config import PoolLinkSettings
    from controller.cli.demo import demo_config
    from controller.daemon.loop import TableDaemon
    from simulators.meter import AlphaSignModel
    from simulators.pty_transport import PtyTransport
    from simulators.shoe import Lbs1ShoeModel
    from simulators.spots import SpotControllerModel

    table_id = f"TCL-{number:02d}"
    directory = state_dir / table_id
    directory.mkdir(parents=True, exist_ok=True)
    seed = None if args.seed is None else args.seed + number
    simulators: list[PtyTransport[Any]] = [
        PtyTransport(Lbs1ShoeModel(seed=seed), name="shoe"),
        PtyTransport(SpotControllerModel(), name="spots"),
        PtyTransport(AlphaSignModel(), name="meter")]
    for simulator in simulators:
        simulator.start()
        resources.callback(simulator.stop)
    shoe, spots, meter = simulators
    endpoint = f"ipc://{directory}/"
    stream = Stream(events=endpoint + "events", replay=endpoint + "replay",
                    commands=endpoint + "commands", cms_events=endpoint + "cms-events",
                    cms_replay=endpoint + "cms-replay")
    loaded = demo_config("three_card_lowball", shoe=shoe.url, spots=spots.url, meter=meter.url,
                         credential=credential, stream=stream)
    link = PoolLinkSettings(pool=POOL_ID, endpoint=_pool_channel(state_dir))
    config = loaded.config.model_copy(
        update={"table": loaded.config.table.model_copy(update={"id": table_id}),
                "progressive": loaded.config.progressive.model_copy(update={"link": link})})
    loaded = loaded.model_copy(update={"config": config})
    daemon = TableDaemon(loaded, state_dir=directory)
    daemon.start()
    resources.callback(daemon.close)
    thread = threading.Thread(target=daemon.run, name=table_id, daemon=True)
    thread.start()
    resources.callback(thread.join, 10)
    resources.callback(daemon.request_stop)
    return table_id, daemon, shoe, stream


def _pool_channel(state_dir: Path) -> str:
    return f"ipc://{state_dir}/pool-channel"


def _floor_toml(path: Path, dsn: str, tables: list[tuple[str, Stream]]) -> Path:
    lines = ["[database]", f'dsn = "{dsn}"', "", "[pool_link]",
             f'endpoint = "{_pool_channel(path.parent)}"', "",
             "[dashboard]", 'host = "127.0.0.1"', "port = 0", ""]
    for table_id, stream in tables:
        lines += ["[[tables]]", f'id = "{table_id}"', f'cms_events = "{stream.cms_events}"',
                  f'cms_replay = "{stream.cms_replay}"', ""]
    members = ", ".join(f'"{table_id}"' for table_id, _ in tables)
    lines += ["[[pools]]", f'id = "{POOL_ID}"', f"tables = [{members}]", ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _floor_state(dsn: str) -> dict[str, Any] | None:
    """Hands stored per table, the pool's meter row and what the pool has read, or None while
    the database is not ready."""
    import psycopg

    from controller.floor import pool

    try:
        with psycopg.connect(dsn, connect_timeout=5) as connection:
            hands: dict[str, int] = dict(connection.execute(
                "SELECT table_id, count(*) FROM floor_events WHERE type = 'hand_settled' "
                "GROUP BY table_id").fetchall())
            applied: dict[str, int] = dict(connection.execute(
                "SELECT table_id, applied_through FROM floor_pool_tables").fetchall())
            meters = pool.meters(connection)
    except psycopg.Error:
        return None
    return {"hands": hands, "applied": applied,
            "meter": next((row for row in meters if row["pool_id"] == POOL_ID), None)}


def _signs(daemons: list[Any]) -> str:
    """What the linked tables' signs show, and how many are connected to the pool channel."""
    connected = sum(daemon.table.pool_link == "connected" for daemon in daemons)
    shown = sorted({text for daemon in daemons
                    if daemon.devices.meter is not None
                    and (text := daemon.devices.meter.text) is not None})
    return f"; links {connected}/{len(daemons)} connected, signs: {' | '.join(shown) or '-'}"


def _status_line(state: dict[str, Any] | None, tables: int) -> str:
    from controller.core.money import format_cents

    if state is None or state["meter"] is None:
        return f"floor: {tables} tables; the floor service is starting"
    meter = state["meter"]
    pool = (f"JACKPOT on {meter['locked_by_table']} (hand {meter['locked_by_hand']}), awaiting "
            f"verification; meter {format_cents(meter['meter'])}"
            if meter["locked_by_table"] else f"meter {format_cents(meter['meter'])}")
    return (f"floor: {tables} tables, {sum(state['hands'].values())} hands stored; "
            f"pool {POOL_ID}: {pool}")


def run(args: argparse.Namespace) -> int:
    from controller.floor.config import load_floor_config
    from controller.floor.local_cluster import ClusterUnavailable, LocalCluster
    from controller.floor.service import FloorService
    from simulators.dealer import SimulatedDealer

    if args.game != "three_card_lowball":
        print("lowball-table demo: --floor links Three Card Lowball tables (its progressive); "
              "leave out --game", file=sys.stderr)
        return 2
    state_dir = Path(args.state_dir or tempfile.mkdtemp(prefix="lowball-floor-demo-"))
    state_dir.mkdir(parents=True, exist_ok=True)
    try:
        cluster = LocalCluster(fsync=False)
    except ClusterUnavailable as error:
        print(f"lowball-table demo --floor: {error}", file=sys.stderr)
        return 1
    log_file = open(state_dir / "demo.log", "a", encoding="utf-8")
    logs.configure(json_lines=True, stream=log_file)
    credential = secrets.token_urlsafe(24)
    stop = threading.Event()
    dealers: list[SimulatedDealer] = []
    with contextlib.ExitStack() as resources:
        resources.callback(log_file.close)
        resources.callback(cluster.close)
        cluster.start()
        import psycopg

        with psycopg.connect(cluster.dsn, autocommit=True) as connection:
            connection.execute("CREATE DATABASE floor")
        dsn = cluster.dsn_for("floor")
        tables = [_table(number, state_dir, credential, args, resources)
                  for number in range(1, args.floor + 1)]
        loaded = load_floor_config(_floor_toml(state_dir / "floor.toml", dsn,
                                               [(table_id, stream)
                                                for table_id, _, _, stream in tables]))
        service = FloorService(loaded)
        floor_thread = threading.Thread(target=service.run, name="floor", daemon=True)
        floor_thread.start()
        resources.callback(floor_thread.join, 15)
        resources.callback(service.request_stop)
        deadline = time.monotonic() + CATCH_UP_S
        while service.dashboard is None and floor_thread.is_alive() \
                and time.monotonic() < deadline:
            stop.wait(0.1)
        if service.dashboard is not None:
            print(f"demo: the floor's dashboard: {service.dashboard.url}", file=sys.stderr)
        threads = []
        for table_id, _daemon, shoe, stream in tables:
            dealer = SimulatedDealer(command_endpoint=stream.commands, shoe=shoe.device,
                                     game="three_card_lowball", supervisor_credential=credential,
                                     seed=None if args.seed is None
                                     else args.seed * 100 + len(dealers),
                                     pace_s=args.pace)
            dealers.append(dealer)
            threads.append(threading.Thread(target=dealer.run, args=(stop, args.hands),
                                            name=f"dealer-{table_id}", daemon=True))
        for thread in threads:
            thread.start()
        print(f"demo: {args.floor} tables linked in pool {POOL_ID}; the floor store on a "
              f"throwaway PostgreSQL ({dsn}); journals, logs and floor.toml in {state_dir}",
              file=sys.stderr)
        try:
            while any(thread.is_alive() for thread in threads):
                print(_status_line(_floor_state(dsn), args.floor)
                      + _signs([daemon for _, daemon, _, _ in tables]),
                      file=sys.stderr, flush=True)
                for thread in threads:
                    thread.join(1.0 / len(threads))
        except KeyboardInterrupt:
            pass
        finally:
            stop.set()
            for thread in threads:
                thread.join(10)
        last = {table_id: daemon.journal.last_seq for table_id, daemon, _, _ in tables}
        deadline = time.monotonic() + CATCH_UP_S
        state = _floor_state(dsn)
        while time.monotonic() < deadline and (
                state is None or any(state["applied"].get(table_id, 0) < seq
                                     for table_id, seq in last.items())):
            stop.wait(0.2)
            state = _floor_state(dsn)
        print(_status_line(state, args.floor), file=sys.stderr)
        status = _summary(state, dealers)
    return status


def _summary(state: dict[str, Any] | None, dealers: list[Any]) -> int:
    from controller.core.money import format_cents

    played = sum(dealer.hands_played for dealer in dealers)
    if state is None or state["meter"] is None:
        print(f"demo stopped after {played} hands; the floor store was not ready",
              file=sys.stderr)
        return 1
    meter = state["meter"]
    balanced = meter["meter"] == meter["ledger_sum"]
    ledger = "= the sum of its ledger" if balanced else f"!= its ledger's sum {meter['ledger_sum']}"
    print(f"demo stopped after {played} hands; {sum(state['hands'].values())} stored; pool "
          f"{POOL_ID}: meter {format_cents(meter['meter'])} {ledger}"
          f" (contributions {format_cents(meter['contributions'])}, jackpots "
          f"{format_cents(meter['jackpots'])}, reseeds {format_cents(meter['reseeds'])})",
          file=sys.stderr)
    return 0 if balanced else 1

"""The floor at scale: many table daemons on simulators, dealing as fast as they can, into
one PostgreSQL through one floor service (``python -m bench.floor``, in ``make bench``).

Each table runs in a worker process of its own (its daemon, its three simulators and a
scripted dealer), so the tables do not share one interpreter's lock. The floor service is
``lowball-table floor`` as its own process, and PostgreSQL a local cluster with fsync on.
Figures: events stored per second while the tables deal, and the lag from each event's
journal time (``ts``) to its row in the store (``stored_at``, in the batch's transaction):
median and p99. Every seq of every journal is then checked stored exactly once.

The Three Card Lowball tables are linked in one pool (``LINK-1``, each through the floor's
pool channel: ``[progressive.link]``) and wager the progressive on every spot; every ``JACKPOT_EVERY``-th hand of each deals a jackpot, so the tables hit within
a fraction of a second of each other, and each supervisor verifies at the table's next hand.
The pool's figures: hits claimed, how many while the pool was locked by an earlier one, and
whether they were ordered and paid as the pool's rules say (the first the meter as it stood,
each later one the seed), each journaled hit claimed once and the ledger equal to the
journaled contributions minus jackpots plus reseeds. The catch-up run (the floor service
started after the tables dealt) has no pool: a linked table takes the progressive only while it
hears the floor.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from bench.pipeline import ROOT
from controller.stream.cms_view import CARD_TYPES

if TYPE_CHECKING:
    import psycopg

GAMES = ("three_card_lowball", "cali_lowball")
#: Records the CMS family holds back until their hand settles: their lag is the hand's length
#: by design, so it is reported apart.
HELD = tuple(sorted(CARD_TYPES))
#: Every how many hands a Three Card Lowball table deals a jackpot.
JACKPOT_EVERY = 5
POOL_ID = "LINK-1"
#: Tables starting at once: twenty daemons importing at the same time on two cores would not
#: all answer within the start deadline.
STARTING = 4


def worker(table_id: str, game: str, root: str, link: str | None = None) -> None:
    """One table: print its endpoints, then obey lines on stdin: ``go SECONDS PACE OFFSET``
    deals for that long, a hand every PACE seconds (0: one after another) from OFFSET seconds
    on (the tables of a floor do not all start a hand at the same instant), and prints the
    hands (and a Three Card Lowball table's contributions and jackpots, from its journal);
    ``stop`` ends. ``link``: the floor's pool channel, which a Three Card Lowball table is
    linked to the pool through (a minute without hearing it before the link is lost: the
    floor service is busy); without it, the table deals no progressive."""
    from bench.floor_rig import PoolDealer, RatedDealer, TableProcess, wait_until

    linked = game == "three_card_lowball" and link is not None
    table = TableProcess(table_id, game, durability="batched", root=Path(root),
                         link=(POOL_ID, link) if linked and link else None,
                         stale_after_ms=60_000 if linked else None)
    try:
        print(json.dumps({**table.floor_entry(), "state_dir": str(table.state_dir),
                          "paytable": table.paytable, "game": game}), flush=True)
        for line in sys.stdin:
            command = line.split()
            if command[0] == "go":
                if linked:
                    wait_until(table.hears_pool, "the table hearing the pool", 120)
                players = {1: f"{table_id}-P1", 3: f"{table_id}-P3"}
                seed = hash(table_id) & 0xFFFF
                pool_dealer = PoolDealer(table, players, seed=seed) if linked else None
                dealer = pool_dealer or RatedDealer(table, players, seed=seed)
                seconds, pace, offset = (float(value) for value in command[1:4])
                hands, start = 0, time.monotonic() + offset
                time.sleep(offset)
                while time.monotonic() < start + seconds:
                    if pool_dealer and hands % JACKPOT_EVERY == JACKPOT_EVERY - 1:
                        pool_dealer.jackpot_next()
                    dealer.hand()
                    hands += 1
                    # the pace of a busy table, not synchronisation: the next hand's slot
                    time.sleep(max(0.0, start + hands * pace - time.monotonic()))
                if pool_dealer:
                    pool_dealer.verify()
                print(json.dumps({"hands": hands, **_progressive(str(table.state_dir))}),
                      flush=True)
            elif command[0] == "stop":
                break
    finally:
        table.close()


def _progressive(state_dir: str) -> dict[str, int]:
    """A table's journaled contributions and jackpot hits."""
    from bench.power_loss import JournalView
    from controller.stream.journal import journal_path

    contributions = hits = 0
    for _seq, _ts, kind, message in JournalView(journal_path(state_dir)).records():
        if kind == "meter_contributed":
            contributions += json.loads(message)["data"]["contribution"]
        elif kind == "jackpot_pending":
            hits += 1
    return {"contributions": contributions, "hits": hits}


def _journal_seqs(state_dir: str) -> int:
    from bench.power_loss import JournalView
    from controller.stream.journal import journal_path

    return JournalView(journal_path(state_dir)).last_seq()


def floor_at_scale(tables: int = 20, seconds: float = 30.0, pace: float = 0.0,
                   catch_up: bool = False) -> dict[str, float]:
    """``tables`` tables deal for ``seconds`` (a hand every ``pace`` s each, 0: flat out) into
    one floor service. ``catch_up``: the floor service starts only once they have dealt, and
    its figure is how fast it stores their whole history, with the CPU to itself."""
    import psycopg

    from bench.floor_rig import FloorProcess, wait_until
    from controller.floor.local_cluster import LocalCluster

    # the pool's tables are linked to it through the floor's pool channel: with no floor
    # service while they deal (catch_up), no table could take the progressive, so none is linked

    with tempfile.TemporaryDirectory(prefix="lowball-bench-floor-") as tmp, \
            LocalCluster(fsync=True) as cluster:
        with psycopg.connect(cluster.dsn, autocommit=True) as connection:
            connection.execute("CREATE DATABASE floor")
        dsn = cluster.dsn_for("floor")

        def count() -> int:
            try:
                with psycopg.connect(dsn) as connection:
                    stored: int = _scalar(connection, "SELECT count(*) FROM floor_events")
                    return stored
            except psycopg.Error:
                return 0

        link = None if catch_up else f"ipc://{tmp}/pool"
        workers: list[subprocess.Popen[str]] = []
        floor = None
        try:
            entries: list[dict[str, Any]] = []
            for number in range(tables):
                workers.append(subprocess.Popen(
                    [sys.executable, "-m", "bench.floor", "worker", f"T-{number + 1:02d}",
                     GAMES[number % 2], tmp, *(["--link", link] if link else [])], cwd=ROOT, stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE, text=True))
                if len(workers) - len(entries) >= STARTING:
                    entries.append(_ready(workers[len(entries)]))
            entries += [_ready(process) for process in workers[len(entries):]]
            config = _floor_config(Path(tmp) / "floor.toml", dsn, entries, link)
            if not catch_up:
                floor = FloorProcess(config, Path(tmp) / "floor.log")
                opened = sum(_journal_seqs(entry["state_dir"]) for entry in entries)
                wait_until(lambda: count() >= opened, "the tables' opening events stored", 120)
            started = time.time()
            for number, process in enumerate(workers):
                commands = _pipes(process)[0]
                commands.write(f"go {seconds} {pace} {pace * number / tables}\n")
                commands.flush()
            dealt: list[dict[str, Any]] = [json.loads(_pipes(process)[1].readline())
                                           for process in workers]
            hands = sum(table["hands"] for table in dealt)
            total = sum(_journal_seqs(entry["state_dir"]) for entry in entries)
            if catch_up:
                began = time.monotonic()
                floor = FloorProcess(config, Path(tmp) / "floor.log")
            wait_until(lambda: count() >= total, "every event stored", 600, poll=0.2)
            took = time.monotonic() - began if catch_up else 0.0
            if link:
                wait_until(lambda: _pool_caught_up(dsn, entries), "the pool's ledger filled",
                           120, poll=0.2)
        finally:
            if floor is not None:
                floor.stop()
            _stop(workers)
        with psycopg.connect(dsn) as connection:
            figures = _figures(connection, started)
            if link:
                figures.update(_pool_figures(connection, dealt))
            gaps = _scalar(connection,
                           """SELECT count(*) FROM (SELECT table_id, count(*) AS n, max(seq) AS top
                                                      FROM floor_events GROUP BY table_id) t
                               WHERE n <> top""")
        if catch_up:
            figures["events_per_s"] = total / took
        return {**figures, "tables": tables, "hands": hands, "hands_per_s": hands / seconds,
                "all_seqs_once": float(figures["stored"] == total and gaps == 0)}


def _pipes(process: subprocess.Popen[str]) -> tuple[IO[str], IO[str]]:
    """A worker's stdin and stdout (it was started with both piped)."""
    assert process.stdin is not None and process.stdout is not None
    return process.stdin, process.stdout


def _row(connection: psycopg.Connection[Any], query: str,
         params: Sequence[Any] = ()) -> tuple[Any, ...]:
    """The one row ``query`` returns (an aggregate always returns one)."""
    row = connection.execute(query, params).fetchone()
    assert row is not None, query
    return tuple(row)


def _scalar(connection: psycopg.Connection[Any], query: str, params: Sequence[Any] = ()) -> Any:
    return _row(connection, query, params)[0]


def _ready(process: subprocess.Popen[str]) -> dict[str, Any]:
    line = _pipes(process)[1].readline()
    if not line:
        raise RuntimeError(f"a table worker did not start (exit status {process.wait()})")
    entry: dict[str, Any] = json.loads(line)
    return entry


def _pool_caught_up(dsn: str, entries: list[dict[str, Any]]) -> bool:
    """The pool has read every stored event of its tables."""
    import psycopg

    try:
        with psycopg.connect(dsn) as connection:
            behind = _scalar(connection,
                             """SELECT count(*) FROM floor_pool_tables t
                                  JOIN floor_cursors c USING (table_id)
                                 WHERE t.applied_through < c.resume_after""")
            linked = _scalar(connection, "SELECT count(*) FROM floor_pool_tables")
    except psycopg.Error:
        return False
    return bool(behind == 0 and linked == sum(entry["game"] == "three_card_lowball"
                                              for entry in entries))


def _pool_figures(connection: psycopg.Connection[Any],
                  dealt: list[dict[str, Any]]) -> dict[str, float]:
    """The pool's hits, and whether each was claimed once and paid as the rules say."""
    seed = _scalar(connection, "SELECT seed FROM floor_pools WHERE pool_id = %s", (POOL_ID,))
    hits = connection.execute(
        """SELECT h.lock_order, h.paid, cardinality(h.seats),
                  (SELECT coalesce(sum(l.amount), 0) FROM floor_pool_ledger l
                    WHERE l.pool_id = h.pool_id AND l.entry < j.entry)
             FROM floor_pool_hits h
             JOIN floor_pool_ledger j ON j.table_id = h.table_id AND j.seq = h.seq
                                     AND j.kind = 'jackpot'
            ORDER BY h.hit""").fetchall()
    ordered = all(paid == (meter // seats if order == 1 else seed // seats) * seats
                  for order, paid, seats, meter in hits)
    meters = _row(connection,
                  "SELECT meter, ledger_sum, contributions FROM floor_pool_meters WHERE pool_id = %s",
                  (POOL_ID,))
    journaled_hits = sum(table.get("hits", 0) for table in dealt)
    journaled = sum(table.get("contributions", 0) for table in dealt)
    return {"pool_hits": len(hits),
            "pool_hits_while_locked": sum(order > 1 for order, *_ in hits),
            "pool_ordered": float(ordered and len(hits) == journaled_hits
                                  and meters[0] == meters[1] and meters[2] == journaled)}


def _floor_config(path: Path, dsn: str, entries: list[dict[str, Any]],
                  link: str | None) -> Path:
    """floor.toml for the tables; with ``link`` (the pool channel), the pool of the Three Card
    Lowball tables."""
    from bench.power_loss import _toml_value

    text = f"[database]\ndsn = {_toml_value(dsn)}\n\n"
    if link:
        text += f"[pool_link]\nendpoint = {_toml_value(link)}\n\n"
    for entry in entries:
        text += "[[tables]]\n" + "".join(f"{key} = {_toml_value(entry[key])}\n"
                                         for key in ("id", "cms_events", "cms_replay"))
    linked = [entry["id"] for entry in entries if entry["game"] == "three_card_lowball"]
    if linked and link:
        text += (f"[[pools]]\nid = {_toml_value(POOL_ID)}\n"
                 f"tables = [{', '.join(_toml_value(table) for table in linked)}]\n")
    for paytable in sorted({entry["paytable"] for entry in entries}):
        text += f'[paytables."{paytable}"]\nhouse_edge = "0.03"\n'
    path.write_text(text, encoding="utf-8")
    return path


def _figures(connection: psycopg.Connection[Any], started: float) -> dict[str, float]:
    """Events stored since ``started`` and their lag from journal to store (cards apart)."""
    stored_all, events, first, last = _row(
        connection,
        """SELECT (SELECT count(*) FROM floor_events), count(*), min(stored_at), max(stored_at)
             FROM floor_events WHERE ts >= to_timestamp(%s)""", (started,))
    lag = """SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY stored_at - ts),
                    percentile_cont(0.99) WITHIN GROUP (ORDER BY stored_at - ts),
                    max(stored_at - ts)
               FROM floor_events WHERE ts >= to_timestamp(%s) AND {} type = ANY(%s)"""
    live = _row(connection, lag.format("NOT"), (started, list(HELD)))
    held = _row(connection, lag.format(""), (started, list(HELD)))
    milliseconds = [value.total_seconds() * 1000 for value in (*live, *held)]
    size = _scalar(connection, "SELECT pg_total_relation_size('floor_events')")
    return {"stored": stored_all, "events": events, "bytes_per_event": size / stored_all,
            "events_per_s": events / (last - first).total_seconds(),
            "lag_median_ms": milliseconds[0], "lag_p99_ms": milliseconds[1],
            "lag_max_ms": milliseconds[2], "held_median_ms": milliseconds[3]}


def _stop(workers: list[subprocess.Popen[str]]) -> None:
    for process in workers:
        if process.poll() is None:
            commands = _pipes(process)[0]
            try:
                commands.write("stop\n")
                commands.flush()
            except BrokenPipeError:
                pass
    for process in workers:
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def report(tables: int = 20, seconds: float = 30.0, pace: float = 0.0,
           catch_up: bool = False) -> dict[str, float]:
    figures = floor_at_scale(tables, seconds, pace, catch_up)
    how = f"a hand every {pace:g} s each" if pace else "as fast as they can"
    print(f"  {tables} tables dealing {how} for {seconds:g} s: {figures['hands']:,} hands "
          f"({figures['hands_per_s']:.1f}/s on the floor, "
          f"{figures['hands_per_s'] * 3600 / tables:,.0f} an hour a table)")
    if catch_up:
        print(f"  the floor service started afterwards stored their {figures['events']:,} "
              f"events at {figures['events_per_s']:,.0f} events/s (one floor service, one "
              "PostgreSQL, fsync on)")
    else:
        print(f"  stored as they dealt: {figures['events']:,} events, "
              f"{figures['events_per_s']:,.0f} events/s (one floor service, one PostgreSQL, "
              "fsync on)")
        print(f"  journal -> store lag, records sent live: median "
              f"{figures['lag_median_ms']:.0f} ms, p99 {figures['lag_p99_ms']:.0f} ms, max "
              f"{figures['lag_max_ms']:.0f} ms; cards, held by the CMS family until their "
              f"hand settles: median {figures['held_median_ms']:.0f} ms")
    print(f"  {figures['events'] / figures['hands']:.1f} events a hand; "
          f"{figures['bytes_per_event']:,.0f} bytes an event in floor_events with its indexes")
    print(f"  every seq of every journal stored exactly once: "
          f"{'yes' if figures['all_seqs_once'] else 'NO'}")
    if catch_up:
        print("  (no pool: its tables take the progressive only while they hear the floor)")
        return figures
    print(f"  linked pool ({(tables + 1) // 2} Three Card Lowball tables): "
          f"{figures['pool_hits']} jackpot hits, {figures['pool_hits_while_locked']} while an "
          f"earlier one awaited verification; ordered and paid as the rules say, each once, "
          f"the ledger equal to the journaled contributions: "
          f"{'yes' if figures['pool_ordered'] else 'NO'}")
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.floor", description=__doc__)
    sub = parser.add_subparsers(dest="what")
    run = sub.add_parser("run")
    run.add_argument("--tables", type=int, default=20)
    run.add_argument("--seconds", type=float, default=30.0)
    run.add_argument("--pace", type=float, default=0.0,
                     help="seconds between one table's hands (0: one after another)")
    run.add_argument("--catch-up", action="store_true",
                     help="start the floor service after the tables have dealt")
    one = sub.add_parser("worker")
    one.add_argument("table_id")
    one.add_argument("game", choices=GAMES)
    one.add_argument("root")
    one.add_argument("--link", help="the floor's pool channel (the table is linked)")
    args = parser.parse_args(argv)
    if args.what == "worker":
        worker(args.table_id, args.game, args.root, args.link)
        return
    from bench.machine import describe

    print(f"machine: {describe()}")
    if args.what == "run":
        report(args.tables, args.seconds, args.pace, args.catch_up)
    else:
        run_all()


def run_all() -> None:
    """What ``make bench`` prints: 20 tables at a sustained pace (a hand every 2 s each, 30
    times a live table's 60 an hour), the floor service following them; then 20 tables flat
    out with the floor service started afterwards, storing their history alone."""
    print("\nthe floor: table daemons on simulators -> one floor service -> one PostgreSQL")
    report(20, 30.0, pace=2.0)
    report(20, 30.0, pace=0.0, catch_up=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()

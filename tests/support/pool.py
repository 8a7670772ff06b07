"""Linked tables (real daemon processes) and a floor service keeping their pool."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import ExitStack, closing
from pathlib import Path
from typing import Any

import psycopg
import pytest
import zmq

from bench.power_loss import CREDENTIAL, JournalView
from controller.stream.journal import journal_path

from tests.support.processes import PoolDealer, TableProcess, wait_until, FloorProcess, write_floor_config


SEED = 500_000  # the tables' and the pool's progressive seed (the shipped default)


POOL = "LINK-1"


#: The tables keep the link through the floor's kill and PostgreSQL's restart (the link cut
#: is tests/floor/test_pool_link.py's).
STALE_AFTER_MS = 60_000


def journal(table: TableProcess) -> list[tuple[int, str, dict[str, Any]]]:
    return [(seq, kind, json.loads(message)["data"])
            for seq, _ts, kind, message in JournalView(journal_path(table.state_dir)).records()]


def query(dsn: str, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    try:
        with psycopg.connect(dsn) as connection:
            return connection.execute(sql, args).fetchall()
    except psycopg.Error:  # PostgreSQL restarting, or not migrated yet
        return []


def pool_caught_up(dsn: str, tables: list[TableProcess]) -> bool:
    """Every journaled seq stored and read by the pool."""
    applied = dict(query(dsn, "SELECT table_id, applied_through FROM floor_pool_tables"))
    return all(applied.get(table.table_id) == journal(table)[-1][0] for table in tables)


def linked_table(table_id: str, endpoint: str) -> TableProcess:
    """A table daemon linked to :data:`POOL` through the floor's pool channel at ``endpoint``,
    keeping the link through a floor or PostgreSQL restart."""
    return TableProcess(table_id, link=(POOL, endpoint), stale_after_ms=STALE_AFTER_MS)


def link_up(table: TableProcess) -> bool:
    """The table hears the pool: its last ``pool_link`` is ``connected``."""
    links = [data for _, kind, data in journal(table) if kind == "pool_link"]
    return bool(links) and links[-1]["status"] == "connected"


def claimed(table: TableProcess, hand_id: str | None = None) -> bool:
    """The table heard the pool claim the jackpot of ``hand_id`` (by default its journal's
    last)."""
    records = journal(table)
    pending = [data["hand_id"] for _, kind, data in records if kind == "jackpot_pending"]
    hand_id = hand_id or (pending[-1] if pending else None)
    return hand_id is not None and any(
        kind == "jackpot_claimed" and data.get("hand_id") == hand_id for _, kind, data in records)


def settled(dsn: str, table: TableProcess) -> bool:
    """The pool has read every record of the table and the table shows the pool's meter as
    it stands: it journals nothing more until its next hand (a test can cut it there)."""
    records = journal(table)
    shown = [data for _, kind, data in records if kind == "pool_meter"]
    meters = query(dsn, "SELECT meter FROM floor_pools")
    applied = query(dsn, "SELECT applied_through FROM floor_pool_tables WHERE table_id = %s",
                    table.table_id)
    return bool(shown and meters and shown[-1]["meter"] == meters[0][0]
                and applied == [(records[-1][0],)])


def void_after_a_kill_mid_hand(table: TableProcess, wagers: dict[str, int], player: str) -> None:
    """Spot 2's ``wagers`` for ``player`` locked and three cards dealt, the daemon killed
    there and started again, the hand voided by a supervisor."""
    for wager, amount in wagers.items():
        assert table.ask({"command": "place", "spot": 2, "wager": wager, "amount": amount,
                          "player": player})["ok"]
    assert table.ask({"command": "lock"})["ok"]
    table.shoe.device.load(seed=11)
    table.shoe.device.deal(3)
    wait_until(lambda: sum(kind == "card_dealt" for _, kind, _ in journal(table)[-12:])
               >= 3, "cards dealt")
    table.kill()
    table.start()
    reply = table.ask({"command": "void", "reason": "controller restarted in a test",
                       "credential": CREDENTIAL})
    assert reply["ok"], reply


def deal(dealers: list[PoolDealer], hands: int) -> list[threading.Thread]:
    def run(dealer: PoolDealer) -> None:
        for _ in range(hands):
            dealer.hand()

    threads = [threading.Thread(target=run, args=(dealer,)) for dealer in dealers]
    for thread in threads:
        thread.start()
    return threads


@pytest.fixture
def tables(tmp_path: Path) -> Iterator[list[TableProcess]]:
    with ExitStack() as started:
        yield [started.enter_context(closing(linked_table(table_id, f"ipc://{tmp_path}/pool")))
               for table_id in ("TCL-01", "TCL-02")]


@pytest.fixture
def pooled_table(database: str, tmp_path: Path) -> Iterator[TableProcess]:  # noqa: F811
    """Table ``TCL-01`` linked to :data:`POOL`, which a floor service on ``database`` keeps;
    yielded once the table hears the pool. The floor is stopped and the table closed after."""
    endpoint = f"ipc://{tmp_path}/pool"
    table = linked_table("TCL-01", endpoint)
    floor = None
    try:
        config = write_floor_config(tmp_path / "floor.toml", database, [table], {},
                                    pools={POOL: [table.table_id]}, pool_link=endpoint)
        floor = FloorProcess(config, tmp_path / "floor.log")
        wait_until(lambda: link_up(table), "the table hears the pool")
        yield table
    finally:
        if floor is not None:
            floor.stop()
        table.close()


@pytest.fixture
def played_floor(tmp_path: Path) -> Iterator[tuple[zmq.Socket[bytes], TableProcess]]:
    """The test plays the floor: a PUB socket bound on the pool channel's ipc endpoint (no
    CURVE on ipc), and table ``TCL-01`` on the simulators linked to :data:`POOL` through it."""
    endpoint = f"ipc://{tmp_path}/pool"
    with zmq.Context() as context:
        floor: zmq.Socket[bytes] = context.socket(zmq.PUB)
        floor.setsockopt(zmq.LINGER, 0)
        floor.bind(endpoint)
        try:
            table = TableProcess("TCL-01", link=(POOL, endpoint))
            try:
                yield floor, table
            finally:
                table.close()
        finally:
            floor.close(0)


def contributions(table: TableProcess) -> int:
    return sum(data["contribution"] for _, kind, data in journal(table)
               if kind == "meter_contributed")


def caught_up(dsn: str, table: TableProcess) -> bool:
    """The floor has stored, and the pool applied, the table's journal to its end (read
    again each time: the pool's meter, heard after a hand, is journaled after it)."""
    last = [(journal(table)[-1][0],)]
    return query(dsn, "SELECT resume_after FROM floor_cursors") == last and \
        query(dsn, "SELECT applied_through FROM floor_pool_tables") == last

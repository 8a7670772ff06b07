"""A linked pool fed by real table daemons on the simulators, each linked to it, through the
floor service into a real PostgreSQL: two hits dealt at once on two tables ordered and each paid once, through the
floor service killed between events, PostgreSQL restarted, a table killed mid-hand (its hand
voided) and a table's stream replayed from its first seq; the ledger equals the tables'
journaled contributions minus voids and jackpots plus reseeds."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import ExitStack, closing
from pathlib import Path
from typing import Any

import psycopg
import pytest

from bench.floor_rig import FloorProcess, PoolDealer, TableProcess, wait_until, \
    write_floor_config
from bench.power_loss import CREDENTIAL, JournalView
from controller.floor.local_cluster import LocalCluster
from controller.stream.journal import journal_path

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


def finish(threads: list[threading.Thread]) -> None:
    for thread in threads:
        thread.join(90)
        assert not thread.is_alive()


@pytest.fixture
def tables(tmp_path: Path) -> Iterator[list[TableProcess]]:
    with ExitStack() as started:
        yield [started.enter_context(closing(linked_table(table_id, f"ipc://{tmp_path}/pool")))
               for table_id in ("TCL-01", "TCL-02")]


def test_the_pool_pays_each_hit_once_in_order_through_kills_and_restarts(postgres: LocalCluster, database: str,
                                                                         tables: list[TableProcess], tmp_path: Path) -> None:
    assert tables[0].link is not None
    config = write_floor_config(tmp_path / "floor.toml", database, tables, {},
                                pools={POOL: [table.table_id for table in tables]},
                                pool_link=tables[0].link[1])
    floor = FloorProcess(config, tmp_path / "floor.log")
    dealers = [PoolDealer(table, {1: f"P-{n}"}) for n, table in enumerate(tables)]
    try:
        wait_until(lambda: all(link_up(table) for table in tables), "the tables hear the pool")
        finish(deal(dealers, 2))
        wait_until(lambda: pool_caught_up(database, tables), "the first hands in the pool")

        # the floor killed while both tables deal, then started again
        dealing = deal(dealers, 3)
        wait_until(lambda: query(database, "SELECT 1 FROM floor_pool_ledger "
                                           "WHERE kind = 'contribution' OFFSET 5"),
                   "contributions of the hands under way")
        floor.kill()
        finish(dealing)
        floor.start()

        # two hits dealt at once on the two tables
        for dealer in dealers:
            dealer.jackpot_next()
        finish(deal(dealers, 1))
        wait_until(lambda: len(query(database, "SELECT 1 FROM floor_pool_hits")) == 2,
                   "both hits claimed", timeout=60)
        assert query(database, "SELECT locked_by_table FROM floor_pool_meters")[0][0]
        wait_until(lambda: all(claimed(table) for table in tables), "both claims heard",
                   timeout=30)

        # PostgreSQL restarted while the tables verify their jackpots and deal on
        for dealer in dealers:
            dealer.verify()
        dealing = deal(dealers, 2)
        postgres.restart()
        finish(dealing)
        wait_until(lambda: pool_caught_up(database, tables), "every hand in the pool",
                   timeout=60)

        # TCL-02 killed mid-hand, its progressive contributed: restarted, the hand voided
        void_after_a_kill_mid_hand(tables[1], {"ante": 500, "bonus": 500, "progressive": 100},
                                   "P-9")

        # TCL-01's whole stream replayed from its first seq
        assert floor.stop() == 0, floor.log_tail()
        with psycopg.connect(database) as connection:
            connection.execute("UPDATE floor_cursors SET resume_after = 0 "
                               "WHERE table_id = 'TCL-01'")
        floor.start()
        wait_until(lambda: all(link_up(table) for table in tables), "the tables hear the pool")
        finish(deal(dealers, 1))
        wait_until(lambda: pool_caught_up(database, tables), "the replay and one more hand",
                   timeout=60)
    finally:
        status = floor.stop()
    assert status == 0, floor.log_tail()

    journaled = {table.table_id: journal(table) for table in tables}
    contributions = sum(data["contribution"] for records in journaled.values()
                        for _, kind, data in records if kind == "meter_contributed")
    jackpots = {(table_id, data["hand_id"]) for table_id, records in journaled.items()
                for _, kind, data in records if kind == "jackpot_pending"}
    assert len(jackpots) == 2 and contributions == 20 * (9 * 2 + 1)
    with psycopg.connect(database) as connection:
        hits = connection.execute("SELECT table_id, hand_id, lock_order, paid, verified_by "
                                  "FROM floor_pool_hits ORDER BY hit").fetchall()
        ledger: dict[str, Any] = dict(connection.execute("SELECT kind, sum(amount) FROM floor_pool_ledger "
                                         "GROUP BY kind").fetchall())
        (meter, ledger_sum), = connection.execute(
            "SELECT meter, ledger_sum FROM floor_pool_meters").fetchall()
        (before_first,), = connection.execute(
            """SELECT sum(amount) FROM floor_pool_ledger
                WHERE entry < (SELECT min(entry) FROM floor_pool_ledger WHERE kind = 'jackpot')"""
        ).fetchall()
        keys = connection.execute("SELECT count(*), count(DISTINCT (table_id, seq, kind)) "
                                  "FROM floor_pool_ledger WHERE table_id IS NOT NULL").fetchone()
    assert {(table_id, hand_id) for table_id, hand_id, *_ in hits} == jackpots  # each once
    assert [order for _, _, order, _, _ in hits] == [1, 2]
    # the first paid the meter as it stood at its claim (the seed and every contribution the
    # floor had by then: one journaled just before may reach it after), the second, while the
    # pool was locked, the seed
    assert before_first > SEED
    assert [paid for *_, paid, _ in hits] == [before_first, SEED]
    assert all(by for *_, by in hits)
    assert ledger["contribution"] == contributions and ledger["void"] == -20
    assert -ledger["jackpot"] == before_first + SEED
    assert ledger["reseed"] == SEED * 3  # the opening, the second hit's, the first's verified
    assert meter == ledger_sum == (contributions + ledger["void"] + ledger["jackpot"]
                                   + ledger["reseed"])
    assert keys is not None and keys[0] == keys[1]

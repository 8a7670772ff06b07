"""A linked pool fed by real table daemons on the simulators, each linked to it, through the
floor service into a real PostgreSQL: two hits dealt at once on two tables ordered and each paid once, through the
floor service killed between events, PostgreSQL restarted, a table killed mid-hand (its hand
voided) and a table's stream replayed from its first seq; the ledger equals the tables'
journaled contributions minus voids and jackpots plus reseeds."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import psycopg

from controller.floor.local_cluster import LocalCluster

from tests.support.pool import (
    SEED,
    POOL,
    journal,
    query,
    pool_caught_up,
    link_up,
    claimed,
    void_after_a_kill_mid_hand,
    deal,
    tables,
)
from tests.support.processes import FloorProcess, PoolDealer, TableProcess, wait_until, write_floor_config


def finish(threads: list[threading.Thread]) -> None:
    for thread in threads:
        thread.join(90)
        assert not thread.is_alive()


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

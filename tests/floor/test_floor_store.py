"""The floor service against real table daemons and a real PostgreSQL: every journaled seq
stored exactly once, through a floor service killed mid-stream, a table killed mid-hand and
PostgreSQL restarted."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import ExitStack, closing
from pathlib import Path

import psycopg
import pytest

from bench.power_loss import JournalView
from controller.floor.local_cluster import LocalCluster
from controller.stream.journal import journal_path

from tests.support.pool import void_after_a_kill_mid_hand
from tests.support.processes import FloorProcess, RatedDealer, TableProcess, wait_until, \
    write_floor_config


def stored(dsn: str, table_id: str) -> list[tuple[int, str, str | None]]:
    try:
        with psycopg.connect(dsn) as connection:
            return connection.execute(
                "SELECT seq, type, hand_id FROM floor_events WHERE table_id = %s ORDER BY seq",
                (table_id,)).fetchall()
    except psycopg.Error:  # PostgreSQL restarting, or the floor has not migrated yet
        return []


def journaled(table: TableProcess) -> list[tuple[int, str, str | None]]:
    import json
    return [(seq, kind, json.loads(message)["hand_id"])
            for seq, _ts, kind, message in JournalView(journal_path(table.state_dir)).records()]


def all_stored(dsn: str, tables: list[TableProcess]) -> bool:
    return all(stored(dsn, table.table_id) == journaled(table) for table in tables)


@pytest.fixture
def tables(tmp_path: Path) -> Iterator[list[TableProcess]]:
    with ExitStack() as started:
        yield [started.enter_context(closing(TableProcess("TCL-01", "three_card_lowball"))),
               started.enter_context(closing(TableProcess("CALI-01", "cali_lowball")))]


def test_every_seq_stored_once_through_kills_and_a_database_restart(postgres: LocalCluster, database: str,
                                                                     tables: list[TableProcess], tmp_path: Path) -> None:
    three_card, cali = tables
    config = write_floor_config(tmp_path / "floor.toml", database, tables,
                                {three_card.paytable: "0.0337", cali.paytable: "2.5%"})
    floor = FloorProcess(config, tmp_path / "floor.log")
    try:
        RatedDealer(three_card, {1: "P-1", 2: "P-2"}).hand()
        RatedDealer(cali, {1: "P-3"}).hand()
        wait_until(lambda: all_stored(database, tables), "the first hands stored")

        # the floor killed while a table deals, then started again
        def deal_three() -> None:
            for _ in range(3):
                RatedDealer(three_card, {3: "P-4"}).hand()

        dealing = threading.Thread(target=deal_three)
        dealing.start()
        wait_until(lambda: len(stored(database, "TCL-01")) > len(journaled(three_card)) - 40
                   and journaled(three_card)[-1][1] != "hand_settled", "a hand in play")
        floor.kill()
        RatedDealer(cali, {1: "P-3"}).hand()
        floor.start()
        dealing.join(60)
        assert not dealing.is_alive()
        wait_until(lambda: all_stored(database, tables), "every seq after the floor's restart",
                   timeout=60)

        # a table killed mid-hand: restarted, its hand voided, dealing on
        void_after_a_kill_mid_hand(cali, {"ante": 500, "xtra_bonus": 500}, "P-5")
        RatedDealer(cali, {1: "P-3"}).hand()

        # PostgreSQL restarted while a table deals
        def deal_two() -> None:
            for _ in range(2):
                RatedDealer(three_card, {3: "P-4"}).hand()

        dealing = threading.Thread(target=deal_two)
        dealing.start()
        postgres.restart()
        dealing.join(60)
        assert not dealing.is_alive()
        wait_until(lambda: all_stored(database, tables), "every seq after the restarts",
                   timeout=60)
    finally:
        status = floor.stop()
    assert status == 0, floor.log_tail()
    for table in tables:
        rows = stored(database, table.table_id)
        assert [seq for seq, _, _ in rows] == list(range(1, len(rows) + 1))
        assert rows == journaled(table)
        assert any(kind == "hand_voided" for _, kind, _ in rows) or table is three_card

"""Ratings and theoretical win from a real table's stream: the views agree with the journal."""

from __future__ import annotations

import io
import json
from collections import defaultdict
from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg
import pytest

from bench.power_loss import JournalView
from controller.cli.main import main
from controller.floor import store
from controller.floor.local_cluster import LocalCluster
from controller.floor.migrations import MIGRATIONS
from controller.floor.report import print_report
from controller.stream.journal import journal_path

from tests.support.processes import FloorProcess, RatedDealer, TableProcess, wait_until, write_floor_config
from tests.support.ratings import EDGE, PLAYERS, _hand, _store, _ts, expected


@pytest.fixture
def table() -> Iterator[TableProcess]:
    made = TableProcess("TCL-07", "three_card_lowball")
    try:
        yield made
    finally:
        made.close()


def test_player_and_table_ratings_agree_with_the_journal(
        database: str, table: TableProcess, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    config = write_floor_config(tmp_path / "floor.toml", database, [table],
                                {table.paytable: str(EDGE)})
    floor = FloorProcess(config, tmp_path / "floor.log")
    try:
        dealer = RatedDealer(table, PLAYERS)
        for _ in range(4):
            dealer.hand()
        last = JournalView(journal_path(table.state_dir)).last_seq()

        def all_in() -> bool:
            try:
                with psycopg.connect(database) as connection:
                    count = connection.execute("SELECT count(*) FROM floor_events").fetchone()
                    return count is not None and count[0] == last
            except psycopg.Error:
                return False
        wait_until(all_in, "the hands stored")
    finally:
        assert floor.stop() == 0, floor.log_tail()
    players, totals = expected(table)

    with psycopg.connect(database) as connection:
        rows = connection.execute(
            """SELECT player, sum(hands), sum(total_bet), sum(actual_win), sum(theoretical_win),
                      sum(time_played), min(hands_per_hour)
                 FROM floor_player_ratings WHERE table_id = 'TCL-07' GROUP BY player
                ORDER BY player""").fetchall()
        assert [row[0] for row in rows] == ["P-100", "P-200"]
        for player, hands, bet, win, theo, played, per_hour in rows:
            want = players[player]
            assert (hands, bet, win) == (len(want["hands"]), want["bet"], want["win"])
            assert theo == want["theo"] and isinstance(theo, Decimal)
            # back to back, never idle: time played runs from the first start to the last end
            assert played == totals["span"]
            assert float(per_hour) == pytest.approx(4 * 3600 / totals["span"].total_seconds())
        average = connection.execute(
            "SELECT average_bet FROM floor_player_ratings WHERE player = 'P-100'").fetchall()
        assert all(isinstance(value, Decimal) for (value,) in average)
        sums = connection.execute(
            """SELECT sum(hands), sum(handle), sum(win), sum(faults)
                 FROM floor_table_ratings WHERE table_id = 'TCL-07'""").fetchone()
        assert sums is not None
        hands, handle, win, faults = sums
        assert (hands, handle, win, faults) == (4, totals["handle"], totals["win"], 0)
        for hold, shift_win, shift_handle in connection.execute(
                "SELECT hold_percent, win, handle FROM floor_table_ratings").fetchall():
            assert abs(hold - Decimal(shift_win * 100) / shift_handle) < Decimal("1e-12")

        out = io.StringIO()
        print_report(connection, out)
    assert "P-100" in out.getvalue() and "TCL-07" in out.getvalue()

    assert main(["floor", "report", "--config", str(config)]) == 0
    printed = capsys.readouterr().out
    assert "Players (per player, table and shift)" in printed and "P-200" in printed


def test_a_spot_without_a_player_is_not_rated(database: str, postgres: LocalCluster) -> None:
    """The seat-to-player view keeps the last player named on the spot before the lock; an
    empty player (nobody carded) is no player."""
    with store.connect(database) as connection:
        store.migrate(connection)
        rows = [("T-1", 1, "wager_placed", None, "2026-11-25T01:00:00Z",
                 {"spot": 1, "wager": "ante", "amount": 500, "player": "A", "source": "dealer"}),
                ("T-1", 2, "wager_placed", None, "2026-11-25T01:00:01Z",
                 {"spot": 2, "wager": "ante", "amount": 500, "player": "", "source": "dealer"}),
                ("T-1", 3, "wager_placed", None, "2026-11-25T01:00:02Z",
                 {"spot": 1, "wager": "ante", "amount": 700, "player": "B", "source": "dealer"}),
                ("T-1", 4, "hand_started", "T-1-000001", "2026-11-25T01:00:03Z",
                 {"hand_id": "T-1-000001", "game": "three_card_lowball", "paytable": "x",
                  "number": 1}),
                ("T-1", 5, "wager_placed", None, "2026-11-25T01:01:00Z",
                 {"spot": 2, "wager": "ante", "amount": 500, "player": "C", "source": "dealer"}),
                ("T-1", 6, "hand_started", "T-1-000002", "2026-11-25T01:01:03Z",
                 {"hand_id": "T-1-000002", "game": "three_card_lowball", "paytable": "x",
                  "number": 2})]
        store.store_batch(connection, [
            store.Row(table_id, seq, kind, hand_id, _ts(ts), json.dumps(
                {"schema_version": 1, "table_id": table_id, "seq": seq, "ts": ts,
                 "hand_id": hand_id, "type": kind, "data": data}))
            for table_id, seq, kind, hand_id, ts, data in rows], {"T-1": 6})
        seats = connection.execute("SELECT hand_id, seat, player FROM floor_seat_players "
                                   "ORDER BY hand_id, seat").fetchall()
    assert seats == [("T-1-000001", 1, "B"), ("T-1-000001", 2, ""), ("T-1-000002", 2, "C")]


def test_the_records_of_schema_3_name_the_player_and_the_ratings_follow_them(database: str) -> None:
    """Schema 3 records name the seat's player themselves: the views show it ("" on older
    records) and the ratings take it over the wagers placed before the hand."""
    with store.connect(database) as connection:
        store.migrate(connection, MIGRATIONS[:5])   # a floor that stored version 2 records
        _store(connection, 2, _hand(1, 1, None))
        assert store.migrate(connection) == [m.version for m in MIGRATIONS[5:]]
        _store(connection, 3, _hand(7, 2, "B"))
        _store(connection, 3, [(13, "hand_voided", "T-1-000003", "2026-11-25T01:03:00Z",
                                {"hand_id": "T-1-000003", "by": "S-1", "reason": "shoe",
                                 "contributions_reversed": 0, "returned": [
                                     {"seat": 2, "wager": "ante", "amount": 300,
                                      "player": "C"}]})])
        players = {view: connection.execute(
            f"SELECT hand_id, seat, player FROM {view} ORDER BY seq").fetchall()
            for view in ("floor_wagers", "floor_settlements", "floor_progressive_awards",
                         "floor_returned_wagers")}
        rated = connection.execute("SELECT hand_id, player, bet FROM floor_player_hands "
                                   "ORDER BY hand_id").fetchall()
    assert players["floor_wagers"] == players["floor_settlements"] == \
        players["floor_progressive_awards"] == [("T-1-000001", 1, ""), ("T-1-000002", 1, "B")]
    assert players["floor_returned_wagers"] == [("T-1-000003", 2, "C")]
    assert rated == [("T-1-000001", "A", 500), ("T-1-000002", "B", 500)]

"""Players named at the spots (``seat_player``, the dealer's keypad or card reader) are rated
by the floor exactly as players named with each wager (``place ... PLAYER``, the command line)
are: the ratings agree with the journal, hand after hand, from one naming. Before, only the
command line's ``place`` named a player, so every hand dealt from the screen was unrated."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from bench.floor_rig import FloorProcess, TableProcess, wait_until, write_floor_config
from bench.pipeline import StreamedDealer
from bench.power_loss import JournalView
from controller.stream.journal import journal_path
from tests.support.ratings import EDGE, PLAYERS, expected


class SeatedDealer(StreamedDealer):
    """A dealer who names each spot's player once, before the first hand, and then places
    wagers naming no one."""

    def __init__(self, table: TableProcess, players: dict[int, str], **kwargs: Any):
        super().__init__(table, seats=tuple(sorted(players)), **kwargs)
        self.players, self.seated = players, False

    def hand(self) -> None:
        if not self.seated:
            for spot, player in self.players.items():
                self._ask({"command": "seat_player", "spot": spot, "player": player})
            self.seated = True
        super().hand()


@pytest.fixture
def table() -> Iterator[TableProcess]:
    made = TableProcess("TCL-08", "three_card_lowball")
    try:
        yield made
    finally:
        made.close()


def test_players_seated_once_are_rated_on_every_hand_they_play(
        database: str, table: TableProcess, tmp_path: Path) -> None:
    config = write_floor_config(tmp_path / "floor.toml", database, [table],
                                {table.paytable: str(EDGE)})
    floor = FloorProcess(config, tmp_path / "floor.log")
    try:
        dealer = SeatedDealer(table, PLAYERS)
        for _ in range(3):
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
    players, _ = expected(table)
    with psycopg.connect(database) as connection:
        rows = connection.execute(
            """SELECT player, sum(hands), sum(total_bet), sum(actual_win)
                 FROM floor_player_ratings WHERE table_id = 'TCL-08' GROUP BY player
                ORDER BY player""").fetchall()
    assert [row[0] for row in rows] == ["P-100", "P-200"]
    for player, hands, bet, win in rows:
        want = players[player]
        assert (hands, bet, win) == (len(want["hands"]), want["bet"], want["win"]) \
            and hands == 3

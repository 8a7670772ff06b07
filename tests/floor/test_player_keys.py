"""The floor rates one player however the table wrote the id (case, another script's lookalike
letters): grouped by the key the table groups by (controller.core.player_key), shown as
written (controller/floor/player_keys.py, migration 8)."""

from __future__ import annotations

import json
from datetime import datetime

import psycopg

from controller.floor import store
from controller.floor.migrations import MIGRATIONS

from tests.support.ratings import _hand, _store

#: One player: as carded, in capitals, in Cyrillic letters that look the same (Es, a, Er, a).
SPELLINGS = ["Capa", "CAPA", "\u0421\u0430\u0440\u0430"]


def _three_hands(connection: psycopg.Connection) -> None:
    for number, player in enumerate(SPELLINGS, start=1):
        _store(connection, 3, _hand(1 + 6 * (number - 1), number, player))


def _ratings(connection: psycopg.Connection) -> list[tuple[str, int, int]]:
    return connection.execute("SELECT player, hands, total_bet FROM floor_player_ratings "
                              "ORDER BY player").fetchall()


def test_two_spellings_of_one_player_rate_as_one_player(database: str) -> None:
    with store.connect(database) as connection:
        store.migrate(connection)
        _three_hands(connection)
        rated = connection.execute(
            "SELECT player, hands, total_bet, time_played, player_key "
            "FROM floor_player_ratings").fetchall()
        hands = connection.execute("SELECT hand_id, player FROM floor_player_hands "
                                   "ORDER BY hand_id").fetchall()
    # shown as first written; one minute apart, within idle_minutes: played from the first
    # hand's start to the last one's settlement
    (player, count, bet, played, key), = rated
    assert (player, count, bet, key) == ("Capa", 3, 1500, "capa")
    assert played.total_seconds() == 2 * 60 + 4
    assert hands == [(f"T-1-00000{n}", spelling) for n, spelling in enumerate(SPELLINGS, 1)]


def test_the_migration_keys_the_players_stored_before_it(database: str) -> None:
    with store.connect(database) as connection:
        store.migrate(connection, MIGRATIONS[:7])
        _three_hands(connection)
        assert len(_ratings(connection)) == 3        # before: three players
        assert store.migrate(connection)[0] == 8
        assert _ratings(connection) == [("Capa", 3, 1500)]
        keys = connection.execute("SELECT player, player_key FROM floor_player_keys "
                                  "ORDER BY player").fetchall()
    # "A" placed each wager before the records named the seat's player
    assert sorted(keys) == sorted([("A", "a"), *((spelling, "capa") for spelling in SPELLINGS)])


def test_an_id_too_long_to_key_is_stored_and_rated_as_itself(database: str) -> None:
    long_id = "x" * 300                               # a hostile table's: tables send <= 64
    with store.connect(database) as connection:
        store.migrate(connection)
        _store(connection, 3, _hand(1, 1, long_id))
        assert _ratings(connection) == [(long_id, 1, 500)]
        assert connection.execute("SELECT player FROM floor_player_keys").fetchall() == [("A",)]


def test_records_of_any_shape_store_and_key_only_what_names_a_player(database: str) -> None:
    odd = [("wagers_locked", {"wagers": "not a list"}), ("hand_voided", {"returned": [1, "x"]}),
           ("wager_settled", {"player": 7}), ("wager_placed", {"player": ["P"]}),
           ("wagers_locked", {"wagers": [{"seat": 1, "player": "Ρ-1"}]})]   # a Greek Rho
    with store.connect(database) as connection:
        store.migrate(connection)
        store.store_batch(connection, [
            store.Row("T-1", seq, kind, None, datetime.fromisoformat("2026-11-25T01:00:00+00:00"),
                      json.dumps({"schema_version": 3, "type": kind, "data": data}))
            for seq, (kind, data) in enumerate(odd, start=1)], {"T-1": len(odd)})
        keys: dict[str, str] = dict(connection.execute(
            "SELECT player, player_key FROM floor_player_keys"))
    assert keys == {"7": "7", '["P"]': '["p"]', "Ρ-1": "p-l"}

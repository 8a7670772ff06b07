"""A floor's records written straight into its store, with the settings a table journals: the
theo tests' and the dashboard's material."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import psycopg

from controller.core.table_settings import GameSettings
from controller.floor import store
from controller.settings.table_config import default_config_path, game_settings, load_config

TCL = "three_card_lowball"


def settings_text(game: str, paytable: str | None = None) -> str:
    """The settings a table of the shipped config journals, with ``paytable``'s lines."""
    from controller.settings.table_config import _paytable_document

    loaded = load_config(default_config_path(game))
    document = game_settings(loaded).document()
    if paytable is not None:
        document["paytable"] = paytable
        document["paytable_lines"] = _paytable_document(
            loaded.paytables.for_game(game)[paytable])
    return GameSettings.from_document(document).text


def _ts(minute: int, second: int) -> datetime:
    return datetime(2026, 11, 25, 20, minute, second, tzinfo=timezone.utc)


def store_events(connection: psycopg.Connection, table_id: str,
                 events: list[tuple[str, str | None, dict[str, Any]]], first_seq: int = 1,
                 minute: int = 0) -> int:
    rows = []
    for offset, (kind, hand_id, data) in enumerate(events):
        seq = first_seq + offset
        ts = _ts(minute, offset % 60)
        rows.append(store.Row(table_id, seq, kind, hand_id, ts, json.dumps(
            {"schema_version": 3, "table_id": table_id, "seq": seq, "ts": ts.isoformat(),
             "hand_id": hand_id, "type": kind, "data": data})))
    store.store_batch(connection, rows, {table_id: first_seq + len(events) - 1})
    return first_seq + len(events)


def hand(table_id: str, number: int, paytable: str, player: str,
         wagers: dict[str, int], nets: dict[str, int],
         game: str = TCL) -> list[tuple[str, str | None, dict[str, Any]]]:
    hand_id = f"{table_id}-{number:06d}"
    locked: list[dict[str, Any]] = [
        {"seat": 1, "wager": wager, "amount": amount, "player": player}
        for wager, amount in wagers.items()]
    return [
        ("hand_started", hand_id, {"hand_id": hand_id, "game": game, "paytable": paytable,
                                   "number": number}),
        ("wagers_locked", hand_id, {"game": game, "paytable": paytable, "wagers": locked}),
        *[("wager_settled", hand_id, {**wager, "result": "lose" if nets[wager["wager"]] < 0
                                      else "win", "net": nets[wager["wager"]]})
          for wager in locked],
        ("hand_settled", hand_id, {"players_net": sum(nets.values()),
                                   "house_result": -sum(nets.values())})]


def config_applied(text: str) -> tuple[str, None, dict[str, Any]]:
    return ("config_applied", None, {"config": text, "fingerprint": "x", "changed": []})

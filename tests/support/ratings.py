"""Players' ratings stored in a real PostgreSQL."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime
from decimal import Decimal
from typing import Any

import psycopg

from bench.power_loss import JournalView
from controller.floor import store
from controller.stream.journal import journal_path
from tests.support.processes import TableProcess


def _ts(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _store(connection: psycopg.Connection, version: int,
           rows: list[tuple[Any, ...]]) -> None:
    store.store_batch(connection, [
        store.Row("T-1", seq, kind, hand_id, _ts(ts), json.dumps(
            {"schema_version": version, "table_id": "T-1", "seq": seq, "ts": ts,
             "hand_id": hand_id, "type": kind, "data": data}))
        for seq, kind, hand_id, ts, data in rows], {"T-1": rows[-1][0]})


def _hand(first_seq: int, number: int, player: str | None) -> list[tuple[Any, ...]]:
    """A hand of one ante on seat 1, placed for "A"; its records name ``player`` (None: a
    record of schema 1 or 2, which names none)."""
    hand_id, minute = f"T-1-{number:06d}", f"2026-11-25T01:0{number}"
    named = {} if player is None else {"player": player}
    wager = {"seat": 1, "wager": "ante", "amount": 500, **named}
    return [
        (first_seq, "wager_placed", None, f"{minute}:00Z",
         {"spot": 1, "wager": "ante", "amount": 500, "player": "A", "source": "dealer"}),
        (first_seq + 1, "hand_started", hand_id, f"{minute}:01Z",
         {"hand_id": hand_id, "game": "three_card_lowball", "paytable": "x", "number": number}),
        (first_seq + 2, "wagers_locked", hand_id, f"{minute}:02Z",
         {"game": "three_card_lowball", "paytable": "x", "wagers": [wager]}),
        (first_seq + 3, "wager_settled", hand_id, f"{minute}:03Z",
         {**wager, "result": "lose", "net": -500}),
        (first_seq + 4, "progressive_awarded", hand_id, f"{minute}:04Z",
         {"seat": 1, "award": "straight_flush", "amount": 100, **named}),
        (first_seq + 5, "hand_settled", hand_id, f"{minute}:05Z",
         {"players_net": -500, "house_result": 500})]


EDGE = Decimal("0.0337")


PLAYERS = {1: "P-100", 2: "P-100", 4: "P-200"}


def expected(table: TableProcess) -> tuple[dict[str, Any], dict[str, Any]]:
    """Per player and for the table, from the journal: hands, bet, win, first start and last
    settlement."""
    players: dict[str, dict[str, Any]] = defaultdict(lambda: {"hands": set(), "bet": 0, "win": 0,
                                                    "theo": Decimal(0)})
    table_totals: dict[str, Any] = {"handle": 0, "win": 0, "hands": set()}
    first_start: datetime | None = None
    last_settled: datetime | None = None
    for _seq, ts, kind, message in JournalView(journal_path(table.state_dir)).records():
        envelope = json.loads(message)
        if kind == "hand_started" and first_start is None:
            first_start = _ts(ts)
        if kind == "hand_settled":
            last_settled = _ts(ts)
        if kind != "wager_settled":
            continue
        data, player = envelope["data"], PLAYERS[envelope["data"]["seat"]]
        players[player]["hands"].add(envelope["hand_id"])
        players[player]["bet"] += data["amount"]
        players[player]["win"] -= data["net"]
        players[player]["theo"] += data["amount"] * EDGE
        table_totals["handle"] += data["amount"]
        table_totals["win"] -= data["net"]
        table_totals["hands"].add(envelope["hand_id"])
    assert first_start is not None and last_settled is not None
    return players, {**table_totals, "span": last_settled - first_start}

"""The pool's ledger over table events stored in a real PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest

from controller.floor import pool, store
from controller.floor.config import Pool
from controller.floor.store import Row


T0 = datetime(2026, 11, 25, 3, 0, tzinfo=timezone.utc)


SEED = 500_000


WAGER = 100   # the progressive wager: the pool's default, as the tables'


#: Four pat 4-2-A hands from one deck (two colors, never a flush): the dealer's and up to three
#: seats'.
PATS = (("4c", "2d", "Ah"), ("4d", "2h", "As"), ("4h", "2s", "Ac"), ("4s", "2c", "Ad"))


def linked(tables: Sequence[str] = ("TCL-01", "TCL-02"), **settings: Any) -> Pool:
    return Pool.model_validate({"id": "LINK-1", "tables": list(tables), "seed": SEED,
                                "contribution_rate": "20%", **settings})


def settings(pool_id: str | None) -> str:
    """A table's journaled settings (a ``config_applied``'s ``config``), linked to ``pool_id``
    (``[progressive.link] pool``) or to none."""
    progressive: dict[str, Any] = {"wager": WAGER, "seed": SEED, "contribution_rate": "20%",
                                   "awards": {}}
    if pool_id is not None:
        progressive["pool"] = pool_id
    return json.dumps({"game": "three_card_lowball", "progressive": progressive},
                      sort_keys=True, separators=(",", ":"))


class Tables:
    """Synthetic table streams: each event gets its table's next seq and a journal time. A
    table's first event is its settings linking it to ``link`` (none if None), as a table
    with ``[progressive.link]`` journals them when it opens."""

    def __init__(self, connection: psycopg.Connection, link: str | None = "LINK-1") -> None:
        self.connection = connection
        self.link = link
        self.seqs: dict[str, int] = {}
        self.rows: list[Row] = []
        self.clock = T0

    def configured(self, table: str, pool_id: str | None) -> Row:
        """The table's settings, journaled: linked to ``pool_id`` from here on."""
        return self.event(table, "config_applied", None, fingerprint="0" * 64,
                          reason="table opened", changed=[], config=settings(pool_id))

    def event(self, table: str, kind: str, hand: str | None, **data: Any) -> Row:
        if table not in self.seqs and kind != "config_applied":
            self.seqs[table] = 0
            self.configured(table, self.link)
        seq = self.seqs[table] = self.seqs.get(table, 0) + 1
        self.clock += timedelta(milliseconds=10)
        row = Row(table, seq, kind, hand, self.clock,
                  json.dumps({"table_id": table, "seq": seq, "type": kind, "hand_id": hand,
                              "data": data}))
        self.rows.append(row)
        return row

    def hand(self, table: str, number: int, entries: int, award: str | None = None,
             seats: tuple[int, ...] = (1,), table_amount: int = 0) -> str:
        hand = f"{table}-{number:06d}"
        self.event(table, "hand_started", hand, hand_id=hand, game="three_card_lowball",
                   paytable="paytable-1", number=number)
        if entries:
            self.event(table, "meter_contributed", hand, before=0, contribution=20 * entries,
                       after=0)
        if award == "jackpot":
            self.jackpot_dealt(table, hand, seats)
            for seat in seats:
                self.event(table, "progressive_awarded", hand, seat=seat, award="jackpot",
                           amount=table_amount // len(seats))
            self.event(table, "hand_settled", hand)
            self.event(table, "jackpot_pending", hand, hand_id=hand, seats=list(seats),
                       amount=table_amount)
        elif award:
            self.event(table, "progressive_awarded", hand, seat=seats[0], award=award,
                       amount=20000)
            self.event(table, "hand_settled", hand)
        else:
            self.event(table, "hand_settled", hand)
        return hand

    def jackpot_dealt(self, table: str, hand: str, seats: tuple[int, ...] = (1,),
                      wagered: tuple[int, ...] | None = None,
                      pats: tuple[int, ...] | None = None) -> None:
        """The wagers locked (the progressive on ``wagered``, by default the seats) and the
        deal: a pat 4-2-A to the dealer and to ``pats`` (by default the seats)."""
        wagered = seats if wagered is None else wagered
        pats = seats if pats is None else pats
        self.event(table, "wagers_locked", hand, game="three_card_lowball",
                   paytable="paytable-1",
                   wagers=[{"seat": seat, "wager": "progressive", "amount": WAGER,
                            "player": ""} for seat in wagered])
        hands: dict[int | str, tuple[str, str, str]] = {
            "dealer": PATS[0], **{seat: PATS[1 + n] for n, seat in enumerate(pats)}}
        others = iter(["9c", "Td", "Jh", "Qs", "Kc", "9d", "Th", "Js", "Qc", "Kd", "9h", "Ts"])
        for round_ in range(3):
            for to in [*seats, *(seat for seat in wagered if seat not in seats), "dealer"]:
                card = hands[to][round_] if to in hands else next(others)
                self.event(table, "card_dealt", hand, card=card, to=to, phase="deal")

    def store(self, rows: list[Row] | None = None) -> None:
        rows = self.rows if rows is None else rows
        cursors: dict[str, int] = {}
        for row in rows:
            cursors[row.table_id] = max(cursors.get(row.table_id, 0), row.seq)
        store.store_batch(self.connection, rows, cursors)


@pytest.fixture
def connection(database: str) -> Iterator[psycopg.Connection]:
    with store.connect(database) as connection:
        store.migrate(connection)
        yield connection


def ledger(connection: psycopg.Connection) -> list[tuple[Any, ...]]:
    with connection.transaction():
        return connection.execute(
            "SELECT kind, amount, paid, table_id, seq FROM floor_pool_ledger ORDER BY entry"
        ).fetchall()

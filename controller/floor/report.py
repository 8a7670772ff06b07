"""``lowball-table floor report``: the ratings views, printed for people.

Per player, table and shift (``floor_player_ratings``), per table and shift
(``floor_table_ratings``), each linked pool's meter and ledger (``floor_pool_meters``) and the
jackpot claims the pools hold as disputed (``floor_pool_disputes``) and the tables listed in a
pool but not linked to it (their records are not the pool's). Money stays exact: cents
are integers, theoretical win and averages are PostgreSQL numerics, shown rounded to the cent
(half to even) only here.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta
from decimal import ROUND_HALF_EVEN, Decimal
from typing import IO, Any

import psycopg

from controller.floor.pool import unlinked_members

PLAYERS = """SELECT player, table_id, shift_date, shift, hands, time_played, total_bet,
                    average_bet, actual_win, theoretical_win, hands_per_hour
               FROM floor_player_ratings
              WHERE (%(day)s::date IS NULL OR shift_date = %(day)s::date)
              ORDER BY shift_date, shift, player, table_id"""
TABLES = """SELECT table_id, shift_date, shift, hands, handle, win, hold_percent, faults,
                   device_downtime
              FROM floor_table_ratings
             WHERE (%(day)s::date IS NULL OR shift_date = %(day)s::date)
             ORDER BY shift_date, shift, table_id"""
POOLS = """SELECT pool_id, meter, contributions, voided, jackpots, reseeds, adjustments,
                  fixed_awards, locked_by_table, locked_by_hand
             FROM floor_pool_meters ORDER BY pool_id"""
DISPUTES = """SELECT pool_id, table_id, hand_id, seq, ts, problem
                FROM floor_pool_disputes ORDER BY dispute"""


def money(cents: int | Decimal | None) -> str:
    """Cents as dollars, rounded to the cent half to even: 123456 -> "$1,234.56"."""
    if cents is None:
        return "-"
    whole = Decimal(cents).quantize(Decimal(1), rounding=ROUND_HALF_EVEN)
    sign = "-" if whole < 0 else ""
    dollars, rest = divmod(abs(int(whole)), 100)
    return f"{sign}${dollars:,}.{rest:02d}"


def duration(value: timedelta | None) -> str:
    """H:MM:SS, whole seconds."""
    if value is None:
        return "-"
    seconds = int(value.total_seconds())
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _number(value: Decimal | float | None, places: str = "0.1") -> str:
    if value is None:
        return "-"
    return str(Decimal(value).quantize(Decimal(places), rounding=ROUND_HALF_EVEN))


def _table(out: IO[str], header: Sequence[str], rows: list[Sequence[str]],
           left: int = 2) -> None:
    """Columns: the first ``left`` flush left (names), the rest right (numbers)."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    for line in (header, *rows):
        out.write("  ".join(str(cell).ljust(width) if index < left else str(cell).rjust(width)
                            for index, (cell, width) in enumerate(zip(line, widths))).rstrip()
                  + "\n")


def player_rows(connection: psycopg.Connection, day: date | None) -> list[tuple[Any, ...]]:
    return connection.execute(PLAYERS, {"day": day}).fetchall()


def table_rows(connection: psycopg.Connection, day: date | None) -> list[tuple[Any, ...]]:
    return connection.execute(TABLES, {"day": day}).fetchall()


def print_report(connection: psycopg.Connection, out: IO[str], day: date | None = None) -> None:
    players = player_rows(connection, day)
    out.write("Players (per player, table and shift)\n")
    _table(out, ("player", "table", "shift", "hands", "time", "total bet", "average bet",
                 "actual win", "theo win", "hands/h"),
           [(player, table, f"{shift_date} {shift}", str(hands), duration(played), money(total),
             money(average), money(actual), money(theo), _number(per_hour))
            for player, table, shift_date, shift, hands, played, total, average, actual, theo,
            per_hour in players])
    tables = table_rows(connection, day)
    out.write("\nTables (per table and shift)\n")
    _table(out, ("table", "shift", "hands", "handle", "win", "hold %", "faults", "downtime"),
           [(table, f"{shift_date} {shift}", str(hands), money(handle), money(win),
             _number(hold, "0.01"), str(faults), duration(down))
            for table, shift_date, shift, hands, handle, win, hold, faults, down in tables])
    pools = connection.execute(POOLS).fetchall()
    if not pools:
        return
    out.write("\nPools (the meter is the sum of the ledger)\n")
    _table(out, ("pool", "status", "meter", "contributions", "voided", "jackpots", "reseeds",
                 "adjustments", "fixed awards"),
           [(pool, f"JACKPOT {table} {hand}" if table else "open", money(meter),
             money(contributions), money(voided), money(jackpots), money(reseeds),
             money(adjustments), money(fixed))
            for pool, meter, contributions, voided, jackpots, reseeds, adjustments, fixed, table,
            hand in pools])
    unlinked = unlinked_members(connection)
    if unlinked:
        out.write("\nTables listed in a pool but not linked to it (their meter is their own: "
                  "the pool counts none of their records)\n")
        _table(out, ("pool", "table", "linked to"),
               [(pool, table, other or "no pool") for pool, table, other in unlinked], left=3)
    disputes = connection.execute(DISPUTES).fetchall()
    if disputes:
        out.write("\nDisputed jackpot claims (not paid: a supervisor looks at each)\n")
        _table(out, ("pool", "table", "hand", "seq", "journaled", "problem"),
               [(pool, table, _cut(hand), str(seq), f"{ts:%Y-%m-%d %H:%M:%S}", _cut(problem, 120))
                for pool, table, hand, seq, ts, problem in disputes], left=6)


def _cut(text: str | None, width: int = 40) -> str:
    """A table's text, cut to ``width`` (a hostile table's may be long)."""
    text = "-" if text is None else text
    return text if len(text) <= width else text[:width - 3] + "..."

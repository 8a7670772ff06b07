"""``lowball-table floor report``: the ratings views, printed for people.

Per player, table and shift (``floor_player_ratings``), per table and shift
(``floor_table_ratings``), the house edges theo was computed with (``floor_wager_theo``: the
game math's and floor.toml's, a difference flagged), each linked pool's ledger for the day
asked, from the meter at its start to the meter at its end (``floor_pool_ledger``), the
jackpot claims the pools hold as disputed (``floor_pool_disputes``) and the tables listed in a
pool but not linked to it (their records are not the pool's). A day with nothing says so;
theo is ``computing`` while its edge is, or ``-`` with the reason under the table. Money stays
exact: cents are integers, theoretical win and averages are PostgreSQL numerics, shown in
dollars rounded to the cent (half to even) only here.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta
from decimal import ROUND_HALF_EVEN, Decimal
from typing import IO, Any

import psycopg

from controller.floor.pool import unlinked_members

PLAYERS = """SELECT player, table_id, shift_date, shift, hands, time_played, total_bet,
                    average_bet, actual_win, theoretical_win, hands_per_hour, theo_missing
               FROM floor_player_ratings
              WHERE (%(day)s::date IS NULL OR shift_date = %(day)s::date)
              ORDER BY shift_date, shift, player, table_id"""
TABLES = """SELECT table_id, shift_date, shift, hands, handle, win, hold_percent, faults,
                   device_downtime, theoretical_win, theo_missing
              FROM floor_table_ratings
             WHERE (%(day)s::date IS NULL OR shift_date = %(day)s::date)
             ORDER BY shift_date, shift, table_id"""
#: Each table's edges in force for the hands of the report: the game math's, floor.toml's.
EDGES = """SELECT t.table_id, t.paytable, t.wager, min(t.math_edge), min(t.configured_edge),
                  min(hm.state), min(hm.detail), min(me.fraction), count(*)
             FROM floor_wager_theo t
             LEFT JOIN floor_house_math hm ON hm.fingerprint = t.fingerprint
             LEFT JOIN floor_house_math_edges me ON me.fingerprint = t.fingerprint
                                                AND me.wager = t.wager
             CROSS JOIN LATERAL floor_shift_of(t.ts) sh
            WHERE (%(day)s::date IS NULL OR sh.shift_date = %(day)s::date)
            GROUP BY t.table_id, t.paytable, t.wager, t.fingerprint
            ORDER BY t.table_id, t.paytable, t.fingerprint, t.wager"""
#: Each pool's ledger: before the day (the meter at its start), on the day, and the meter now.
POOLS = """
WITH entries AS (
    SELECT l.pool_id, l.kind, l.amount, l.paid, coalesce(l.reference, '') AS reference,
           CASE WHEN %(day)s::date IS NULL THEN 0
                WHEN sh.shift_date < %(day)s::date THEN -1
                WHEN sh.shift_date = %(day)s::date THEN 0 ELSE 1 END AS part
      FROM floor_pool_ledger l
     CROSS JOIN LATERAL floor_shift_of(coalesce(l.ts, l.recorded_at)) sh)
SELECT p.pool_id, m.locked_by_table, m.locked_by_hand, p.meter,
       coalesce(sum(e.amount) FILTER (WHERE e.part = -1), 0)::bigint AS opening,
       coalesce(sum(e.amount) FILTER (WHERE e.part = 0 AND e.kind = 'reseed'
                                        AND e.reference = 'opened'), 0)::bigint AS seed,
       coalesce(sum(e.amount) FILTER (WHERE e.part = 0 AND e.kind = 'contribution'), 0)::bigint,
       coalesce(-sum(e.amount) FILTER (WHERE e.part = 0 AND e.kind = 'void'), 0)::bigint,
       coalesce(-sum(e.amount) FILTER (WHERE e.part = 0 AND e.kind = 'jackpot'), 0)::bigint,
       coalesce(sum(e.amount) FILTER (WHERE e.part = 0 AND e.kind = 'reseed'
                                        AND e.reference <> 'opened'), 0)::bigint AS reseeds,
       coalesce(sum(e.amount) FILTER (WHERE e.part = 0 AND e.kind = 'adjustment'), 0)::bigint,
       coalesce(sum(e.amount) FILTER (WHERE e.part <= 0), 0)::bigint AS closing,
       coalesce(sum(e.amount), 0)::bigint AS ledger_sum,
       count(*) FILTER (WHERE e.part = 0 AND e.kind = 'fixed_award') AS fixed_count,
       coalesce(sum(e.paid) FILTER (WHERE e.part = 0 AND e.kind = 'fixed_award'), 0)::bigint,
       count(*) FILTER (WHERE e.part = 0) AS movements
  FROM floor_pools p
  JOIN floor_pool_meters m USING (pool_id)
  LEFT JOIN entries e ON e.pool_id = p.pool_id
 GROUP BY p.pool_id, m.locked_by_table, m.locked_by_hand, p.meter
 ORDER BY p.pool_id"""
DISPUTES = """SELECT pool_id, table_id, hand_id, seq, ts, problem
                FROM floor_pool_disputes ORDER BY dispute"""
#: What a theo of "computing" means, said once under the table that shows it.
COMPUTING = "the house edge of the settings in force is being computed from the game math, once"


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


def _table(out: IO[str], header: Sequence[str], rows: Sequence[Sequence[str]],
           left: int = 2, words: Sequence[int] = ()) -> None:
    """Columns: the first ``left`` flush left (names), and those in ``words``; the rest
    right (numbers)."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    for line in (header, *rows):
        out.write("  ".join(str(cell).ljust(width) if index < left or index in words
                            else str(cell).rjust(width)
                            for index, (cell, width) in enumerate(zip(line, widths))).rstrip()
                  + "\n")


def player_rows(connection: psycopg.Connection, day: date | None) -> list[tuple[Any, ...]]:
    return connection.execute(PLAYERS, {"day": day}).fetchall()


def table_rows(connection: psycopg.Connection, day: date | None) -> list[tuple[Any, ...]]:
    return connection.execute(TABLES, {"day": day}).fetchall()


def print_report(connection: psycopg.Connection, out: IO[str], day: date | None = None) -> None:
    """The whole report; ``day``: only that day's shifts and that day's pool movements."""
    players = player_rows(connection, day)
    tables = table_rows(connection, day)
    pools = connection.execute(POOLS, {"day": day}).fetchall()
    if not players and not tables and not any(pool[-1] for pool in pools):
        out.write(f"Nothing on {day}: no hand settled, no fault, no device down and no pool "
                  f"movement in its shifts.\n" if day is not None else
                  "Nothing stored yet: no hand settled, no fault, no device down and no pool "
                  "movement.\n")
    else:
        _print_players(out, players)
        _print_tables(out, tables)
        print_edges(connection, out, day)
        _print_pools(out, pools, day)
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


def theo_text(theo: Decimal | None, missing: str | None) -> str:
    """Theo in dollars, ``computing`` while its edge is, ``-`` with a reason said below."""
    if theo is not None:
        return money(theo)
    return "computing" if missing == "computing" else "-"


def _reasons(out: IO[str], rows: list[tuple[str, Decimal | None, str | None]]) -> None:
    """Under a table: why a theo is not given (each reason once, with its tables)."""
    reasons: dict[str, set[str]] = {}
    for table, theo, missing in rows:
        if theo is None:
            reasons.setdefault(missing or "no house edge", set()).add(table)
    for reason, tables in sorted(reasons.items()):
        if reason == "computing":
            out.write(f"  theo \"computing\" at {', '.join(sorted(tables))}: {COMPUTING}\n")
        else:
            out.write(f"  theo \"-\" at {', '.join(sorted(tables))}: {_cut(reason, 160)}\n")


def _print_players(out: IO[str], players: list[tuple[Any, ...]]) -> None:
    out.write("Players (per player, table and shift)\n")
    if not players:
        out.write("  no player rated (no hand settled with a carded player)\n")
        return
    _table(out, ("player", "table", "shift", "hands", "time", "total bet", "average bet",
                 "actual win", "theo win", "hands/h"),
           [(player, table, f"{shift_date} {shift}", str(hands), duration(played), money(total),
             money(average), money(actual), theo_text(theo, missing), _number(per_hour))
            for player, table, shift_date, shift, hands, played, total, average, actual, theo,
            per_hour, missing in players])
    _reasons(out, [(row[1], row[9], row[11]) for row in players])


def _print_tables(out: IO[str], tables: list[tuple[Any, ...]]) -> None:
    out.write("\nTables (per table and shift)\n")
    if not tables:
        out.write("  no hand settled, no fault, no device down\n")
        return
    _table(out, ("table", "shift", "hands", "handle", "win", "hold %", "theo win", "faults",
                 "downtime"),
           [(table, f"{shift_date} {shift}", str(hands), money(handle), money(win),
             _number(hold, "0.01"), theo_text(theo, missing), str(faults), duration(down))
            for table, shift_date, shift, hands, handle, win, hold, faults, down, theo, missing
            in tables])
    _reasons(out, [(row[0], row[9], row[10]) for row in tables])


def percent(edge: Decimal | None) -> str:
    """An edge per unit as a percentage to four decimals: Decimal("0.0337") -> "3.3700 %"."""
    if edge is None:
        return "-"
    return f"{(edge * 100).quantize(Decimal('0.0001'), rounding=ROUND_HALF_EVEN)} %"


def print_edges(connection: psycopg.Connection, out: IO[str], day: date | None) -> None:
    """The house edge of each table, paytable and wager the report's hands were played with:
    the game math's for the settings in force, floor.toml's where configured (which theo
    uses), and their difference flagged."""
    rows = connection.execute(EDGES, {"day": day}).fetchall()
    if not rows:
        return
    out.write("\nHouse edges (per unit wagered: theo = amount wagered x edge; the game math's "
              "for the settings in force, floor.toml's where it gives one)\n")
    lines = []
    for table, paytable, wager, math, configured, state, detail, _fraction, _count in rows:
        if math is None:
            shown = "computing" if state in ("pending", "computing") else "-"
        else:
            shown = percent(math)
        if configured is not None:
            used = "floor.toml"
            if math is not None and configured != math:
                points = percent(configured - math).removesuffix(" %")
                note = f"floor.toml differs from the math by {'' if points.startswith('-') else '+'}" \
                       f"{points} points"
            elif math is None and state == "refused":
                note = _cut(detail, 80)
            else:
                note = ""
        elif math is not None:
            used = "math"
            note = "negative: the player has the advantage" if math < 0 else ""
        else:
            used = "none"
            note = "theo waits for the math" if state in ("pending", "computing") \
                else _cut(detail or "no settings journaled before the hands", 80)
        lines.append((table, paytable or "-", wager, shown, percent(configured), used, note))
    _table(out, ("table", "paytable", "wager", "game math", "floor.toml", "theo uses", "note"),
           lines, left=3, words=(5, 6))


def _print_pools(out: IO[str], pools: list[tuple[Any, ...]], day: date | None) -> None:
    if not pools:
        return
    out.write("\nPools: the meter's ledger" + (f" on {day}" if day else "") + " (closing = "
              "opening + seed + contributions - voided - jackpots + reseeds + adjustments)\n")
    rows, awards, wrong = [], [], []
    for (pool, table, hand, meter, opening, seed, contributions, voided, jackpots, reseeds,
         adjustments, closing, ledger_sum, fixed_count, fixed_paid, _moves) in pools:
        assert closing == opening + seed + contributions - voided - jackpots + reseeds \
            + adjustments
        rows.append((pool, f"locked: jackpot {table} {hand}" if table else "open",
                     money(opening), money(seed), money(contributions), money(voided),
                     money(jackpots), money(reseeds), money(adjustments), money(closing)))
        if fixed_count:
            awards.append((pool, str(fixed_count), money(fixed_paid)))
        if ledger_sum != meter:
            wrong.append(f"  pool {pool}: the meter ({money(meter)}) is not the sum of its "
                         f"ledger ({money(ledger_sum)}): a supervisor looks at it\n")
    _table(out, ("pool", "now", "opening", "seed", "contributions", "voided", "jackpots",
                 "reseeds", "adjustments", "closing"), rows)
    out.write("  opening: the meter before " + (f"{day}" if day else "the first entry") +
              "; seed: the pool opened at it; contributions: the progressive wagers' share;\n"
              "  voided: taken back with a voided hand; jackpots: paid from the meter; "
              "reseeds: put up by the house\n  after a verified jackpot; adjustments: a "
              "supervisor's (floor adjust); closing: the meter at the end\n")
    out.writelines(wrong)
    if awards:
        out.write("\nFixed progressive awards (paid by the house, not from the meter)\n")
        _table(out, ("pool", "awards", "paid"), awards, left=1)


def _cut(text: str | None, width: int = 40) -> str:
    """A table's text, cut to ``width`` (a hostile table's may be long)."""
    text = "-" if text is None else text
    return text if len(text) <= width else text[:width - 3] + "..."

"""The floor store in PostgreSQL: migrations, the ratings settings, and batches of events.

Every event is one row of ``floor_events`` keyed by (table_id, seq). A batch is stored in one
transaction together with each table's resume point (``floor_cursors``): after any crash the
database holds a batch and its resume points, or neither, so the service resumes from what
was stored. A seq that arrives again (a replay from the resume point) is left as stored:
``ON CONFLICT DO NOTHING`` on the primary key, so no seq is ever stored twice.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import NamedTuple

import psycopg

from controller.errors import LowballError
from controller.floor.config import FloorConfig
from controller.floor.migrations import MIGRATIONS, Migration
from controller.floor.house_math import fingerprint_incoming
from controller.floor.player_keys import key_incoming

#: Any two floor services applying migrations at once: one waits for the other.
_MIGRATION_LOCK = 0x4C4F57424C4C  # "LOWBLL"


class SchemaError(LowballError, RuntimeError):
    """The database's schema is one this service does not know (newer, or edited)."""


class Row(NamedTuple):
    """One event as stored: its envelope's fields and the message as JSON text."""
    table_id: str
    seq: int
    type: str
    hand_id: str | None
    ts: datetime
    message: str


def connect(dsn: str) -> psycopg.Connection:
    return psycopg.connect(dsn, autocommit=False, connect_timeout=10)


def migrate(connection: psycopg.Connection,
            migrations: Sequence[Migration] = MIGRATIONS) -> list[int]:
    """Apply the migrations not yet applied, in order, in one transaction; the versions
    applied. Refuses a database whose schema is newer than ``migrations``."""
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        connection.execute("""CREATE TABLE IF NOT EXISTS schema_migrations (
                                  version    integer     PRIMARY KEY,
                                  name       text        NOT NULL,
                                  applied_at timestamptz NOT NULL DEFAULT now())""")
        applied: dict[int, str] = dict(connection.execute(
            "SELECT version, name FROM schema_migrations ORDER BY version").fetchall())
        known = {migration.version: migration.name for migration in migrations}
        unknown = sorted(set(applied) - set(known))
        if unknown:
            raise SchemaError(f"the database has schema version {unknown[-1]}, newer than "
                              f"this floor service knows ({max(known)}): upgrade the service")
        done = []
        for migration in sorted(migrations):
            if migration.version in applied:
                continue
            connection.execute(migration.sql)
            if migration.backfill is not None:
                migration.backfill(connection)
            connection.execute("INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                               (migration.version, migration.name))
            done.append(migration.version)
    return done


def configure(connection: psycopg.Connection, config: FloorConfig) -> None:
    """Make the ratings settings (house edges, shifts, time zone, idle time) those of
    ``config``, in one transaction."""
    ratings = config.ratings
    with connection.transaction():
        connection.execute("DELETE FROM floor_house_edges")
        edges = [(name, "", paytable.house_edge) for name, paytable in config.paytables.items()]
        edges += [(name, wager, edge) for name, paytable in config.paytables.items()
                  for wager, edge in paytable.wagers.items()]
        with connection.cursor() as cursor:
            cursor.executemany("INSERT INTO floor_house_edges (paytable, wager, edge) "
                               "VALUES (%s, %s, %s)", edges)
            connection.execute("DELETE FROM floor_shifts")
            cursor.executemany("INSERT INTO floor_shifts (name, starts) VALUES (%s, %s)",
                               [(shift.name, shift.starts) for shift in ratings.shifts])
            connection.execute("DELETE FROM floor_settings")
            cursor.executemany("INSERT INTO floor_settings (key, value) VALUES (%s, %s)",
                               [("timezone", ratings.timezone),
                                ("idle_minutes", str(ratings.idle_minutes))])


def resume_points(connection: psycopg.Connection) -> dict[str, int]:
    """Table id -> the seq after which to resume (everything up to it is stored, or never
    comes on the CMS family)."""
    with connection.transaction():
        return dict(connection.execute(
            "SELECT table_id, resume_after FROM floor_cursors").fetchall())


#: The errors of a row the database will not hold (text with a NUL, JSON it cannot read, a
#: value past its limits): the table that sent it is at fault, not the database.
REFUSED_ROW = (psycopg.DataError, psycopg.errors.ProgramLimitExceeded)


def store_batch(connection: psycopg.Connection, rows: Iterable[Row],
                cursors: dict[str, int]) -> int:
    """Store ``rows`` and move the tables' resume points to ``cursors``, in one transaction;
    the number of rows new to the store (a seq already stored is kept as it was)."""
    with connection.transaction():
        return _store(connection, rows, cursors)


def store_each_table(connection: psycopg.Connection, rows: Sequence[Row],
                     cursors: dict[str, int]) -> tuple[int, dict[str, str]]:
    """The batch again, each table's rows and resume point in a savepoint of their own, after
    the whole batch was refused (:data:`REFUSED_ROW`): a table whose rows the database
    refuses stores nothing and keeps its resume point, the others are stored. Returns the
    rows stored and, for each refused table, why (naming the first seq refused)."""
    parts: dict[str, list[Row]] = {}
    for row in rows:
        parts.setdefault(row.table_id, []).append(row)
    stored, refused = 0, {}
    with connection.transaction():
        for table_id in sorted(set(parts) | set(cursors)):
            part = parts.get(table_id, [])
            point = {table_id: cursors[table_id]} if table_id in cursors else {}
            try:
                with connection.transaction():
                    stored += _store(connection, part, point)
            except REFUSED_ROW as error:
                refused[table_id] = _first_refused(connection, part, error)
    return stored, refused


class _Probe(LowballError):
    """Rolls a probing savepoint back."""


def _first_refused(connection: psycopg.Connection, rows: Sequence[Row],
                   error: BaseException) -> str:
    """Why the database refuses ``rows``: each is tried alone, and rolled back."""
    for row in rows:
        try:
            with connection.transaction():
                _store(connection, [row], {})
                raise _Probe
        except _Probe:
            continue
        except REFUSED_ROW as refusal:
            return f"the database refuses its event seq {row.seq} ({row.type}): " \
                   f"{_first_line(refusal)}"
    return f"the database refuses one of its events: {_first_line(error)}"


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def _store(connection: psycopg.Connection, rows: Iterable[Row],
           cursors: dict[str, int]) -> int:
    connection.execute("""CREATE TEMP TABLE IF NOT EXISTS floor_incoming (
                              table_id text, seq bigint, type text, hand_id text,
                              ts timestamptz, message jsonb) ON COMMIT DELETE ROWS""")
    connection.execute("DELETE FROM floor_incoming")
    with connection.cursor() as cursor:
        with cursor.copy("COPY floor_incoming (table_id, seq, type, hand_id, ts, message) "
                         "FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        cursor.execute("""INSERT INTO floor_events (table_id, seq, type, hand_id, ts, message)
                          SELECT table_id, seq, type, hand_id, ts, message
                            FROM floor_incoming ORDER BY table_id, seq
                          ON CONFLICT (table_id, seq) DO NOTHING""")
        stored = cursor.rowcount
        key_incoming(connection)
        fingerprint_incoming(connection)
        if cursors:
            cursor.executemany(
                """INSERT INTO floor_cursors (table_id, resume_after) VALUES (%s, %s)
                   ON CONFLICT (table_id) DO UPDATE
                      SET resume_after = excluded.resume_after,
                          updated_at = clock_timestamp()""",
                sorted(cursors.items()))
    return stored

"""The floor schema on a real PostgreSQL: migrations, the append-only event table, batches
stored once, shifts."""

from __future__ import annotations

import json
from datetime import datetime, time, timezone

import psycopg
import pytest

from controller.floor import store
from controller.floor.config import FloorConfig
from controller.floor.migrations import MIGRATIONS, Migration


def row(seq: int, table_id: str = "T-1") -> store.Row:
    ts = datetime(2026, 11, 25, 1, 0, seq % 60, tzinfo=timezone.utc)
    message = {"schema_version": 1, "table_id": table_id, "seq": seq, "hand_id": None,
               "ts": ts.isoformat(), "type": "table_opened", "data": {}}
    return store.Row(table_id, seq, "table_opened", None, ts, json.dumps(message))


def test_migrations_apply_once_in_order_and_are_recorded(database: str) -> None:
    with store.connect(database) as connection:
        assert store.migrate(connection) == [m.version for m in MIGRATIONS]
        assert store.migrate(connection) == []
        versions = connection.execute(
            "SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
    assert versions == [(m.version, m.name) for m in MIGRATIONS]


def test_a_failing_migration_leaves_nothing_behind(database: str) -> None:
    broken = (*MIGRATIONS, Migration(99, "broken", "CREATE TABLE t99 (x int); SELECT 1/0;"))
    with store.connect(database) as connection:
        with pytest.raises(psycopg.errors.DivisionByZero):
            store.migrate(connection, broken)
        assert connection.execute("SELECT to_regclass('schema_migrations'), "
                                  "to_regclass('floor_events')").fetchone() == (None, None)


def test_a_newer_schema_is_refused(database: str) -> None:
    newer = (*MIGRATIONS, Migration(99, "from the future", "SELECT 1"))
    with store.connect(database) as connection:
        store.migrate(connection, newer)
        with pytest.raises(store.SchemaError, match="schema version 99, newer"):
            store.migrate(connection)


def test_a_seq_received_twice_is_stored_once_and_events_are_append_only(database: str) -> None:
    with store.connect(database) as connection:
        store.migrate(connection)
        assert store.store_batch(connection, [row(1), row(2)], {"T-1": 2}) == 2
        assert store.store_batch(connection, [row(2), row(3)], {"T-1": 3}) == 1
        assert store.resume_points(connection) == {"T-1": 3}
        assert connection.execute("SELECT seq FROM floor_events ORDER BY seq").fetchall() == \
            [(1,), (2,), (3,)]
        for statement in ("UPDATE floor_events SET type = 'x'", "DELETE FROM floor_events",
                          "TRUNCATE floor_events"):
            with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
                with connection.transaction():
                    connection.execute(statement)


def test_a_failed_batch_stores_nothing_and_keeps_the_resume_point(database: str) -> None:
    with store.connect(database) as connection:
        store.migrate(connection)
        store.store_batch(connection, [row(1)], {"T-1": 1})
        bad = row(2)._replace(message="not json")
        with pytest.raises(psycopg.errors.InvalidTextRepresentation):
            store.store_batch(connection, [row(2), bad], {"T-1": 3})
        assert store.resume_points(connection) == {"T-1": 1}
        assert connection.execute("SELECT count(*) FROM floor_events").fetchone() == (1,)


def test_shifts_follow_the_casino_clock(database: str) -> None:
    config = FloorConfig.model_validate({
        "database": {"dsn": database},
        "tables": [{"id": "T-1", "cms_events": "ipc:///a", "cms_replay": "ipc:///b"}],
        "ratings": {"timezone": "America/Los_Angeles",
                    "shifts": [{"name": "day", "starts": time(6)},
                               {"name": "swing", "starts": time(14)},
                               {"name": "grave", "starts": time(22)}]}})
    with store.connect(database) as connection:
        store.migrate(connection)
        store.configure(connection, config)
        shift = "SELECT shift_date::text, shift FROM floor_shift_of(%s::timestamptz)"
        # 05:30 in Los Angeles on 25 November is still the grave shift of the 24th
        assert connection.execute(shift, ("2026-11-25T13:30:00Z",)).fetchone() == \
            ("2026-11-24", "grave")
        assert connection.execute(shift, ("2026-11-25T14:00:00Z",)).fetchone() == \
            ("2026-11-25", "day")
        assert connection.execute(shift, ("2026-11-26T06:59:00Z",)).fetchone() == \
            ("2026-11-25", "grave")


def test_without_postgresql_the_cluster_says_how_to_install_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from controller.floor import local_cluster

    monkeypatch.setattr("controller.floor.local_cluster.glob.glob", lambda pattern: [])
    with pytest.raises(local_cluster.ClusterUnavailable, match="apt-get install .*postgresql"):
        local_cluster.server_bin()


def test_the_report_shows_money_exactly_to_the_cent() -> None:
    from datetime import timedelta
    from decimal import Decimal

    from controller.floor.report import duration, money

    assert money(123456) == "$1,234.56" and money(-5) == "-$0.05"
    assert money(Decimal("674.0000")) == "$6.74" and money(Decimal("0.5")) == "$0.00"
    assert money(Decimal("1.5")) == "$0.02" and money(None) == "-"
    assert duration(timedelta(hours=2, minutes=3, seconds=4.9)) == "2:03:04"

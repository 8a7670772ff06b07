"""The floor service on a table whose sockets use CURVE: its key listed for the CMS family,
it stores the table's events; a key the table does not list gets nothing."""

from __future__ import annotations

import threading
from pathlib import Path

import psycopg
import zmq

from controller.floor.config import LoadedFloorConfig, load_floor_config
from controller.floor.local_cluster import LocalCluster
from controller.floor.service import FloorService
from controller.stream.journal import Journal, journal_path

from tests.support.curve import SecureTable, make_keys
from tests.support.processes import wait_until


def floor_config(path: Path, dsn: str, table: SecureTable, table_id: str, key_file: Path | str
                 ) -> LoadedFloorConfig:
    path.write_text(f"""
[database]
dsn = "{dsn}"
[curve]
key_file = "{key_file}"
[[tables]]
id = "{table_id}"
cms_events = "{table.stream.cms_events}"
cms_replay = "{table.stream.cms_replay}"
server_key_file = "{path.parent / 'server' / 'table.key'}"
""", encoding="utf-8")
    return load_floor_config(path)


def count(dsn: str) -> int:
    try:
        with psycopg.connect(dsn) as connection:
            row = connection.execute("SELECT count(*) FROM floor_events").fetchone()
            assert row is not None
            stored: int = row[0]
            return stored
    except psycopg.Error:
        return 0


def test_a_listed_floor_key_stores_the_stream_and_a_stranger_gets_nothing(
        tmp_path: Path, postgres: LocalCluster) -> None:
    from controller.settings.table_config import Security

    make_keys(tmp_path / "server", "table")
    make_keys(tmp_path / "cms-allowed", "floor")
    make_keys(tmp_path / "elsewhere", "stranger")
    (tmp_path / "allowed").mkdir()
    security = Security(server_secret_key_file=str(tmp_path / "server" / "table.key_secret"),
                        authorized_keys_dir=str(tmp_path / "allowed"),
                        cms_authorized_keys_dir=str(tmp_path / "cms-allowed"))
    databases = []
    with psycopg.connect(postgres.dsn, autocommit=True) as connection:
        for name in ("floor_curve_listed", "floor_curve_stranger"):
            connection.execute(f"CREATE DATABASE {name}")
            databases.append(postgres.dsn_for(name))
    context = zmq.Context()
    table = SecureTable(tmp_path, context, security)
    services: list[FloorService] = []
    threads: list[threading.Thread] = []
    try:
        table_id = table.daemon.table.table_id
        for dsn, key in zip(databases, ("cms-allowed/floor.key_secret",
                                        "elsewhere/stranger.key_secret")):
            loaded = floor_config(tmp_path / f"floor-{len(services)}.toml", dsn, table,
                                  table_id, tmp_path / key)
            services.append(FloorService(loaded, context))
            threads.append(threading.Thread(target=services[-1].run, daemon=True))
            threads[-1].start()
        with Journal.open_readonly(journal_path(tmp_path / "state")) as journal:
            last = journal.last_seq
        wait_until(lambda: count(databases[0]) == last, "the listed floor storing the stream")
        assert count(databases[1]) == 0
    finally:
        for service in services:
            service.request_stop()
        for thread in threads:
            thread.join(10)
        table.close()
        context.destroy(linger=0)

"""The floor's pool channel with CURVE: a table whose key is in ``[pool_link]
authorized_keys_dir`` receives the pools' meters; a key not listed receives nothing."""

from __future__ import annotations

import threading
from pathlib import Path

import psycopg
import zmq

from controller.floor.config import load_floor_config
from controller.floor.local_cluster import LocalCluster
from controller.floor.service import FloorService
from controller.stream import pool_channel
from controller.stream.security import client

from tests.support.curve import make_keys
from tests.support.processes import wait_until


def test_a_listed_table_key_gets_the_pool_and_a_stranger_nothing(tmp_path: Path,
                                                                 postgres: LocalCluster) -> None:
    floor_keys = make_keys(tmp_path / "floor", "floor")
    listed = make_keys(tmp_path / "tables", "TCL-01")
    stranger = make_keys(tmp_path / "elsewhere", "stranger")
    with psycopg.connect(postgres.dsn, autocommit=True) as connection:
        connection.execute("CREATE DATABASE floor_pool_curve")
    endpoint = f"ipc://{tmp_path}/pool"
    (tmp_path / "floor.toml").write_text(f"""
[database]
dsn = "{postgres.dsn_for('floor_pool_curve')}"
[curve]
key_file = "floor/floor.key_secret"
[pool_link]
endpoint = "{endpoint}"
authorized_keys_dir = "tables"
[[tables]]
id = "TCL-01"
cms_events = "ipc://{tmp_path}/absent-events"
cms_replay = "ipc://{tmp_path}/absent-replay"
[[pools]]
id = "LINK-1"
tables = ["TCL-01"]
""", encoding="utf-8")
    context = zmq.Context()
    service = FloorService(load_floor_config(tmp_path / "floor.toml"), context)
    thread = threading.Thread(target=service.run, daemon=True)
    subscribers = []
    try:
        thread.start()
        for keys in (listed, stranger):
            socket = context.socket(zmq.SUB)
            client(socket, server_public_key=floor_keys["public_key"], **keys)
            socket.setsockopt(zmq.SUBSCRIBE, pool_channel.topic("LINK-1"))
            socket.connect(endpoint)
            subscribers.append(socket)
        listed_socket, stranger_socket = subscribers
        received: list[pool_channel.MeterMessage | pool_channel.ClaimedMessage] = []

        def two_heartbeats() -> bool:
            while listed_socket.poll(0):
                received.append(pool_channel.parse("LINK-1", listed_socket.recv_multipart()))
            return len(received) >= 2

        wait_until(two_heartbeats, "the listed table receiving the pool")
        meter = received[0]
        assert isinstance(meter, pool_channel.MeterMessage)
        assert meter.state == "open" and meter.meter == meter.settings.seed == 500_000
        assert stranger_socket.poll(0) == 0
    finally:
        service.request_stop()
        thread.join(10)
        for socket in subscribers:
            socket.close(0)
        context.destroy(linger=0)

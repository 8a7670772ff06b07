"""The pool channel skips what it cannot carry, and the floor service goes on: a store that
holds a hit the channel refuses (a hand id past its bound, written before the pool refused
such claims) or more hits awaiting verification than a meter message lists."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import zmq

from controller.floor import pool, store
from controller.floor.config import load_floor_config
from controller.floor.service import FloorService
from controller.stream import pool_channel


def test_a_pool_the_channel_cannot_carry_is_skipped_and_the_service_goes_on(tmp_path: Path,
                                                                             database: str) -> None:
    endpoint = f"ipc://{tmp_path}/pool"
    tables = "".join(f'[[tables]]\nid = "TCL-0{n}"\ncms_events = "ipc://{tmp_path}/e{n}"\n'
                     f'cms_replay = "ipc://{tmp_path}/r{n}"\n' for n in (1, 2, 3))
    pools = "".join(f'[[pools]]\nid = "LINK-{n}"\ntables = ["TCL-0{n}"]\n' for n in (1, 2, 3))
    config = tmp_path / "floor.toml"
    config.write_text(f'[database]\ndsn = "{database}"\n[service]\nretry_s = 0.05\n'
                      f'[pool_link]\nendpoint = "{endpoint}"\n{tables}{pools}', encoding="utf-8")
    loaded = load_floor_config(config)
    with store.connect(database) as connection:   # what a store written before the fix holds
        store.migrate(connection)
        pool.configure(connection, loaded.config.pools)
        with connection.transaction():
            connection.execute(
                """INSERT INTO floor_pool_hits (pool_id, table_id, seq, hand_id, seats, ts,
                                                lock_order, paid, share, reseed_due, table_amount)
                   SELECT pool_id, table_id, n, hand_id || n, '{1}', now(), n, 0, 0, 0, 0
                     FROM (VALUES ('LINK-1', 'TCL-01', 'H', 1, 2),
                                  ('LINK-2', 'TCL-02', 'TCL-02-', 1, pool_channel.MAX_HITS + 1))
                          AS p(pool_id, table_id, hand_id, first, last),
                          generate_series(first, last) AS n""".replace(
                    "pool_channel.MAX_HITS", str(pool_channel.MAX_HITS)))
            connection.execute("UPDATE floor_pool_hits SET hand_id = repeat('H', %s) "
                               "WHERE pool_id = 'LINK-1' AND seq = 1",
                               (pool_channel.MAX_HAND_ID + 1,))

    service = FloorService(loaded)
    thread = threading.Thread(target=service.run, daemon=True)
    subscriber: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.SUB)
    subscriber.setsockopt(zmq.LINGER, 0)
    subscriber.setsockopt(zmq.SUBSCRIBE, b"pool.")
    heard: dict[bytes, set[str]] = {}
    try:
        thread.start()
        subscriber.connect(endpoint)
        wanted = {b"pool.LINK-3.meter", b"pool.LINK-1.claimed", b"pool.LINK-2.claimed"}
        deadline = time.monotonic() + 20
        while (not wanted <= heard.keys() or len(heard[b"pool.LINK-2.claimed"])
               < pool_channel.MAX_HITS + 1) and time.monotonic() < deadline:
            if subscriber.poll(200):
                head, body = subscriber.recv_multipart()
                message = pool_channel.parse(head.split(b".")[1].decode(), [head, body])
                heard.setdefault(head, set()).add(getattr(message, "hand_id", ""))
        assert thread.is_alive(), "the floor service stopped on a pool it cannot send"
        unsendable = dict(service.publisher.unsendable) if service.publisher else {}
    finally:
        service.request_stop()
        thread.join(20)
        subscriber.close()
    assert wanted <= heard.keys(), heard.keys()
    assert b"pool.LINK-1.meter" not in heard and b"pool.LINK-2.meter" not in heard
    assert heard[b"pool.LINK-1.claimed"] == {"H2"}          # the sendable claim still goes out
    assert len(heard[b"pool.LINK-2.claimed"]) == pool_channel.MAX_HITS + 1
    assert sorted(unsendable) == ["LINK-1", "LINK-2"]
    assert any("hand_id" in problem for problem in unsendable["LINK-1"])
    assert any("hits" in problem for problem in unsendable["LINK-2"])

"""The floor's side of the pool channel (:mod:`controller.stream.pool_channel`): each linked
pool's meter and its hits awaiting verification, read from the store and published on one PUB
socket, right after a commit that moved the pool and once a second otherwise.

The writer thread owns the socket (as it owns the connection): what it publishes is what it
has just committed, so a table never shows a meter the store does not hold.
"""

from __future__ import annotations

import time
from pathlib import Path

import psycopg
import structlog
import zmq
import zmq.auth
from zmq.auth.thread import ThreadAuthenticator

from controller.floor.config import LoadedFloorConfig
from controller.stream import pool_channel
from controller.stream.pool_channel import ClaimedMessage, Hit, MeterMessage, PoolSettings
from controller.stream.security import HANDSHAKE_TIMEOUT_MS, bind

log = structlog.get_logger("floor.pool_channel")
POOL_DOMAIN = "pool"


class PoolPublisher:
    def __init__(self, context: zmq.SyncContext, loaded: LoadedFloorConfig):
        config = loaded.config
        assert config.pool_link is not None
        self.pool_ids = [pool.id for pool in config.pools]
        self.socket = context.socket(zmq.PUB)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.setsockopt(zmq.HANDSHAKE_IVL, HANDSHAKE_TIMEOUT_MS)
        self.socket.setsockopt(zmq.SNDHWM, 1000)
        self._authenticator: ThreadAuthenticator | None = None
        keys = config.pool_link.authorized_keys_dir
        if keys is not None:
            assert config.curve is not None
            public, secret = zmq.auth.load_certificate(loaded.resolve(config.curve.key_file))
            allowed = loaded.resolve(keys)
            if not Path(allowed).is_dir():
                raise ValueError(f"pool_link.authorized_keys_dir: {allowed} is not a directory "
                                 "of table public keys")
            self._authenticator = ThreadAuthenticator(context)
            self._authenticator.start()
            self._authenticator.configure_curve(domain=POOL_DOMAIN, location=str(allowed))
            self.socket.curve_secretkey, self.socket.curve_publickey = secret, public
            self.socket.curve_server = True
            self.socket.zap_domain = POOL_DOMAIN.encode()
        bind(self.socket, config.pool_link.endpoint)
        self.next_heartbeat = 0.0
        self.published = 0

    def publish(self, connection: psycopg.Connection, pool_ids: list[str]) -> None:
        """Each of ``pool_ids`` as the store now holds it: its meter, then a claim per hit
        awaiting verification."""
        with connection.transaction():
            for pool_id in pool_ids:
                for message in _messages(connection, pool_id):
                    self.socket.send_multipart(pool_channel.frames(message))
                    self.published += 1

    def heartbeat(self, connection: psycopg.Connection) -> None:
        """Every pool, once a second."""
        now = time.monotonic()
        if now < self.next_heartbeat:
            return
        self.publish(connection, self.pool_ids)
        self.next_heartbeat = now + pool_channel.HEARTBEAT_S

    def close(self) -> None:
        self.socket.close(0)
        if self._authenticator is not None:
            self._authenticator.stop()


def _messages(connection: psycopg.Connection,
              pool_id: str) -> list[MeterMessage | ClaimedMessage]:
    row = connection.execute(
        """SELECT p.meter, p.wager, p.seed, p.contribution, p.awards,
                  coalesce((SELECT max(entry) FROM floor_pool_ledger l
                             WHERE l.pool_id = p.pool_id), 0)
             FROM floor_pools p WHERE p.pool_id = %s""", (pool_id,)).fetchone()
    if row is None:
        return []
    meter, wager, seed, contribution, awards, entry = row
    hits = connection.execute(
        """SELECT table_id, hand_id, lock_order, paid, share FROM floor_pool_hits
            WHERE pool_id = %s AND verified_seq IS NULL ORDER BY hit""", (pool_id,)).fetchall()
    settings = PoolSettings(wager=wager, seed=seed, contribution=contribution, awards=awards)
    meter_message = MeterMessage(
        pool_id=pool_id, meter=meter, entry=entry, state="locked" if hits else "open",
        hits=tuple(Hit(table_id=table_id, hand_id=hand_id, lock_order=order, paid=paid)
                   for table_id, hand_id, order, paid, _ in hits),
        settings=settings)
    claims = [ClaimedMessage(pool_id=pool_id, table_id=table_id, hand_id=hand_id,
                             lock_order=order, paid=paid, share=share)
              for table_id, hand_id, order, paid, share in hits]
    return [meter_message, *claims]

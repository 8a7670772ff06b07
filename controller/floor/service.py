"""``lowball-table floor``: every configured table's CMS stream into PostgreSQL.

One loop, one thread: it waits on every table's SUB socket, takes what each feed has ready,
and stores it all in one transaction with each table's resume point
(:func:`controller.floor.store.store_batch`). When the database fails, the batch is dropped
and every feed resumes from the resume points the database holds once it is back; when a
table fails, only its feed does. So after any crash or restart (the service's, a table's,
PostgreSQL's) the store continues from what it committed: no seq skipped, none stored twice.
"""

from __future__ import annotations

import signal
import threading
import time
from types import FrameType

import psycopg
import structlog
import zmq

from controller.floor import store
from controller.floor.config import LoadedFloorConfig
from controller.floor.feed import FeedError, TableFeed
from controller.stream_client import StreamError

log = structlog.get_logger("floor")


class FloorService:
    def __init__(self, loaded: LoadedFloorConfig, context: zmq.Context | None = None):
        self.loaded = loaded
        self.config = loaded.config
        self.context = context or zmq.Context()
        self.curves = self._curves()
        self.stopping = threading.Event()
        self.connection: psycopg.Connection | None = None
        self.feeds: list[TableFeed] = []
        #: Events stored, and events received again that the store already held.
        self.stored = self.repeated = self.batches = 0

    def _curves(self) -> dict[str, dict[str, bytes] | None]:
        from controller.stream_security import client_keys

        curves: dict[str, dict[str, bytes] | None] = {}
        for table in self.config.tables:
            if table.server_key_file is None or self.config.curve is None:
                curves[table.id] = None
                continue
            curves[table.id] = client_keys(str(self.loaded.resolve(self.config.curve.key_file)),
                                           str(self.loaded.resolve(table.server_key_file)))
        return curves

    # --- the database ---------------------------------------------------------------------------

    def _connect(self) -> psycopg.Connection:
        """Connect, migrate, apply the ratings settings; the feeds resume from the database's
        resume points."""
        connection = store.connect(self.config.database.dsn)
        try:
            applied = store.migrate(connection)
            if applied:
                log.info("schema migrated", versions=applied)
            store.configure(connection, self.config)
            points = store.resume_points(connection)
        except BaseException:
            connection.close()
            raise
        for feed in self.feeds:
            feed.committed = points.get(feed.table_id, 0)
        return connection

    def _database(self) -> psycopg.Connection | None:
        """The connection, reconnecting (and resetting every feed) after a failure."""
        if self.connection is not None and not self.connection.closed:
            return self.connection
        try:
            self.connection = self._connect()
        except psycopg.OperationalError as error:
            log.warning("database unavailable", error=str(error).strip())
            self.stopping.wait(self.config.service.retry_s)
            return None
        log.info("database connected")
        for feed in self.feeds:
            if feed.client is not None:
                feed.reset("database reconnected")
        return self.connection

    def _lost_database(self, error: BaseException) -> None:
        log.warning("database failed: the batch is dropped, every table resumes from the "
                    "store", error=str(error).strip())
        if self.connection is not None:
            self.connection.close()
        self.connection = None
        for feed in self.feeds:
            feed.reset("database failed")

    # --- the loop -------------------------------------------------------------------------------

    def run(self) -> None:
        service = self.config.service
        self.feeds = [TableFeed(self.context, table, self.curves[table.id], 0,
                                service.replay_timeout_s) for table in self.config.tables]
        full = False
        try:
            while not self.stopping.is_set():
                connection = self._database()
                if connection is None:
                    continue
                self._poll(0 if full else service.batch_wait_ms)
                rows, cursors = self._gather(service.batch_max)
                full = len(rows) >= service.batch_max
                if not rows and not cursors:
                    continue
                try:
                    stored = store.store_batch(connection, rows, cursors)
                except psycopg.Error as error:
                    self._lost_database(error)
                    continue
                self.batches += 1
                self.stored += stored
                self.repeated += len(rows) - stored
                for feed in self.feeds:
                    if feed.table_id in cursors:
                        feed.committed = cursors[feed.table_id]
        finally:
            self.close()

    def _poll(self, wait_ms: int) -> None:
        poller = zmq.Poller()
        for feed in self.feeds:
            if feed.client is None:
                if feed.problem is not None:
                    log.info("following the table again", table=feed.table_id,
                             resume_after=feed.committed)
                poller.register(feed.open(), zmq.POLLIN)
            else:
                poller.register(feed.client.sub_socket, zmq.POLLIN)
        poller.poll(wait_ms)

    def _gather(self, limit: int) -> tuple[list[store.Row], dict[str, int]]:
        rows: list[store.Row] = []
        cursors: dict[str, int] = {}
        for feed in self.feeds:
            room = limit - len(rows)
            if room <= 0:
                break
            try:
                rows += feed.take(room)
            except (StreamError, FeedError) as error:
                log.warning("table stream failed: resuming from the store", table=feed.table_id,
                            resume_after=feed.committed, error=str(error))
                feed.reset(str(error))  # what it took in this call goes with it
                continue
            point = feed.resume_point()
            if point is not None and point != feed.committed:
                cursors[feed.table_id] = point
        return rows, cursors

    def request_stop(self, *_: object) -> None:
        self.stopping.set()

    def close(self) -> None:
        for feed in self.feeds:
            feed.close()
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def serve(loaded: LoadedFloorConfig) -> int:
    service = FloorService(loaded)

    def stop(signum: int, _frame: FrameType | None) -> None:
        log.info("stopping", signal=signal.Signals(signum).name)
        service.request_stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    log.info("floor service starting", tables=len(loaded.config.tables))
    started = time.monotonic()
    service.run()
    log.info("floor service stopped", stored=service.stored, repeated=service.repeated,
             batches=service.batches, seconds=round(time.monotonic() - started, 1))
    return 0

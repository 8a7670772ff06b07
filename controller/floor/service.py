"""``lowball-table floor``: every configured table's CMS stream into PostgreSQL.

One thread per table follows its stream (:class:`controller.floor.feed.TableFeed`): a table
that is slow to answer a replay (the CMS family makes a subscriber replay to learn which seqs
it holds back) delays only itself. Each hands its events, in seq order, with its resume point
to the writer, which stores everything handed to it in one transaction
(:func:`controller.floor.store.store_batch`), every ``batch_wait_ms`` or as soon as
``batch_max`` events wait.

After each batch, every linked pool with a table in it reads that table's newly stored events
into its ledger (:func:`controller.floor.pool.apply`, its own serializable transaction); at
connecting, every pool catches up with what was stored before.

When the database fails, the batch and everything handed over since are dropped and every
feed starts again from the resume points last committed; when a table fails, only its feed
does, from the last resume point it handed over. So after any crash or restart (the
service's, a table's, PostgreSQL's) the store continues from what it committed: no seq
skipped, and none stored twice (the primary key).

A thread of its own (:class:`controller.floor.house_math.HouseMathWorker`) computes the house
edge of each table settings new to the floor, in a process of its own: nothing above waits
for it. With ``[dashboard]``, the floor's read-only page (:mod:`controller.floor.dashboard`) is
served from a thread too, reading the database on each request.
"""

from __future__ import annotations

import signal
import threading
import time
from types import FrameType

import psycopg
import structlog
import zmq

from controller.floor import pool, store
from controller.floor.dashboard import Dashboard, Floor
from controller.floor.house_math import HouseMathWorker
from controller.floor.config import FloorTable, LoadedFloorConfig
from controller.floor.feed import FeedError, TableFeed
from controller.floor.metrics import FloorMetrics
from controller.floor.pool_publisher import PoolPublisher
from controller.stream.client import StreamError, StreamMalformed
from controller.stream.metrics_server import MetricsServer

log = structlog.get_logger("floor")
#: How long a feed waits for its table's next message before it looks whether the service is
#: stopping or the database failed: an event is handed over the moment it arrives, so this
#: bounds only those checks (and an idle table's wake-ups, two a second).
FEED_WAIT_S = 0.5
#: The largest message the floor takes from a table (an event is a few kilobytes, a snapshot
#: tens): a bigger one drops that connection, so a compromised table cannot make the service
#: hold gigabytes, and its feed goes no further than its last event stored.
MAX_MESSAGE_BYTES = 1024 * 1024


class _Handover:
    """What the feeds have handed to the writer and not yet stored, guarded by one lock.

    ``epoch`` is raised whenever the writer drops what it held (the database failed): a feed
    that sees its epoch change drops its client too and resumes from ``committed``."""

    def __init__(self, committed: dict[str, int], batch_max: int):
        self.lock = threading.Condition()
        self.rows: list[store.Row] = []
        self.cursors: dict[str, int] = {}
        self.committed = dict(committed)
        self.epoch = 0
        self.batch_max = batch_max
        #: Table id -> why the database refuses its events; each hold raises ``holds``, and
        #: the table's feed resumes from ``committed`` (after ``retry_s``).
        self.held: dict[str, str] = {}
        self.holds: dict[str, int] = {}
        #: Table id -> the first bad seq of its journal, as its heartbeat names it: its events
        #: are stored up to the seq before, none from it on.
        self.broken: dict[str, int] = {}

    def full(self) -> bool:
        return len(self.rows) >= self.batch_max


class FloorService:
    def __init__(self, loaded: LoadedFloorConfig, context: zmq.SyncContext | None = None):
        self.loaded = loaded
        self.config = loaded.config
        self.context = context or zmq.Context()
        self.context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)   # every socket it opens
        self.curves = self._curves()
        self.stopping = threading.Event()
        self.connection: psycopg.Connection | None = None
        self.handover = _Handover({}, self.config.service.batch_max)
        self.threads: list[threading.Thread] = []
        #: Events stored, and events received again that the store already held.
        self.stored = self.repeated = self.batches = 0
        #: Rows written to the linked pools' ledgers.
        self.ledger_rows = 0
        #: Pool id -> why its ledger cannot be brought up to the store (as last logged).
        self.pool_failures: dict[str, str] = {}
        #: The pool channel (``[pool_link]``), bound by :meth:`run`.
        self.publisher: PoolPublisher | None = None
        #: Table id -> the seq its last heartbeat named (its journal's head, as the table
        #: said it): how far behind the store is, for the metrics.
        self.table_heads: dict[str, int] = {}
        #: Computes the house edge of settings new to the floor, in a process of its own.
        self.house_math = HouseMathWorker(self.config.database.dsn, self.stopping)
        #: The floor's dashboard (``[dashboard]``), listening once :meth:`run` starts.
        self.dashboard: Dashboard | None = None

    def _curves(self) -> dict[str, dict[str, bytes] | None]:
        from controller.stream.security import client_keys

        curves: dict[str, dict[str, bytes] | None] = {}
        for table in self.config.tables:
            if table.server_key_file is None or self.config.curve is None:
                curves[table.id] = None
                continue
            curves[table.id] = client_keys(str(self.loaded.resolve(self.config.curve.key_file)),
                                           str(self.loaded.resolve(table.server_key_file)))
        return curves

    # --- the database ---------------------------------------------------------------------------

    def _database(self) -> psycopg.Connection | None:
        """The connection: connecting migrates, applies the ratings settings and the pools,
        brings each pool's ledger up to the store, and restarts every feed from the
        database's resume points. None (after ``retry_s``) while the database is unavailable,
        going away included."""
        if self.connection is not None and not self.connection.closed:
            return self.connection
        connection = None
        try:
            connection = store.connect(self.config.database.dsn)
            applied = store.migrate(connection)
            if applied:
                log.info("schema migrated", versions=applied)
            store.configure(connection, self.config)
            pool.configure(connection, self.config.pools)
            self._apply_pools(connection, [linked.id for linked in self.config.pools])
            points = store.resume_points(connection)
        except psycopg.OperationalError as error:
            if connection is not None:
                connection.close()
            log.warning("database unavailable", error=str(error).strip())
            self.stopping.wait(self.config.service.retry_s)
            return None
        except BaseException:
            if connection is not None:
                connection.close()
            raise
        self._drop_handover(points)
        log.info("database connected")
        self.connection = connection
        return connection

    def _drop_handover(self, committed: dict[str, int]) -> None:
        with self.handover.lock:
            self.handover.rows, self.handover.cursors = [], {}
            self.handover.committed = dict(committed)
            self.handover.epoch += 1
            self.handover.lock.notify_all()

    def _lost_database(self, error: BaseException) -> None:
        log.warning("database failed: the batch is dropped, every table resumes from the "
                    "store", error=str(error).strip())
        if self.connection is not None:
            self.connection.close()
        self.connection = None
        self._drop_handover(self.handover.committed)

    # --- the writer -----------------------------------------------------------------------------

    def run(self) -> None:
        service = self.config.service
        self.threads = [threading.Thread(target=self._follow, args=(table,), daemon=True,
                                         name=f"floor-{table.id}")
                        for table in self.config.tables]
        metrics = None if self.config.metrics is None else \
            MetricsServer(self.config.metrics, FloorMetrics(self))
        try:
            if self.config.pool_link is not None and self.config.pools:
                self.publisher = PoolPublisher(self.context, self.loaded)
            while self._database() is None and not self.stopping.is_set():
                pass
            for thread in self.threads:
                thread.start()
            self.house_math.start()
            if self.config.dashboard is not None:
                section = self.config.dashboard
                self.dashboard = Dashboard(
                    Floor(self.config.database.dsn, [table.id for table in self.config.tables],
                          self.config.ratings.timezone), section.host, section.port)
                self.dashboard.start()
            while not self.stopping.is_set():
                connection = self._database()
                if connection is None:
                    continue
                handover = self.handover
                with handover.lock:
                    handover.lock.wait_for(lambda: handover.full() or self.stopping.is_set(),
                                           timeout=service.batch_wait_ms / 1000)
                    rows, cursors = handover.rows, handover.cursors
                    handover.rows, handover.cursors = [], {}
                    handover.lock.notify_all()
                if not rows and not cursors:
                    try:
                        self._heartbeat(connection)
                    except psycopg.Error as error:
                        self._lost_database(error)
                    continue
                try:
                    try:
                        stored = store.store_batch(connection, rows, cursors)
                    except store.REFUSED_ROW:
                        stored, refused = store.store_each_table(connection, rows, cursors)
                        for table_id, why in refused.items():
                            cursors.pop(table_id, None)
                            self._hold(table_id, why)
                except psycopg.Error as error:
                    self._lost_database(error)
                    continue
                with handover.lock:
                    handover.committed.update(cursors)
                    for table_id in cursors:
                        handover.held.pop(table_id, None)
                try:
                    moved = self._apply_pools(connection, [
                        linked.id for linked in self.config.pools
                        if any(table in cursors for table in linked.tables)])
                    if moved and self.publisher is not None:
                        self.publisher.publish(connection, moved)
                    self._heartbeat(connection)
                except psycopg.Error as error:
                    self._lost_database(error)
                    continue
                self.batches += 1
                if stored:
                    self.house_math.wake.set()
                self.stored += stored
                self.repeated += len(rows) - stored
        finally:
            self.stopping.set()
            with self.handover.lock:
                self.handover.lock.notify_all()
            for thread in self.threads:
                thread.join(10)
            if self.dashboard is not None:
                self.dashboard.stop()
            self.house_math.wake.set()
            if self.house_math.thread.is_alive():
                self.house_math.thread.join(10)
            if self.connection is not None:
                self.connection.close()
                self.connection = None
            if self.publisher is not None:
                self.publisher.close()
            if metrics is not None:
                metrics.close()

    def _apply_pools(self, connection: psycopg.Connection, pool_ids: list[str]) -> list[str]:
        """Each pool's ledger brought up to the store; the pools whose ledger moved.

        A pool that fails for any reason but the database's (a table's record the pool's code
        did not foresee) keeps its ledger where its last commit left it, is logged, and is
        tried again when its tables' next events are stored (and at each reconnection): one
        table's records stop neither the other pools nor the service storing every table's
        events."""
        moved = []
        for pool_id in pool_ids:
            try:
                written = pool.apply(connection, pool_id)
            except (psycopg.OperationalError, psycopg.InterfaceError):
                raise
            except Exception as error:  # noqa: BLE001 - see the docstring
                if connection.closed or connection.broken:
                    raise
                problem = f"{type(error).__name__}: {error}"[:500]
                if self.pool_failures.get(pool_id) != problem:
                    log.error("a pool's ledger cannot be brought up to the store: it stays "
                              "where it was and is tried again with its tables' next events",
                              pool=pool_id, error=problem, exc_info=True)
                self.pool_failures[pool_id] = problem
                continue
            if self.pool_failures.pop(pool_id, None) is not None:
                log.info("the pool's ledger is up to the store again", pool=pool_id)
            if written:
                moved.append(pool_id)
            self.ledger_rows += written
        return moved

    def _heartbeat(self, connection: psycopg.Connection) -> None:
        """Every pool on the pool channel once a second (a database error is the caller's)."""
        if self.publisher is not None:
            self.publisher.heartbeat(connection)

    @property
    def held(self) -> dict[str, str]:
        """Table id -> why the database refuses that table's events (it is not followed past
        the last event stored until they are stored)."""
        with self.handover.lock:
            return dict(self.handover.held)

    @property
    def broken(self) -> dict[str, int]:
        """Table id -> the first bad seq of its journal (its heartbeat's
        ``journal_broken_at``): the floor stores its events up to the seq before, none from
        it on, until a quarantine's new journal follows."""
        with self.handover.lock:
            return dict(self.handover.broken)

    def _note_break(self, feed: TableFeed) -> None:
        """Say when a table's journal is found broken, and when it is sound again."""
        table_id, broken = feed.table_id, feed.broken_at
        with self.handover.lock:
            before = self.handover.broken.get(table_id)
            if broken == before:
                return
            if broken is None:
                self.handover.broken.pop(table_id)
            else:
                self.handover.broken[table_id] = broken
        if broken is None:
            log.info("a table's journal is sound again (a quarantine's new journal): "
                     "following it", table=table_id, was_broken_at=before)
            return
        stored = feed.resume_after
        log.error("a table's journal is broken: its events are stored up to the seq before "
                  "the break and none from it on (what lies past it is not the table's "
                  "record) until a supervisor quarantines it",
                  table=table_id, journal_broken_at=broken,
                  **({"stored_past_the_break": f"seq {broken} to {stored}, stored before the "
                                              f"break was known"} if stored >= broken else {}))

    def _hold(self, table_id: str, why: str) -> None:
        """The database refused ``table_id``'s rows: drop what it handed over since, and let
        its feed resume from its last committed point (the other tables go on)."""
        log.error("a table's event is refused by the database: the table is not followed "
                  "past its last stored event", table=table_id, error=why,
                  resume_after=self.handover.committed.get(table_id, 0))
        with self.handover.lock:
            handover = self.handover
            handover.rows = [row for row in handover.rows if row.table_id != table_id]
            handover.cursors.pop(table_id, None)
            handover.held[table_id] = why
            handover.holds[table_id] = handover.holds.get(table_id, 0) + 1
            handover.lock.notify_all()

    # --- one table ------------------------------------------------------------------------------

    def _follow(self, table: FloorTable) -> None:
        service, handover = self.config.service, self.handover
        with handover.lock:
            epoch, holds = handover.epoch, handover.holds.get(table.id, 0)
            feed = TableFeed(self.context, table, self.curves[table.id],
                             handover.committed.get(table.id, 0), service.replay_timeout_s)
        try:
            while not self.stopping.is_set():
                held = False
                with handover.lock:
                    if handover.holds.get(table.id, 0) != holds:   # the database refused ours
                        holds, held = handover.holds[table.id], True
                        feed.reset()
                        feed.resume_after = handover.committed.get(table.id, 0)
                    if handover.epoch != epoch:      # the writer dropped what we handed over
                        epoch = handover.epoch       # (the database failed or reconnected)
                        feed.reset()
                        feed.resume_after = handover.committed.get(table.id, 0)
                    # a writer that cannot keep up holds the feeds back, a batch at most each
                    handover.lock.wait_for(lambda: len(handover.rows) < 2 * handover.batch_max
                                           or self.stopping.is_set())
                if held:
                    self.stopping.wait(service.retry_s)
                    continue
                try:
                    rows = feed.take(service.batch_max, FEED_WAIT_S)
                    if feed.client is not None and \
                            (beat := feed.client.last_heartbeat) is not None:
                        self.table_heads[table.id] = beat.seq
                    point = feed.resume_point()
                    self._note_break(feed)
                except (StreamError, FeedError) as error:
                    log.warning("table stream failed: resuming from the store",
                                table=table.id, resume_after=feed.resume_after, error=str(error))
                    feed.reset()
                    # a table that restarted is asked again at once; one whose journal or
                    # answers make no sense would answer the same, so it waits
                    self.stopping.wait(service.retry_s
                                       if isinstance(error, (FeedError, StreamMalformed)) else 0)
                    continue
                if not rows and (point is None or point == feed.resume_after):
                    continue
                with handover.lock:
                    if handover.epoch != epoch or handover.holds.get(table.id, 0) != holds:
                        continue
                    handover.rows.extend(rows)
                    if point is not None:
                        handover.cursors[table.id] = point
                        feed.resume_after = point
                    if handover.full():
                        handover.lock.notify_all()
        finally:
            feed.close()

    def request_stop(self, *_: object) -> None:
        self.stopping.set()
        with self.handover.lock:
            self.handover.lock.notify_all()


def serve(loaded: LoadedFloorConfig) -> int:
    service = FloorService(loaded)

    def stop(signum: int, _frame: FrameType | None) -> None:
        log.info("stopping", signal=signal.Signals(signum).name)
        service.request_stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    log.info("floor service starting", tables=len(loaded.config.tables))
    started = time.monotonic()
    try:
        service.run()
    except (store.SchemaError, psycopg.Error) as error:
        log.error("floor service cannot go on", error=str(error).strip())
        return 2
    log.info("floor service stopped", stored=service.stored, repeated=service.repeated,
             batches=service.batches, ledger_rows=service.ledger_rows,
             seconds=round(time.monotonic() - started, 1))
    return 0

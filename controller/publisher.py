"""The table's event stream on ZeroMQ, in the manner of the ZeroMQ Guide's Clone pattern.

Two sockets:

* **PUB** (``pub_endpoint``): every journaled event as a two-frame message
  ``[topic, message]`` (topic ``<table_id>.<type>``, message the journal's bytes), and a
  heartbeat every second (topic ``<table_id>.heartbeat``) carrying the last published seq.
* **ROUTER** (``replay_endpoint``): ``{"request": "snapshot"}`` is answered with the table
  state and the seq it reflects; ``{"request": "replay", "after": N, "limit": M}`` with the
  journaled messages after N, then ``{"type": "replay_end", "last": L}``. Use a DEALER
  socket: a replay is many replies to one request.

Why it never blocks the table: both sockets send with ``zmq.NOBLOCK``. A PUB socket drops a
message for a subscriber whose queue is full (``SNDHWM``), and that subscriber sees a gap in
``seq`` and fills it by replay; a ROUTER with ``ROUTER_MANDATORY`` off drops replies to a peer
that is gone or full, and the client's replay notices the short answer. A ``zmq.Again`` from
either is counted (:attr:`EventPublisher.dropped`), never raised. :meth:`handle_replay` serves
only requests already queued, and at most :data:`controller.wire.MAX_REPLAY_BATCH` records per
request, so a flood of requests or a huge replay cannot stall the daemon's loop either.

The publisher is used from the daemon's main loop thread only (ZeroMQ sockets are not
thread-safe); register :attr:`EventPublisher.sockets` with that loop's ``zmq.Poller`` for
``POLLIN`` and call :meth:`handle_replay` when one is readable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
import structlog
import zmq

from controller import wire
from controller.journal import Journal, JournalRecord

#: The largest request the ROUTER accepts; a bigger one disconnects its sender.
MAX_REQUEST_BYTES = 64 * 1024
#: Most requests one :meth:`EventPublisher.handle_replay` call serves before returning.
MAX_REQUESTS_PER_CALL = 64


class EventPublisher:
    """Publishes journal records and heartbeats; answers snapshot and replay requests.

    ``snapshot`` returns the table state as a JSON-able dict; it is called from
    :meth:`handle_replay`, in the same thread as every append, so the state and
    ``journal.last_seq`` read together describe one moment."""

    def __init__(self, context: zmq.Context, *, table_id: str, pub_endpoint: str,
                 replay_endpoint: str, journal: Journal, snapshot: Callable[[], dict],
                 sndhwm: int = 10_000):
        self.table_id = table_id
        self._journal = journal
        self._snapshot = snapshot
        self._log = structlog.get_logger("controller.publisher").bind(table_id=table_id)
        #: The last seq published (or journaled before this publisher started).
        self.last_seq = journal.last_seq
        self.published = 0
        #: Messages ZeroMQ refused with ``zmq.Again`` (PUB and ROUTER together).
        self.dropped = 0
        self.requests_served = 0
        self._pub = context.socket(zmq.PUB)
        self._router = context.socket(zmq.ROUTER)
        try:
            self._pub.setsockopt(zmq.LINGER, 0)
            self._pub.setsockopt(zmq.SNDHWM, sndhwm)
            self._pub.bind(pub_endpoint)
            self._router.setsockopt(zmq.LINGER, 0)
            self._router.setsockopt(zmq.ROUTER_MANDATORY, 0)
            # Room for a few full replies per peer; beyond that replies are dropped, not queued.
            self._router.setsockopt(zmq.SNDHWM, 4 * (wire.MAX_REPLAY_BATCH + 1))
            self._router.setsockopt(zmq.MAXMSGSIZE, MAX_REQUEST_BYTES)
            self._router.bind(replay_endpoint)
        except BaseException:
            self.close()
            raise

    @property
    def pub_endpoint(self) -> str:
        """The bound PUB endpoint, with the real port when bound to ``tcp://host:*``."""
        return self._pub.getsockopt_string(zmq.LAST_ENDPOINT)

    @property
    def replay_endpoint(self) -> str:
        return self._router.getsockopt_string(zmq.LAST_ENDPOINT)

    @property
    def sockets(self) -> tuple[zmq.Socket, ...]:
        """The sockets to poll for ``POLLIN`` (the ROUTER); then call :meth:`handle_replay`."""
        return (self._router,)

    # --- PUB -----------------------------------------------------------------------------------

    def publish(self, record: JournalRecord) -> bool:
        """Send a journaled record to subscribers; False if ZeroMQ refused it (counted)."""
        self.last_seq = max(self.last_seq, record.seq)
        sent = self._send(self._pub, [wire.topic(self.table_id, record.type), record.message])
        self.published += sent
        return sent

    def heartbeat(self, state: str, *, ts: datetime | None = None) -> bool:
        """Send a heartbeat with the last published seq and the table ``state``."""
        message = wire.encode_heartbeat(table_id=self.table_id, seq=self.last_seq,
                                        ts=ts or datetime.now(UTC), state=state)
        return self._send(self._pub, [wire.topic(self.table_id, wire.HEARTBEAT), message])

    def _send(self, socket: zmq.Socket, frames: list[bytes]) -> bool:
        try:
            socket.send_multipart(frames, zmq.NOBLOCK)
        except zmq.Again:
            self.dropped += 1
            return False
        return True

    # --- ROUTER --------------------------------------------------------------------------------

    def handle_replay(self, max_requests: int = MAX_REQUESTS_PER_CALL) -> int:
        """Answer the requests already waiting (at most ``max_requests``); never waits.
        Returns how many were answered."""
        served = 0
        while served < max_requests:
            try:
                frames = self._router.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                break
            served += 1
            # DEALER sends [payload]; REQ sends ["", payload]: reply on the same route.
            route, body = frames[:1], frames[1:]
            if len(body) == 2 and body[0] == b"":
                route, body = frames[:2], frames[2:]
            if len(body) != 1:
                replies: Iterator[bytes] = iter([wire.error_reply(
                    f"a request is one frame of JSON, not {len(body)} frames")])
            else:
                replies = self._answer(body[0])
            for reply in replies:
                self._send(self._router, [*route, reply])
        self.requests_served += served
        return served

    def _answer(self, payload: bytes) -> Iterator[bytes]:
        try:
            request = wire.parse_request(payload)
        except wire.WireError as error:
            yield wire.error_reply(f"bad request: {error}")
            return
        if isinstance(request, wire.SnapshotRequest):
            yield self._snapshot_reply()
            return
        limit = min(request.limit or wire.MAX_REPLAY_BATCH, wire.MAX_REPLAY_BATCH)
        last = request.after
        for record in self._journal.records(after_seq=request.after, limit=limit):
            yield record.message
            last = record.seq
        yield wire.replay_end(last)

    def _snapshot_reply(self) -> bytes:
        seq = self._journal.last_seq
        try:
            return wire.snapshot_reply(seq, self._snapshot())
        except Exception as error:  # a snapshot bug must not take the table down
            self._log.error("snapshot_failed", error=repr(error))
            return wire.error_reply(f"snapshot unavailable: {type(error).__name__}: {error}")

    def close(self) -> None:
        self._pub.close(linger=0)
        self._router.close(linger=0)

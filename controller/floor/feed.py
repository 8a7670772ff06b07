"""One table's CMS stream, followed for the floor store from a resume point.

A feed waits for the table's heartbeat before it asks for anything (a table that is down
costs nothing), then syncs from the seq the store resumes after
(:meth:`controller.stream.client.StreamClient.sync` with ``replay_from``) and hands out events
in seq order, gaps filled by replay. A table whose heartbeat says its journal is broken at a
seq (``journal_broken_at``) is followed up to the seq before and no further: what lies past a
break is not the table's record, whoever serves it. Whatever goes wrong (the table stops answering, a reply
makes no sense, the store failed), the feed is reset: its client is closed and a new one
resumes from :attr:`TableFeed.resume_after`, so nothing is skipped, and the store's primary
key keeps a seq received twice from being stored twice.

After a quarantine, the records of the archived journal come as any others (the store keeps
them by seq); the seqs the table does not serve (past the archived journal's first bad
record) are logged as an error naming them and why (:attr:`StreamClient.lost`).
"""

from __future__ import annotations

import structlog
import zmq

from controller.errors import LowballError
from controller.stream import wire
from controller.floor.config import FloorTable
from controller.floor.store import Row
from controller.stream.client import StreamClient, StreamError

log = structlog.get_logger("floor")


class FeedError(LowballError, RuntimeError):
    """The table's journal cannot be the one the store followed."""


class TableFeed:
    """Used from one thread (its ZeroMQ sockets are)."""

    def __init__(self, context: zmq.SyncContext, table: FloorTable,
                 curve: dict[str, bytes] | None, resume_after: int, timeout_s: float):
        self.table = table
        self.context, self.curve, self.timeout_s = context, curve, timeout_s
        #: Where a new client resumes: everything up to it is stored, or handed to the writer.
        self.resume_after = resume_after
        self.client: StreamClient | None = None
        self.synced = False
        #: The first bad seq of the table's journal, as its heartbeat names it (None: sound).
        #: Nothing from it on is stored: those records are not the table's (another process
        #: put them there), whoever serves them. A quarantine's new journal clears it.
        self.broken_at: int | None = None
        #: Where the feed stopped at a break (its client dropped): the next resume point.
        self._stopped_at: int | None = None

    @property
    def table_id(self) -> str:
        return self.table.id

    def open(self) -> None:
        """Subscribe; :meth:`take` syncs once the table's heartbeat is heard."""
        self.client = StreamClient(self.context, table_id=self.table.id,
                                   pub_endpoint=self.table.cms_events,
                                   replay_endpoint=self.table.cms_replay, family=wire.CMS,
                                   curve=self.curve)
        self.synced = False

    def reset(self) -> None:
        """Drop the client and what it had not handed out; the next :meth:`open` resumes from
        :attr:`resume_after`."""
        if self.client is not None:
            self.client.close()
        self.client = None
        self.synced = False

    def take(self, limit: int, wait_s: float) -> list[Row]:
        """Up to ``limit`` events in seq order, waiting up to ``wait_s`` for the first (and
        syncing first, once the table has sent a heartbeat). StreamError or FeedError: reset
        the feed."""
        if self.client is None:
            self.open()
        client = self.client
        assert client is not None
        if not self.synced:
            beat = client.await_heartbeat(timeout=wait_s)
            if beat is None:
                return []
            self.broken_at = beat.journal_broken_at
            if self.broken_at is not None and self.resume_after >= self.broken_at - 1:
                return []  # held: everything before the break is stored, nothing after is
            snapshot = client.sync(replay_from=self.resume_after, timeout=self.timeout_s)
            if snapshot.seq < self.resume_after:
                raise FeedError(f"table {self.table.id}'s journal ends at seq {snapshot.seq}, "
                                f"but the floor stored it up to seq {self.resume_after}: a "
                                "different journal? Not following it")
            self.synced = True
        rows: list[Row] = []
        wait = wait_s
        while len(rows) < limit:
            envelope = client.receive(wait, replay_timeout=self.timeout_s)
            if envelope is None:
                break
            wait = 0
            if envelope.table_id != self.table.id:
                raise StreamError(f"table {self.table.id}: a message of table "
                                  f"{envelope.table_id!r} on its stream")
            if self._past_break(client, envelope.seq):
                break
            kind: str = envelope.type
            rows.append(Row(self.table.id, envelope.seq, kind, envelope.hand_id,
                            envelope.ts, envelope.model_dump_json()))
        while client.lost:  # seqs the table will never serve: said, never skipped silently
            lost = client.lost.popleft()
            log.error("seqs not served by the table: not stored", table=self.table.id,
                      first=lost.first, last=lost.last, reason=lost.reason)
        if self.client is not None and (beat := self.client.last_heartbeat) is not None:
            self.broken_at = beat.journal_broken_at
        return rows

    def _past_break(self, client: StreamClient, seq: int) -> bool:
        """Whether ``seq`` is at or past the break the table's last heartbeat names: then the
        feed stops before it, and its client (which has taken it) is dropped; the next one
        resumes before the break, and waits there while the table is held."""
        beat = client.last_heartbeat
        broken = None if beat is None else beat.journal_broken_at
        if broken is None or seq < broken:
            return False
        self.broken_at = broken
        delivered = client.delivered_through()
        # (never back before what was stored: a break found under records already stored)
        self._stopped_at = max(self.resume_after,
                               min(broken - 1, seq - 1 if delivered is None else delivered))
        self.reset()
        return True

    def resume_point(self) -> int | None:
        """Where to resume once what :meth:`take` returned is stored; None: not synced."""
        if self._stopped_at is not None:
            point, self._stopped_at = self._stopped_at, None
            return point
        if self.client is None or not self.synced:
            return None
        return self.client.delivered_through()

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None

"""The table's event stream on ZeroMQ, in the manner of the ZeroMQ Guide's Clone pattern.

Two sockets per topic family (:data:`controller.stream.wire.FAMILIES`: surveillance sees every
card live, the table family what the table shows (:mod:`controller.stream.table_family`), the
CMS family no card before the hand is over (:mod:`controller.stream.cms_view`)):

* **PUB** (``pub_endpoint``; ``table_pub_endpoint``; ``cms_pub_endpoint``): every journaled
  event as a two-frame message ``[topic, message]`` (topic ``<family>.<table_id>.<type>``,
  message the journal's bytes, or on the table and CMS families held or redacted while the
  hand is in play), and a heartbeat every second (topic ``<family>.<table_id>.heartbeat``)
  carrying the last journaled seq.
* **ROUTER** (``replay_endpoint``; ``table_replay_endpoint``; ``cms_replay_endpoint``):
  ``{"request": "snapshot"}`` is answered with the table state as the family may see it and
  the seq it reflects; ``{"request": "replay", "after": N,
  "limit": M}`` with the journaled messages after N, then ``{"type": "replay_end", "last":
  L}``, L the last seq the reply covers (on the CMS family a held record is covered but not
  sent). Use a DEALER socket: a replay is many replies to one request. A journal that
  continues a quarantined one holds no record before its first, ``journal_continued``: a
  replay after a seq before it is served from the archived journals
  (:mod:`controller.stream.archive`): runs of records after ``{"type": "replay_archived",
  "archived": ..., "first": F, "last": L}``, and the seqs they cannot vouch for as
  ``{"type": "replay_gap", "first": F, "last": L, "reason": ...}``; then the journal's own.

Only the table's own records are served: none past the last one the daemon journaled (another
process may append to the file), and once the table is held (:meth:`EventPublisher.hold`) none
from the journal's break on. A replay, a snapshot's seq and the heartbeat's head all stop
there; the records past it stay in the file as evidence.

The family is fixed by the socket, never by the request: a table or CMS endpoint (and, with
CURVE, its key allow-list) cannot be talked into sending a card early. The table and CMS
sockets exist only when both of their endpoints are given.

Why it never blocks the table: both sockets send with ``zmq.NOBLOCK``. A PUB socket drops a
message for a subscriber whose queue is full (``SNDHWM``), and that subscriber sees a gap in
``seq`` and fills it by replay; a ROUTER with ``ROUTER_MANDATORY`` off drops replies to a peer
that is gone or full, and the client's replay notices the short answer. A ``zmq.Again`` from
either is counted (:attr:`EventPublisher.dropped`), never raised. :meth:`handle_replay` serves
only requests already queued, and at most :data:`controller.stream.wire.MAX_REPLAY_BATCH` records per
request, so a flood of requests or a huge replay cannot stall the daemon's loop either.

The publisher is used from the daemon's main loop thread only (ZeroMQ sockets are not
thread-safe); register :attr:`EventPublisher.sockets` with that loop's ``zmq.Poller`` for
``POLLIN`` and call :meth:`handle_replay` when one is readable.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import structlog
import zmq

from controller.core.table_events import HAND_ENDS
from controller.stream import cms_view, table_family, wire
from controller.stream.archive import Archives, Lost
from controller.stream.frames import FrameReader, TooManyFrames, send_whole
from controller.stream.journal import GENESIS_HASH, READ_ERRORS, Journal, JournalRecord
from controller.stream.transport_identity import client_of
from controller.stream.security import bind

#: The largest request the ROUTER accepts; a bigger one disconnects its sender.
MAX_REQUEST_BYTES = 64 * 1024
#: The most frames a replay request has as the socket reads it: the client's routing id, a
#: REQ's delimiter, the request. One with more is read to its end a bounded number of frames
#: a call (:mod:`controller.stream.frames`), dropped and refused.
MAX_REQUEST_FRAMES = 3
#: Most requests one :meth:`EventPublisher.handle_replay` call serves before returning.
MAX_REQUESTS_PER_CALL = 64
#: Refused requests kept for the daemon between two calls (the rest are only answered).
MAX_REFUSALS_KEPT = 256


#: Configures one server socket for a domain (CURVE, see :mod:`controller.stream.security`).
Secure = Callable[[zmq.SyncSocket, str], None]


#: What one family sends of a journaled record now, None when it holds it:
#: (type, hand id, the journal's bytes, the hand in play) -> bytes.
View = Callable[[str, "str | None", bytes, "str | None"], "bytes | None"]
#: What a family gets, once its hand is over, of a record (type, bytes) it held; None: none.
Held = Callable[[str, bytes], "bytes | None"]


def _everything(kind: str, hand_id: str | None, message: bytes,
                open_hand: str | None) -> bytes | None:
    return message


def _nothing_held(kind: str, message: bytes) -> bytes | None:
    return None


class _Family:
    """The PUB and ROUTER sockets of one topic family, and what it may see."""

    def __init__(self, name: str, pub: zmq.SyncSocket, router: zmq.SyncSocket, view: View,
                 held: Held, snapshot: Callable[[], dict[str, Any]]):
        self.name, self.pub, self.router = name, pub, router
        self.view, self.held, self.snapshot = view, held, snapshot
        self.reader = FrameReader(router, MAX_REQUEST_FRAMES)
        #: event type -> its topic on this family (one per type: the types are a fixed set)
        self.topics: dict[str, bytes] = {}


class EventPublisher:
    """Publishes journal records and heartbeats; answers snapshot and replay requests.

    ``snapshot`` returns the table state as a JSON-able dict; it is called from
    :meth:`handle_replay`, in the same thread as every append, so the state and
    ``journal.last_seq`` read together describe one moment."""

    def __init__(self, context: zmq.SyncContext, *, table_id: str, pub_endpoint: str,
                 replay_endpoint: str, journal: Journal, snapshot: Callable[[], dict[str, Any]],
                 sndhwm: int = 10_000, cms_pub_endpoint: str | None = None,
                 cms_replay_endpoint: str | None = None, secure: Secure | None = None,
                 table_pub_endpoint: str | None = None, table_replay_endpoint: str | None = None,
                 table_snapshot: Callable[[], dict[str, Any]] | None = None):
        """``snapshot``: the table state with every card (surveillance's); ``table_snapshot``:
        as the table shows it (the table family's; required with its endpoints)."""
        self.table_id = table_id
        self._journal = journal
        self._log = structlog.get_logger("controller.stream.publisher").bind(table_id=table_id)
        #: The last seq published (or journaled before this publisher started).
        self.last_seq = journal.last_seq
        #: The last record served while the table is held (:meth:`hold`), and its hash.
        self._held_at: tuple[int, str] | None = None
        self.published = 0
        #: Messages ZeroMQ refused with ``zmq.Again`` (PUB and ROUTER together).
        self.dropped = 0
        self.requests_served = 0
        self._refusals: list[tuple[str, str, str]] = []
        #: The hand in play (its records are confidential on the CMS family) and its first seq.
        self.open_hand, self._hand_first_seq = _hand_in_play(journal)
        #: the journals a quarantine set aside, which a replay before the first seq reads
        self._archives = Archives(journal, table_id)
        self._sndhwm = sndhwm
        self._context = context
        self._secure = secure
        self._families: list[_Family] = []
        #: the family handle_replay served first last time (the next goes first next time)
        self._first_family = 0
        try:
            self._families.append(self._bind(wire.SURVEILLANCE, pub_endpoint, replay_endpoint,
                                             _everything, _nothing_held, snapshot))
            if (table_pub_endpoint is None) != (table_replay_endpoint is None):
                raise ValueError("the table family needs both a PUB and a replay endpoint")
            if table_pub_endpoint is not None and table_replay_endpoint is not None:
                if table_snapshot is None:
                    raise ValueError("the table family needs the snapshot as the table shows "
                                     "it (table_snapshot)")
                self._families.append(self._bind(
                    wire.TABLE, table_pub_endpoint, table_replay_endpoint,
                    table_family.table_message, table_family.released, table_snapshot))
            if (cms_pub_endpoint is None) != (cms_replay_endpoint is None):
                raise ValueError("the CMS family needs both a PUB and a replay endpoint")
            if cms_pub_endpoint is not None and cms_replay_endpoint is not None:
                self._families.append(self._bind(
                    wire.CMS, cms_pub_endpoint, cms_replay_endpoint, cms_view.cms_message,
                    cms_view.released, lambda: cms_view.cms_snapshot(
                        table_snapshot() if table_snapshot is not None else snapshot())))
        except BaseException:
            self.close()
            raise

    def _bind(self, name: str, pub_endpoint: str, replay_endpoint: str, view: View,
              held: Held, snapshot: Callable[[], dict[str, Any]]) -> _Family:
        pub = self._context.socket(zmq.PUB)
        router = self._context.socket(zmq.ROUTER)
        family = _Family(name, pub, router, view, held, snapshot)
        self._families.append(family)  # closed on failure
        pub.setsockopt(zmq.LINGER, 0)
        pub.setsockopt(zmq.SNDHWM, self._sndhwm)
        router.setsockopt(zmq.LINGER, 0)
        router.setsockopt(zmq.ROUTER_MANDATORY, 0)
        # Room for a few full replies per peer; beyond that replies are dropped, not queued.
        router.setsockopt(zmq.SNDHWM, 4 * (wire.MAX_REPLAY_BATCH + 1))
        router.setsockopt(zmq.MAXMSGSIZE, MAX_REQUEST_BYTES)
        if self._secure is not None:
            self._secure(pub, name)
            self._secure(router, name)
        bind(pub, pub_endpoint)
        bind(router, replay_endpoint)
        self._families.remove(family)
        return family

    def _family(self, name: str) -> _Family:
        for family in self._families:
            if family.name == name:
                return family
        raise LookupError(f"no {name} sockets (stream.{name}_events / stream.{name}_replay "
                          f"unset)")

    @property
    def surveillance_pub(self) -> zmq.SyncSocket:
        """The surveillance PUB socket (its high-water mark and buffers may be tuned)."""
        return self._family(wire.SURVEILLANCE).pub

    @property
    def pub_endpoint(self) -> str:
        """The bound PUB endpoint, with the real port when bound to ``tcp://host:*``."""
        return self._family(wire.SURVEILLANCE).pub.getsockopt_string(zmq.LAST_ENDPOINT)

    @property
    def replay_endpoint(self) -> str:
        return self._family(wire.SURVEILLANCE).router.getsockopt_string(zmq.LAST_ENDPOINT)

    @property
    def table_pub_endpoint(self) -> str:
        return self._family(wire.TABLE).pub.getsockopt_string(zmq.LAST_ENDPOINT)

    @property
    def table_replay_endpoint(self) -> str:
        return self._family(wire.TABLE).router.getsockopt_string(zmq.LAST_ENDPOINT)

    @property
    def cms_pub_endpoint(self) -> str:
        return self._family(wire.CMS).pub.getsockopt_string(zmq.LAST_ENDPOINT)

    @property
    def cms_replay_endpoint(self) -> str:
        return self._family(wire.CMS).router.getsockopt_string(zmq.LAST_ENDPOINT)

    @property
    def sockets(self) -> tuple[zmq.SyncSocket, ...]:
        """The sockets to poll for ``POLLIN`` (the ROUTERs); then call :meth:`handle_replay`."""
        return tuple(family.router for family in self._families)

    # --- PUB -----------------------------------------------------------------------------------

    def publish(self, record: JournalRecord) -> bool:
        """Send a journaled record to subscribers; False if ZeroMQ refused it (counted).
        On the table and CMS families the record may be held (and sent after its hand ends)
        or redacted."""
        self.last_seq = max(self.last_seq, record.seq)
        families = self._families
        sent = self._send(families[0].pub, [self._topic(families[0], record.type),
                                            record.message])
        self.published += sent
        if record.type == "hand_started":
            self.open_hand, self._hand_first_seq = record.hand_id, record.seq
        for family in families[1:]:
            message = family.view(record.type, record.hand_id, record.message, self.open_hand)
            if message is not None:
                self._send(family.pub, [self._topic(family, record.type), message])
        if record.type in HAND_ENDS and record.hand_id == self.open_hand:
            self._release(record.seq)
        return sent

    def _topic(self, family: _Family, kind: str) -> bytes:
        topic = family.topics.get(kind)
        if topic is None:  # one per event type: built once (the types are a fixed set)
            topic = family.topics[kind] = wire.topic(self.table_id, kind, family.name)
        return topic

    def _release(self, end_seq: int) -> None:
        """The hand is over: send the table and CMS families the records each held, in seq
        order."""
        hand, first = self.open_hand, self._hand_first_seq
        self.open_hand, self._hand_first_seq = None, None
        if len(self._families) < 2 or hand is None:
            return
        start = (first or end_seq) - 1
        for record in self._journal.records(after_seq=start, limit=end_seq - start):
            if record.hand_id != hand:
                continue
            for family in self._families[1:]:
                if (message := family.held(record.type, record.message)) is not None:
                    self._send(family.pub, [self._topic(family, record.type), message])

    def hold(self, broken_at: int) -> None:
        """The journal is broken at seq ``broken_at``: from now on no record from it on is
        served (by replay, as a snapshot's seq, as the heartbeat's head). They are kept on disk
        as evidence, and a quarantine archives them; they are not the table's records."""
        seq = min(self._journal.last_seq, broken_at - 1)
        try:
            hash_ = self._journal.last_hash if seq == self._journal.last_seq else \
                self._journal.hash_at(seq) or GENESIS_HASH
        except READ_ERRORS:  # a file that cannot be read: held all the same, no hash vouched
            hash_ = GENESIS_HASH
        if self._held_at is None or seq < self._held_at[0]:
            self._held_at = (seq, hash_)

    def _head(self) -> tuple[int, str]:
        """The seq and hash of the last record the table serves: the daemon's own last
        record (one another process put after it is not served), or, held, the last before
        the break."""
        if self._held_at is not None:
            return self._held_at
        return self._journal.last_seq, self._journal.last_hash

    def heartbeat(self, state: str, *, broken_at: int | None = None,
                  verified_at_start: int | None = None, verified_through: int | None = None,
                  ts: datetime | None = None) -> bool:
        """Send a heartbeat with the table ``state`` and the journal's head: the seq and hash
        of the last record served (a subscriber that kept them detects a rewritten history),
        ``broken_at``, the first bad seq of a journal whose chain failed a check, and how far
        the daemon has verified the chain (at start, and since)."""
        seq, hash_ = self._head()
        ts = ts or datetime.now(UTC)
        message = wire.encode_heartbeat(table_id=self.table_id, seq=seq,
                                        hash=hash_, broken_at=broken_at, ts=ts, state=state,
                                        verified_at_start=verified_at_start,
                                        verified_through=verified_through)
        pinned = self.pinned_head()
        withheld = message if pinned == (seq, hash_) else wire.encode_heartbeat(
            table_id=self.table_id, seq=seq, hash=pinned[1], hash_seq=pinned[0],
            broken_at=broken_at, ts=ts, state=state, verified_at_start=verified_at_start,
            verified_through=verified_through)
        sent = True
        for family in self._families:
            sent &= self._send(family.pub, [
                wire.topic(self.table_id, wire.HEARTBEAT, family.name),
                withheld if family.name in wire.WITHHOLDING else message])
        return sent

    def pinned_head(self) -> tuple[int, str]:
        """The seq and hash the table and CMS families may be told: the head, but while a hand
        is in play its first record's (a later hash pins a card the families hold)."""
        head = self._head()
        first = self._hand_first_seq
        if self.open_hand is None or first is None or first > head[0]:
            return head
        try:
            return first, self._journal.hash_at(first) or GENESIS_HASH
        except READ_ERRORS:  # a file that cannot be read: the head is not told either
            return first, GENESIS_HASH

    def _send(self, socket: zmq.SyncSocket, frames: list[bytes]) -> bool:
        try:
            send_whole(socket, frames)
        except zmq.Again:
            self.dropped += 1
            return False
        return True

    # --- ROUTER --------------------------------------------------------------------------------

    def handle_replay(self, max_requests: int = MAX_REQUESTS_PER_CALL,
                      deadline: float | None = None) -> int:
        """Answer the requests already waiting (at most ``max_requests`` per family, and none
        begun after ``deadline`` on :func:`time.monotonic`); never waits. Returns how many
        were answered.

        The family served first changes from call to call: one family's clients asking
        without pause (a replay costs up to a whole deadline) take at most every other call's
        time, and the other family (the floor's, surveillance's) is answered the next."""
        served = 0
        families = self._families
        self._first_family = (self._first_family + 1) % len(families)
        for family in families[self._first_family:] + families[:self._first_family]:
            served += self._handle(family, max_requests, deadline)
        self.requests_served += served
        return served

    def find_archives(self) -> int:
        """Find and check the archived journals this journal continues, now (at start: the
        first replay that reaches them would otherwise pay for it, on the table's turn); how
        many were found."""
        return self._archives.find()

    def check_archives(self) -> int:
        """Go on with a search for the archived journals due or under way (one made again
        after an archive could not be served, or the first of a table started held), a
        bounded slice of it: the daemon calls it at each heartbeat, on the table's turn. The
        records read (at most :data:`controller.stream.archive.SLICE`)."""
        if self._journal.first_seq <= 1:
            return 0  # it continues no quarantined journal
        return self._archives.check()

    def take_refusals(self) -> list[tuple[str, str, str]]:
        """The requests refused since the last call, as ``(family, client, reason)``: the
        daemon journals them (in bounded form, see :mod:`controller.daemon.refusal_ledger`)."""
        refusals, self._refusals = self._refusals, []
        return refusals

    def _handle(self, family: _Family, max_requests: int, deadline: float | None) -> int:
        served = 0
        while served < max_requests and (deadline is None or time.monotonic() < deadline):
            frames = family.reader.receive()
            if frames is None:  # none waits, or one too long is being dropped: next call
                break
            served += 1
            if isinstance(frames, TooManyFrames):
                # answered as a REQ is if it starts as one: its frames are not read
                kept = frames.kept
                route = [kept[0].bytes, *([b""] if kept[1].bytes == b"" else [])]
                self._send(family.router, [*route, self._refuse(
                    family.name, kept[0], f"a request is one frame of JSON, not "
                                          f"{frames.frames - len(route)} frames: nothing of "
                                          f"it was read")])
                continue
            # DEALER sends [payload]; REQ sends ["", payload]: reply on the same route.
            route, body = [frames[0].bytes], frames[1:]
            if len(body) == 2 and body[0].bytes == b"":
                route, body = [*route, b""], body[1:]
            replies: Iterator[bytes]
            if len(body) != 1:
                replies = iter([self._refuse(
                    family.name, frames[-1], f"a request is one frame of JSON, not "
                                             f"{len(body)} frames")])
            else:
                replies = self._answer(body[0], family.name)
            try:
                for reply in replies:
                    self._send(family.router, [*route, reply])
            except Exception as error:  # a fault serving one request must not end the table
                self._log.exception("replay request failed", family=family.name)
                self._send(family.router, [*route, self._refuse(
                    family.name, body[-1], f"the request could not be served "
                                           f"({type(error).__name__})")])
        return served

    def _refuse(self, family: str, frame: zmq.Frame, reason: str) -> bytes:
        if len(self._refusals) < MAX_REFUSALS_KEPT:
            self._refusals.append((family, client_of(frame), reason))
        return wire.error_reply(reason)

    def _answer(self, frame: zmq.Frame, family: str = wire.SURVEILLANCE) -> Iterator[bytes]:
        served_family = self._family(family)
        try:
            request = wire.parse_request(frame.bytes)
        except wire.WireError as error:
            yield self._refuse(family, frame, f"bad request: {error}")
            return
        if isinstance(request, wire.SnapshotRequest):
            yield self._snapshot_reply(family)
            return
        limit = min(request.limit or wire.MAX_REPLAY_BATCH, wire.MAX_REPLAY_BATCH)
        last = request.after
        ceiling = last + limit
        if last < self._journal.first_seq - 1:
            # the seqs before the journal's first are the archived journals'
            if (checking := self._archives.checking()) is not None:
                # not known yet: neither served nor lost (a gap would be final to the client)
                yield wire.error_reply(f"seq {last + 1} on are in archived journals not "
                                       f"checked yet ({checking}): ask again in a few seconds")
                return
            for served in self._archives.serve(last, min(ceiling, self._journal.first_seq - 1)):
                if isinstance(served, Lost):
                    yield wire.replay_gap(*served)
                    last = served.last
                    continue
                records = served.records
                yield wire.replay_archived(served.archived, records[0].seq, records[-1].seq)
                for record in records:
                    # an archived hand is over (the quarantine voided the one in play)
                    message = served_family.view(record.type, record.hand_id, record.message,
                                                 None)
                    if message is not None:
                        yield message
                last = records[-1].seq
        head = self._head()[0]  # nothing past the table's own records, nor its break
        for record in self._journal.records(after_seq=last, limit=ceiling - last):
            if record.seq > head:
                break
            message = served_family.view(record.type, record.hand_id, record.message,
                                         self.open_hand)
            if message is not None:
                yield message
            last = record.seq
        yield wire.replay_end(last)

    def _snapshot_reply(self, family: str = wire.SURVEILLANCE) -> bytes:
        seq = self._head()[0]
        try:
            return wire.snapshot_reply(seq, self._family(family).snapshot())
        except Exception as error:  # a snapshot bug must not take the table down
            self._log.error("snapshot_failed", error=repr(error))
            return wire.error_reply(f"snapshot unavailable: {type(error).__name__}: {error}")

    def close(self) -> None:
        self._archives.close()
        for family in self._families:
            family.pub.close(linger=0)
            family.router.close(linger=0)


def _hand_in_play(journal: Journal) -> tuple[str | None, int | None]:
    """The hand the journal leaves in play (started, neither settled nor voided) and the seq
    of its ``hand_started``; (None, None) between hands."""
    started = journal.last_of("hand_started")
    if started is None:
        return None, None
    ended = journal.last_of(*HAND_ENDS)
    if ended is not None and ended.seq > started.seq and ended.hand_id == started.hand_id:
        return None, None
    return started.hand_id, started.seq

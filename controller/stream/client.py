"""A subscriber to one table's event stream that sees every event exactly once, in seq order.

The Clone pattern of the ZeroMQ Guide, chapter 5:

1. subscribe to the table's topics first, so live events start queueing;
2. ask the ROUTER for a snapshot (state as of seq S); events read meanwhile are kept;
3. drop live events with seq <= S, apply the rest;
4. a live event with seq > last + 1, or a heartbeat announcing a seq above the last one seen,
   means events were missed (a dropped message, the slow-joiner window): fetch them by replay
   from the journal before going on.

:meth:`StreamClient.sync` does 1-3 (and, with ``replay_from``, also queues the journaled
events after that seq up to S, for a client that wants history, not only state);
:meth:`StreamClient.receive` does 4. Used by the watch tool and the tests.

``family`` picks the topic family the endpoints serve (:data:`controller.stream.wire.FAMILIES`). On
the table and CMS families (:data:`controller.stream.wire.WITHHOLDING`) the journal seq still
orders everything, but a record of the hand in play that
holds a card is *withheld*: the live stream skips its seq, a replay covers it without sending
it (``replay_end.last`` passes it), and the record arrives after its hand's ``hand_settled``
or ``hand_voided``. The client remembers every withheld seq (:attr:`StreamClient.withheld`)
and accepts that seq once when it comes; a heartbeat between hands that finds some still
missing (the release was dropped) asks for them by replay, so none is silently skipped.

A quarantined journal's successor goes on with the table's numbering from the archived
journal's last seq + 1, opening with ``journal_continued`` (which names that seq). The seqs
before it are the archived journal's: a replay that asks for them gets the records the table
can vouch for from the archived journal (after a ``replay_archived``, noted in
:attr:`StreamClient.archived`) and is told which seqs are gone and why (``replay_gap``, kept
in :attr:`StreamClient.lost`): none is skipped silently. A table of an older release answers
with ``journal_continued`` alone; the client takes it as the next event only when it names
the last seq before it (:func:`continues_after`) and notes the seqs between as lost;
anything else out of order is refused as ever.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterator
from typing import Any, NamedTuple, NoReturn

import zmq

from controller.errors import LowballError
from controller.stream import wire
from controller.stream.frames import FrameReader, TooManyFrames

DEFAULT_TIMEOUT_S = 5.0
#: Heartbeat states with no hand in play: every withheld CMS record should have arrived.
BETWEEN_HANDS = frozenset({"OPEN", "SETTLED", "CLOSED"})


#: The largest message this client takes (a record or a snapshot is a few kilobytes): a peer
#: sending more is disconnected by ZeroMQ before the message is held in memory.
MAX_MESSAGE_BYTES = 1024 * 1024


class StreamError(LowballError, RuntimeError):
    """The table refused a request, or its replies did not add up; the message says which."""


class StreamMalformed(StreamError):
    """The table answered with a message that is not one (no table journals such a record):
    asking again gets the same answer, so a caller waits before it does."""


class StreamTimeout(StreamError):
    """The table did not answer ``request`` in time."""

    def __init__(self, message: str, request: dict[str, Any]) -> None:
        super().__init__(message)
        self.request = request


class Lost(NamedTuple):
    """Seqs ``first`` to ``last`` that the table does not serve, and never will (an archived
    journal's records past its first bad record, an archive that cannot be read): ``reason``
    says why and where they are kept. Told, never skipped silently."""
    first: int
    last: int
    reason: str


#: The most ranges :attr:`StreamClient.archived` and :attr:`StreamClient.lost` keep for a
#: reader that does not take them (the oldest go first; a run across batches is one range).
MAX_NOTED = 1024
#: The reason given for the seqs an older table (before it served archived journals) skips.
NOT_SERVED = ("the table serves no record of the journal its quarantine archived (a release "
              "before archived replay): they are in the archived journal it names")


class _Gap(NamedTuple):
    """Events still to be fetched by replay, in their place in the ready queue: those after
    ``after`` through ``through`` (the gap began after ``start``), missed on the way or asked
    for as history by :meth:`StreamClient.sync`. :meth:`receive` fetches them a batch at a
    time as it reaches them, so a client that fell far behind never holds the whole gap, and
    each batch has its own deadline. ``counted``: the gap is in :attr:`StreamClient.filled`
    already, or is history, which nobody missed."""
    start: int
    after: int
    through: int
    counted: bool = False


def continues_after(reply: Any, last: int) -> bool:
    """Whether ``reply`` is the ``journal_continued`` a quarantined table's new journal opens
    with, following a seq at or after ``last``: the seqs between are the archived journal's."""
    if not isinstance(reply, wire.EnvelopeBase) or reply.type != "journal_continued":
        return False
    archived_seq = getattr(reply.data, "archived_seq", None)
    return archived_seq == reply.seq - 1 and archived_seq >= last


def _within(seq: int, ceiling: int, after: int) -> None:
    if seq > ceiling:
        raise StreamMalformed(f"replay after {after}: the table's answer names seq {seq}, past "
                              f"{ceiling}, the most one request covers")


class StreamClient:
    """SUB + DEALER client of one table's :class:`controller.stream.publisher.EventPublisher`.

    Not thread-safe (ZeroMQ sockets are not): use it from one thread."""

    def __init__(self, context: zmq.SyncContext, *, table_id: str, pub_endpoint: str,
                 replay_endpoint: str, family: str = wire.SURVEILLANCE,
                 curve: dict[str, bytes] | None = None):
        self.table_id = table_id
        self.family = family
        self._context = context
        self._replay_endpoint = replay_endpoint
        #: CURVE client keys (``server_public_key``, ``public_key``, ``secret_key``) or None
        self._curve = curve
        self._sub = context.socket(zmq.SUB)
        self._sub.setsockopt(zmq.LINGER, 0)
        self._sub.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
        self._secure(self._sub)
        self._sub.setsockopt(zmq.SUBSCRIBE, wire.topic(table_id, family=family))
        self._sub.connect(pub_endpoint)
        #: an event is [topic, message]: a message of more frames is read to its end, dropped
        self._reader = FrameReader(self._sub, 2)
        #: table and CMS families: seqs the table withheld (a card of the hand in play), not
        #: yet received
        self.withheld: set[int] = set()
        self._dealer = self._connect_dealer()
        #: The seq of the last event queued for :meth:`receive` (or of the snapshot); None
        #: until :meth:`sync`. Every seq after the snapshot's, up to it, is queued once.
        self.last_seq: int | None = None
        self.last_heartbeat: wire.Heartbeat | None = None
        #: Messages read from the SUB socket, not yet checked against :attr:`last_seq`.
        self._live: deque[wire.EnvelopeBase | wire.Heartbeat] = deque()
        #: Events ready for :meth:`receive`, in seq order; a gap not yet replayed stands in
        #: its place.
        self._ready: deque[wire.EnvelopeBase | _Gap] = deque()
        #: Messages that did not parse, gaps filled by replay, heartbeats heard (monitoring).
        self.malformed = 0
        self.gaps_filled = 0
        #: (first, last) seq ranges filled from the replay socket, oldest first, for a
        #: reader that shows where the stream had a gap (``watch`` pops them as it goes)
        self.filled: deque[tuple[int, int]] = deque()
        #: (first, last, archived) seq ranges received from a journal a quarantine set aside
        #: (``replay_archived``), oldest first: read-only, verified up to its break
        self.archived: deque[tuple[int, int, str]] = deque(maxlen=MAX_NOTED)
        #: seq ranges the table does not serve, and why (``replay_gap``), oldest first: a
        #: reader reports them (``watch`` pops them as it goes)
        self.lost: deque[Lost] = deque(maxlen=MAX_NOTED)
        self.heartbeats = 0

    def _secure(self, socket: zmq.SyncSocket) -> None:
        if self._curve is not None:
            from controller.stream.security import client
            client(socket, **self._curve)

    def _connect_dealer(self) -> zmq.SyncSocket:
        dealer = self._context.socket(zmq.DEALER)
        dealer.setsockopt(zmq.LINGER, 0)
        dealer.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
        self._secure(dealer)
        dealer.connect(self._replay_endpoint)
        return dealer

    def wait(self, timeout_ms: int, *others: zmq.SyncSocket) -> set[zmq.SyncSocket]:
        """Sleep until an event arrives or one of ``others`` (a caller's own sockets) can be
        read, at most ``timeout_ms``: which of ``others`` can. Then :meth:`receive` with 0
        takes what arrived."""
        poller = zmq.Poller()
        poller.register(self._sub, zmq.POLLIN)
        for socket in others:
            poller.register(socket, zmq.POLLIN)
        return {socket for socket, _ in poller.poll(timeout_ms) if socket is not self._sub}

    # --- requests ------------------------------------------------------------------------------

    def _request(self, request: dict[str, Any], deadline: float) -> Iterator[Any]:
        """Send one request and yield its decoded replies, reading live events into the
        buffer meanwhile (Clone step 2) so none is lost while we wait."""
        self._send_request(request, deadline)
        while self._await_dealer(zmq.POLLIN, deadline):
            try:
                reply = wire.decode_reply(self._dealer.recv())
            except wire.WireError as error:
                # The table's own journal cannot hold such a record: a table that sends one
                # is not followed past it (the caller resumes, and meets it again).
                raise StreamMalformed(f"table {self.table_id} answered {request} with a message "
                                  f"that is not one: {error}") from None
            if isinstance(reply, wire.ErrorReply):
                raise StreamError(f"table {self.table_id} refused {request}: {reply.reason}")
            yield reply
        self._give_up(request)

    def _send_request(self, request: dict[str, Any], deadline: float) -> None:
        """Send ``request`` once the DEALER can. A DEALER with no peer (a key the table
        refused) cannot send at all and would block for ever in ``send``."""
        while self._await_dealer(zmq.POLLOUT, deadline):
            try:
                self._dealer.send(wire.canonical_json(request), zmq.NOBLOCK)
                return
            except zmq.Again:
                continue
        self._give_up(request, " (the replay socket took no request)")

    def _await_dealer(self, flag: int, deadline: float) -> bool:
        """Wait until the DEALER is ready for ``flag`` (POLLIN or POLLOUT), reading live events
        into the buffer meanwhile; False once the deadline has passed."""
        poller = zmq.Poller()
        poller.register(self._dealer, flag)
        poller.register(self._sub, zmq.POLLIN)
        while True:
            remaining_ms = max(0, int((deadline - time.monotonic()) * 1000))
            ready = dict(poller.poll(remaining_ms))
            if self._sub in ready:
                self._pull_live(0)
            if self._dealer in ready:
                return True
            if time.monotonic() >= deadline:
                return False

    def _give_up(self, request: dict[str, Any], why: str = "") -> NoReturn:
        # Late replies to this request must not be read as replies to the next one.
        self._dealer.close(linger=0)
        self._dealer = self._connect_dealer()
        raise StreamTimeout(f"table {self.table_id}: no answer to {request} in time{why}",
                            request)

    def snapshot(self, timeout: float = DEFAULT_TIMEOUT_S) -> wire.SnapshotReply:
        """The table's state and the seq it reflects."""
        reply = next(self._request({"request": "snapshot"}, time.monotonic() + timeout))
        if not isinstance(reply, wire.SnapshotReply):
            raise StreamError(f"expected a snapshot, got {reply!r}")
        return reply

    def replay(self, after: int, *, until: int | None = None,
               timeout: float = DEFAULT_TIMEOUT_S) -> list[wire.EnvelopeBase]:
        """Journaled events with seq > ``after`` (through ``until``, else to the journal's end),
        asking batch after batch until the table has no more."""
        deadline = time.monotonic() + timeout
        events: list[wire.EnvelopeBase] = []
        last = after
        while until is None or last < until:
            batch_start = last
            request: dict[str, Any] = {"request": "replay", "after": last}
            if until is not None:
                request["limit"] = until - last
            # One request covers at most MAX_REPLAY_BATCH seqs (fewer with a limit): a reply
            # naming a seq past them is not the table's journal (on the CMS family it would
            # have this client hold every seq between as withheld).
            ceiling = batch_start + min(request.get("limit", wire.MAX_REPLAY_BATCH),
                                        wire.MAX_REPLAY_BATCH)
            for reply in self._request(request, deadline):
                if isinstance(reply, wire.ReplayEnd):
                    _within(reply.last, ceiling, batch_start)
                    if self.family in wire.WITHHOLDING and reply.last > last:
                        # covered but not sent: withheld until the hand is over
                        self.withheld.update(range(last + 1, reply.last + 1))
                        last = reply.last
                    break
                if isinstance(reply, wire.ReplayGap | wire.ReplayArchived):
                    follows = reply.first > last if self.family in wire.WITHHOLDING else \
                        reply.first == last + 1
                    if not follows or reply.last < reply.first:
                        raise StreamError(f"replay after {batch_start}: expected seq "
                                          f"{last + 1}, got {reply!r}")
                    _within(reply.last, ceiling, batch_start)
                    if isinstance(reply, wire.ReplayArchived):
                        self._note_archived(reply.first, reply.last, reply.archived)
                        continue
                    if self.family in wire.WITHHOLDING:
                        self.withheld.update(range(last + 1, reply.first))
                    self._note_lost(Lost(reply.first, reply.last, reply.reason))
                    last = reply.last
                    continue
                if reply.seq > last + 1 and continues_after(reply, last):
                    # An older table: it answers a request before its journal's first record
                    # with that record alone, and serves none of the archived journal's seqs.
                    self._note_lost(Lost(last + 1, reply.seq - 1, NOT_SERVED))
                    events.append(reply)
                    last = ceiling = reply.seq
                    continue
                expected = reply.seq > last if self.family in wire.WITHHOLDING else \
                    reply.seq == last + 1
                if not isinstance(reply, wire.EnvelopeBase) or not expected:
                    raise StreamError(f"replay after {batch_start}: expected seq {last + 1}, "
                                      f"got {reply!r}")
                _within(reply.seq, ceiling, batch_start)
                if self.family in wire.WITHHOLDING:
                    self.withheld.update(range(last + 1, reply.seq))
                events.append(reply)
                last = reply.seq
            if last == batch_start:  # the journal has nothing more
                if until is not None:
                    raise StreamError(f"replay after {after}: the journal ends at seq {last}, "
                                      f"before {until}")
                break
        return events

    def _note_archived(self, first: int, last: int, archived: str) -> None:
        if self.archived and self.archived[-1][1] + 1 == first \
                and self.archived[-1][2] == archived:
            first = self.archived.pop()[0]
        self.archived.append((first, last, archived))

    def _note_lost(self, lost: Lost) -> None:
        """Keep ``lost``, one range with the one before when it goes on from it (a long gap
        is told in batches)."""
        if self.lost and self.lost[-1].last + 1 == lost.first \
                and self.lost[-1].reason == lost.reason:
            lost = lost._replace(first=self.lost.pop().first)
        self.lost.append(lost)

    # --- the stream ----------------------------------------------------------------------------

    def sync(self, *, replay_from: int | None = None,
             timeout: float = DEFAULT_TIMEOUT_S) -> wire.SnapshotReply:
        """Clone steps 1-3: take a snapshot and keep only live events after it. With
        ``replay_from``, the journaled events after that seq up to the snapshot come first."""
        snapshot = self.snapshot(timeout)
        if replay_from is not None and replay_from < snapshot.seq:
            self._ready.append(_Gap(replay_from, replay_from, snapshot.seq, counted=True))
        self.last_seq = snapshot.seq
        self._process(timeout)
        return snapshot

    def receive(self, timeout: float = DEFAULT_TIMEOUT_S, *,
                replay_timeout: float | None = None) -> wire.EnvelopeBase | None:
        """The next event in seq order, filling any gap by replay; None if none came within
        ``timeout`` seconds. A replay batch may take ``replay_timeout`` seconds (default:
        ``timeout``), so that ``receive(0, replay_timeout=...)`` polls without waiting for
        live events yet still fills a gap. Heartbeats are not returned: the last is
        :attr:`last_heartbeat`. Call :meth:`sync` first."""
        if self.last_seq is None:
            raise StreamError("call sync() before receive(): events are applied after a "
                              "snapshot")
        deadline = time.monotonic() + timeout
        replay_timeout = timeout if replay_timeout is None else replay_timeout
        while True:
            self._process(replay_timeout)
            if self._ready:
                head = self._ready[0]
                if not isinstance(head, _Gap):
                    self._ready.popleft()
                    return head
                self._fetch(replay_timeout)
                continue
            remaining_ms = int((deadline - time.monotonic()) * 1000)
            if remaining_ms <= 0 and not self._sub.poll(0, zmq.POLLIN):
                return None
            self._pull_live(max(0, remaining_ms))

    def delivered_through(self) -> int | None:
        """The highest seq S such that every seq up to S has been returned by
        :meth:`receive` or was not sent at all (withheld for good on the CMS family): where a
        client that stored what it received resumes (``sync(replay_from=S)``). None before
        :meth:`sync`."""
        if self.last_seq is None:
            return None
        pending = [item.after + 1 if isinstance(item, _Gap) else item.seq
                   for item in self._ready]
        pending.extend(self.withheld)
        return min(pending, default=self.last_seq + 1) - 1

    def await_heartbeat(self, timeout: float = DEFAULT_TIMEOUT_S) -> wire.Heartbeat | None:
        """Wait for the next heartbeat (events read meanwhile are kept for :meth:`receive`);
        None if the table sent none within ``timeout``: silence, not a quiet table."""
        deadline = time.monotonic() + timeout
        seen = self.heartbeats
        while self.heartbeats == seen:
            remaining_ms = int((deadline - time.monotonic()) * 1000)
            if remaining_ms <= 0 and not self._sub.poll(0, zmq.POLLIN):
                return None
            self._pull_live(max(0, remaining_ms))
        return self.last_heartbeat

    def _pull_live(self, wait_ms: int) -> None:
        """Move what the SUB socket has into the live buffer, waiting up to ``wait_ms`` for
        the first message."""
        wait = wait_ms
        while self._sub.poll(wait, zmq.POLLIN):
            wait = 0
            frames = self._reader.receive()
            if frames is None:  # a message too long is being dropped: the rest next call
                return
            try:
                if isinstance(frames, TooManyFrames):
                    raise wire.WireError([f"expected [topic, message], got {frames.frames} "
                                          "frames"])
                if len(frames) != 2:
                    raise wire.WireError([f"expected [topic, message], got {len(frames)} "
                                          "frames"])
                message = wire.decode(frames[1].bytes)
            except wire.WireError:
                self.malformed += 1
                continue
            if isinstance(message, wire.Heartbeat):
                self.last_heartbeat = message
                self.heartbeats += 1
            self._live.append(message)

    def _process(self, timeout: float) -> None:
        """Clone steps 3-4 over the live buffer: drop what the snapshot or earlier events
        covered, fill gaps by replay, queue the rest."""
        while self._live and self.last_seq is not None:
            message = self._live.popleft()
            if isinstance(message, wire.Heartbeat):
                # A held table's records from its break on are not the table's: not asked for.
                head = message.seq if message.journal_broken_at is None else \
                    min(message.seq, message.journal_broken_at - 1)
                if head > self.last_seq:
                    self._fill(head, timeout)
                if self.withheld and message.state in BETWEEN_HANDS:
                    self._release_missed(timeout)
                continue
            if message.seq <= self.last_seq:
                if message.seq in self.withheld:  # released after its hand
                    self.withheld.discard(message.seq)
                    self._ready.append(message)
                continue  # covered by the snapshot, a replay, or already queued
            if message.seq > self.last_seq + 1:
                self._fill(message.seq - 1, timeout)
            self._ready.append(message)
            self.last_seq = message.seq

    def _release_missed(self, timeout: float) -> None:
        """Table and CMS families, between hands: withheld records still missing were released and lost (or
        never will be: a card read with no hand in play). Ask once; forget what stays held."""
        first, last = min(self.withheld), max(self.withheld)
        wanted, self.withheld = self.withheld, set()
        released = [event for event in self.replay(first - 1, until=last, timeout=timeout)
                    if event.seq in wanted]
        self.withheld = set()
        self._ready.extend(released)
        if released:
            self.filled.append((released[0].seq, released[-1].seq))
            self.gaps_filled += 1

    def _fill(self, through: int, timeout: float) -> None:
        """Queue the events after :attr:`last_seq` through ``through`` for replay, in their
        place: :meth:`_fetch` asks for them when :meth:`receive` reaches them."""
        assert self.last_seq is not None
        self._ready.append(_Gap(self.last_seq, self.last_seq, through))
        self.last_seq = through

    def _fetch(self, timeout: float) -> None:
        """Replay one batch of the gap at the front of the queue in its place, the rest of
        the gap after it. Should the table not answer, the gap stays where it is, to be asked
        for again by the next :meth:`receive`."""
        gap = self._ready[0]
        assert isinstance(gap, _Gap)
        until = min(gap.through, gap.after + wire.MAX_REPLAY_BATCH)
        events = self.replay(gap.after, until=until, timeout=timeout)
        if events and events[-1].seq > until:
            # a quarantined table's new journal starts after ``until`` (continues_after): the
            # gap's seqs up to its first record were the archived journal's
            events = [event for event in events if event.seq <= gap.through]
            until = max(until, min(events[-1].seq if events else gap.through, gap.through))
        self._ready.popleft()
        # Counted once it gives an event: on the CMS family a gap may be only withheld
        # records, and then nothing was lost.
        counted = gap.counted or bool(events)
        if counted and not gap.counted:
            self.filled.append((gap.start + 1, gap.through))
            self.gaps_filled += 1
        if until < gap.through:
            self._ready.appendleft(gap._replace(after=until, counted=counted))
        self._ready.extendleft(reversed(events))

    def close(self) -> None:
        self._sub.close(linger=0)
        self._dealer.close(linger=0)

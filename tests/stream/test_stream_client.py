"""The Clone-pattern client against a table loop running in its own thread."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import zmq

from controller.stream import wire
from controller.stream.client import (
    MAX_MESSAGE_BYTES,
    StreamClient,
    StreamError,
    StreamMalformed,
)

from tests.support.stream import TABLE, sample_events
from tests.support.stream import TableLoop


@pytest.fixture
def connect(context: zmq.Context[Any],
            table_loop: TableLoop) -> Iterator[Callable[[], StreamClient]]:
    clients: list[StreamClient] = []

    def connect() -> StreamClient:
        client = StreamClient(context, table_id=TABLE, pub_endpoint=table_loop.pub_endpoint,
                              replay_endpoint=table_loop.replay_endpoint)
        clients.append(client)
        # Beat the ZeroMQ slow joiner: heartbeat until the client hears one.
        for _ in range(500):
            table_loop.call("heartbeat")
            if client.await_heartbeat(timeout=0.02) is not None:
                return client
        raise AssertionError("the client never heard a heartbeat")

    yield connect
    for client in clients:
        client.close()


@pytest.fixture
def client(connect: Callable[[], StreamClient]) -> StreamClient:
    return connect()


def received(client: StreamClient, count: int) -> list[wire.EnvelopeBase]:
    events: list[wire.EnvelopeBase] = []
    for _ in range(count):
        envelope = client.receive()
        assert envelope is not None, f"only {len(events)} of {count} events arrived"
        events.append(envelope)
    return events


def test_late_joiner_gets_snapshot_and_replay_and_sees_everything(
        connect: Callable[[], StreamClient], table_loop: TableLoop) -> None:
    table_loop.call("append", sample_events(25), True)  # before the client existed
    client = connect()
    snapshot = client.sync(replay_from=0)
    assert snapshot.seq == 25 and snapshot.state == {"journaled": 25}
    table_loop.call("append", sample_events(10), True)
    events = received(client, 35)
    assert [e.seq for e in events] == list(range(1, 36))
    assert [wire.to_event(e) for e in events] == sample_events(25) + sample_events(10)
    assert client.receive(timeout=0) is None


def test_snapshot_only_join_drops_what_the_snapshot_covers(connect: Callable[[], StreamClient],
                                                           table_loop: TableLoop) -> None:
    table_loop.call("append", sample_events(5), True)
    client = connect()
    assert client.sync().seq == 5
    table_loop.call("append", sample_events(3), True)
    assert [e.seq for e in received(client, 3)] == [6, 7, 8]


def test_a_missed_event_is_filled_by_replay(client: StreamClient, table_loop: TableLoop) -> None:
    client.sync()
    table_loop.call("append", sample_events(2), True)
    table_loop.call("append", sample_events(3)[2:], False)  # seq 3 lost on the way
    table_loop.call("append", sample_events(2), True)       # seq 4, 5 arrive
    assert [e.seq for e in received(client, 5)] == [1, 2, 3, 4, 5]
    assert client.gaps_filled == 1


def record_replays(client: StreamClient) -> list[tuple[int, int | None]]:
    """From now on, each replay ``client`` asks for, as (after, until), in the list returned."""
    asked: list[tuple[int, int | None]] = []
    replay = client.replay

    def recording_replay(after: int, **kwargs: Any) -> list[wire.EnvelopeBase]:
        asked.append((after, kwargs.get("until")))
        return replay(after, **kwargs)

    setattr(client, "replay", recording_replay)     # the client asks through the recorder
    return asked


def test_a_long_gap_is_filled_a_batch_at_a_time_as_it_is_read(client: StreamClient,
                                                              table_loop: TableLoop) -> None:
    """A subscriber that fell far behind (it stopped reading for a while and ZeroMQ dropped
    what it could not queue) catches up one replay batch at a time, as it reads: it never
    holds more of the gap than one batch, and each batch has a deadline of its own, so a gap
    of any length can be caught up. Live events heard meanwhile come after the gap."""
    client.sync()
    lost = 2 * wire.MAX_REPLAY_BATCH + 500
    table_loop.call("append", sample_events(lost), False)    # all lost on the way
    table_loop.call("append", sample_events(3), True)         # then the stream is heard again
    asked = record_replays(client)
    first = client.receive()
    assert first is not None
    assert first.seq == 1 and asked == [(0, wire.MAX_REPLAY_BATCH)]   # one batch so far
    seqs = [first.seq] + [e.seq for e in received(client, lost + 2)]
    assert seqs == list(range(1, lost + 4))
    assert asked == [(0, wire.MAX_REPLAY_BATCH), (wire.MAX_REPLAY_BATCH, 2 * wire.MAX_REPLAY_BATCH),
                     (2 * wire.MAX_REPLAY_BATCH, lost)]
    assert client.gaps_filled == 1 and list(client.filled) == [(1, lost)]
    assert client.receive(timeout=0) is None


def test_history_asked_for_by_sync_comes_a_batch_at_a_time_and_is_no_gap(connect: Callable[[], StreamClient],
                                                                         table_loop: TableLoop) -> None:
    """A consumer resuming after a long time away (``sync(replay_from=...)``) takes the
    history the same way: a batch at a time as it reads, each with its own deadline; nothing
    was missed, so no gap is counted."""
    history = wire.MAX_REPLAY_BATCH + 200
    table_loop.call("append", sample_events(history), True)     # before the client existed
    client = connect()
    asked = record_replays(client)
    assert client.sync(replay_from=0).seq == history and asked == []
    assert [e.seq for e in received(client, history)] == list(range(1, history + 1))
    assert asked == [(0, wire.MAX_REPLAY_BATCH), (wire.MAX_REPLAY_BATCH, history)]
    assert client.gaps_filled == 0 and not client.filled


def test_a_poll_with_no_wait_still_has_its_gaps_filled(connect: Callable[[], StreamClient],
                                                       table_loop: TableLoop) -> None:
    """A caller with its own poller (the console) reads with ``timeout=0``: no wait for
    live events, but each replay a gap needs still has ``replay_timeout`` to be answered."""
    table_loop.call("append", sample_events(5), True)
    client = connect()
    client.sync(replay_from=0)
    events = []
    while (envelope := client.receive(0, replay_timeout=5.0)) is not None:
        events.append(envelope)
    assert [e.seq for e in events] == [1, 2, 3, 4, 5]


def test_a_replay_that_fails_loses_nothing_and_is_asked_again(client: StreamClient,
                                                              table_loop: TableLoop) -> None:
    """The table did not answer a replay in time: receive() says so, and the next receive()
    asks for the same events again; none of them is skipped."""
    client.sync()
    table_loop.call("append", sample_events(5), False)     # lost on the way
    table_loop.call("append", sample_events(1), True)      # seq 6 reveals the gap
    replay = client.replay
    failures = [StreamError("no answer in time (a test's)")]

    def failing_once(after: int, **kwargs: Any) -> list[wire.EnvelopeBase]:
        if failures:
            raise failures.pop()
        return replay(after, **kwargs)

    setattr(client, "replay", failing_once)         # the client asks through it
    with pytest.raises(StreamError, match="a test's"):
        client.receive()
    assert [e.seq for e in received(client, 6)] == [1, 2, 3, 4, 5, 6]
    assert client.gaps_filled == 1


def test_a_heartbeat_reveals_missed_events_at_the_end(client: StreamClient,
                                                      table_loop: TableLoop) -> None:
    client.sync()
    table_loop.call("append", sample_events(2), False)  # lost, and the table goes quiet
    table_loop.call("heartbeat")
    assert [e.seq for e in received(client, 2)] == [1, 2]
    assert client.last_heartbeat is not None and client.last_heartbeat.seq == 2


def test_a_gap_is_not_filled_past_the_break_a_heartbeat_names(client: StreamClient,
                                                                table_loop: TableLoop) -> None:
    client.sync()
    table_loop.call("append", sample_events(4), False)  # lost; seq 3 on are not the table's
    table_loop.call("heartbeat", 3)      # (served all the same: no ceiling in this publisher)
    assert [e.seq for e in received(client, 2)] == [1, 2]
    assert client.receive(timeout=0) is None and client.delivered_through() == 2


def test_events_published_during_sync_are_kept_once(client: StreamClient,
                                                    table_loop: TableLoop) -> None:
    table_loop.call("append", sample_events(4), True)  # heard live, covered by the snapshot
    snapshot = client.sync()
    assert snapshot.seq == 4
    table_loop.call("append", sample_events(2), True)
    assert [e.seq for e in received(client, 2)] == [snapshot.seq + 1, snapshot.seq + 2]
    assert client.receive(timeout=0) is None


def test_receive_before_sync_is_refused(client: StreamClient) -> None:
    with pytest.raises(StreamError, match="sync"):
        client.receive(timeout=0)


def test_await_heartbeat_returns_the_next_one(client: StreamClient, table_loop: TableLoop) -> None:
    table_loop.call("append", sample_events(3), True)
    table_loop.call("heartbeat")
    while (beat := client.await_heartbeat()) is None or beat.seq != 3:  # earlier probes too
        assert beat is not None and beat.seq == 0
    assert beat.state == "OPEN" and client.heartbeats >= 2


def test_replay_walks_past_one_batch(client: StreamClient, table_loop: TableLoop) -> None:
    table_loop.call("append", sample_events(wire.MAX_REPLAY_BATCH + 10), True)
    events = client.replay(0)
    assert [e.seq for e in events] == list(range(1, wire.MAX_REPLAY_BATCH + 11))
    assert client.replay(wire.MAX_REPLAY_BATCH + 5, until=wire.MAX_REPLAY_BATCH + 7)[-1].seq == (
        wire.MAX_REPLAY_BATCH + 7)


def test_replay_past_the_journal_end_is_an_error(client: StreamClient,
                                                 table_loop: TableLoop) -> None:
    table_loop.call("append", sample_events(3), True)
    with pytest.raises(StreamError, match="the journal ends at seq 3, before 9"):
        client.replay(0, until=9)


def test_no_table_means_a_clear_timeout(context: zmq.Context[Any]) -> None:
    router = context.socket(zmq.ROUTER)  # bound, but nobody answers
    pub = context.socket(zmq.PUB)
    port = router.bind_to_random_port("tcp://127.0.0.1")
    pub_port = pub.bind_to_random_port("tcp://127.0.0.1")
    client = StreamClient(context, table_id=TABLE, pub_endpoint=f"tcp://127.0.0.1:{pub_port}",
                          replay_endpoint=f"tcp://127.0.0.1:{port}")
    try:
        with pytest.raises(StreamError, match="no answer"):
            client.snapshot(timeout=0.2)
        assert client.await_heartbeat(timeout=0.05) is None  # silence: no table there
    finally:
        client.close()
        router.close(linger=0)
        pub.close(linger=0)


def test_a_refused_key_is_a_timeout_not_a_hang(context: zmq.Context[Any], tmp_path: Path) -> None:
    """A table whose authenticator refuses the client's key leaves its DEALER with no peer,
    and such a socket cannot send at all: the request must give up at its deadline instead
    of blocking in send for ever."""
    from zmq.auth.thread import ThreadAuthenticator

    server_public, server_secret = zmq.curve_keypair()
    authenticator = ThreadAuthenticator(context)
    authenticator.start()
    authenticator.configure_curve(domain="*", location=str(tmp_path))  # no key is listed
    router = context.socket(zmq.ROUTER)
    router.curve_server, router.curve_secretkey = True, server_secret
    router.bind(f"ipc://{tmp_path}/replay")
    client_public, client_secret = zmq.curve_keypair()
    client = StreamClient(context, table_id=TABLE, pub_endpoint=f"ipc://{tmp_path}/events",
                          replay_endpoint=f"ipc://{tmp_path}/replay",
                          curve={"server_public_key": server_public,
                                 "public_key": client_public, "secret_key": client_secret})
    try:
        deadline = time.monotonic() + 10
        while client._dealer.poll(0, zmq.POLLOUT):   # until the refusal leaves it no peer
            assert time.monotonic() < deadline, "the refused DEALER stayed writable"
            time.sleep(0.01)
        with pytest.raises(StreamError, match="took no request"):
            client.snapshot(timeout=0.3)
    finally:
        client.close()
        router.close(linger=0)
        authenticator.stop()


def test_receive_without_waiting_still_fills_a_gap(client: StreamClient,
                                                   table_loop: TableLoop) -> None:
    """``receive(0, replay_timeout=...)`` polls: it returns at once when nothing is there, and
    a gap it reaches gets the replay's own deadline (a deadline of 0 could never be met)."""
    client.sync()
    assert client.receive(0, replay_timeout=5) is None
    table_loop.call("append", sample_events(3), False)       # lost on the way
    table_loop.call("append", sample_events(1), True)
    seqs: list[int] = []
    deadline = time.monotonic() + 10
    while len(seqs) < 4 and time.monotonic() < deadline:
        envelope = client.receive(0, replay_timeout=5)
        if envelope is not None:
            seqs.append(envelope.seq)
    assert seqs == [1, 2, 3, 4]


def test_delivered_through_is_where_a_store_of_what_was_received_resumes(
        connect: Callable[[], StreamClient], table_loop: TableLoop) -> None:
    """Every seq up to delivered_through() was returned by receive(); history or a gap not
    yet read holds it back."""
    table_loop.call("append", sample_events(5), True)
    client = connect()
    assert client.delivered_through() is None
    client.sync(replay_from=2)
    assert client.delivered_through() == 2                  # seqs 3-5 queued, not received
    assert [e.seq for e in received(client, 2)] == [3, 4]
    assert client.delivered_through() == 4
    table_loop.call("append", sample_events(2), False)      # 6, 7 lost
    table_loop.call("append", sample_events(1), True)       # 8 heard
    fifth = client.receive()
    assert fifth is not None and fifth.seq == 5
    assert client.delivered_through() == 5                  # 8 heard or not: 6 and 7 are not
    assert [e.seq for e in received(client, 3)] == [6, 7, 8]
    assert client.delivered_through() == 8


def _lying_table(context: zmq.Context[Any], answer: bytes) -> tuple[str, Callable[[], None]]:
    """A ROUTER that answers every request with ``answer`` (bytes), from its own thread."""
    router: zmq.Socket[bytes] = context.socket(zmq.ROUTER)
    port = router.bind_to_random_port("tcp://127.0.0.1")
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            if router.poll(20):
                identity, _request = router.recv_multipart()
                router.send_multipart([identity, answer])
        router.close(linger=0)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()

    def close() -> None:
        stop.set()
        thread.join(5)
    return f"tcp://127.0.0.1:{port}", close


@pytest.mark.parametrize("answer", [
    b'{"type": "replay_end", "last": 9223372036854775807}',
    b'{"type": "replay_end", "last": 1001}',
], ids=["the journal's end", "one past the batch"])
def test_a_replay_answer_past_what_was_asked_is_refused_and_holds_nothing(context: zmq.Context[Any],
                                                                          answer: bytes) -> None:
    """On the CMS family a replay_end past the records sent means "withheld": a table naming a
    seq past what one request covers would have the client hold every seq between (2**63 of
    them: the floor service's memory). The answer is refused as not the table's journal."""
    endpoint, close = _lying_table(context, answer)
    client = StreamClient(context, table_id=TABLE, pub_endpoint="tcp://127.0.0.1:9",
                          replay_endpoint=endpoint, family=wire.CMS)
    try:
        with pytest.raises(StreamMalformed, match="past 1000, the most one request covers"):
            client.replay(0, timeout=5)
        assert client.withheld == set()
    finally:
        client.close()
        close()


def test_a_reply_that_is_not_a_message_is_a_stream_error_not_a_crash(
        context: zmq.Context[Any]) -> None:
    """A reply no table could journal (here an integer past what the wire carries) is the
    stream's error, which a follower handles (the floor resumes later), not a WireError from
    deep in the client that would end the follower's thread."""
    record = (b'{"data": {"amount": 100000000000000000000, "player": "P", "source": "dealer", '
              b'"spot": 1, "wager": "ante"}, "hand_id": null, "schema_version": 2, "seq": 1, '
              b'"table_id": "' + TABLE.encode() + b'", "ts": "2026-11-25T06:00:00.000000Z", '
              b'"type": "wager_placed"}')
    endpoint, close = _lying_table(context, record)
    client = StreamClient(context, table_id=TABLE, pub_endpoint="tcp://127.0.0.1:9",
                          replay_endpoint=endpoint, family=wire.CMS)
    try:
        with pytest.raises(StreamMalformed, match="data.amount: Input should be less than"):
            client.replay(0, until=1, timeout=5)
    finally:
        client.close()
        close()


def test_a_message_past_the_size_cap_is_never_taken(context: zmq.Context[Any]) -> None:
    """A publisher sending megabytes is disconnected by ZeroMQ before the message is held: the
    client never reads it, not even as a malformed message. (ZeroMQ counts it a protocol error
    and does not reconnect to that publisher: the reader's own recovery, a new client, is
    what follows such a table again; the floor's feed does that.)"""
    pub = context.socket(zmq.PUB)
    port = pub.bind_to_random_port("tcp://127.0.0.1")
    client = StreamClient(context, table_id=TABLE, pub_endpoint=f"tcp://127.0.0.1:{port}",
                          replay_endpoint="tcp://127.0.0.1:9")
    topic = wire.topic(TABLE)
    beat = wire.encode_heartbeat(table_id=TABLE, seq=0, hash="0" * 64, broken_at=None,
                                 ts=datetime.now(UTC), state="OPEN")
    try:
        deadline = time.monotonic() + 10
        while client.await_heartbeat(timeout=0.02) is None:   # connected
            assert time.monotonic() < deadline, "the client never heard a heartbeat"
            pub.send_multipart([topic, beat])
        pub.send_multipart([topic, b"x" * (MAX_MESSAGE_BYTES + 1)])
        pub.send_multipart([topic, beat])                      # after it, on the same link
        client.await_heartbeat(timeout=1)
        assert client.malformed == 0      # without the cap: 1, the megabyte read and refused
    finally:
        client.close()
        pub.close(linger=0)

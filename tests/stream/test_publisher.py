"""The publisher over real ZeroMQ sockets (tcp on 127.0.0.1, random ports), in one thread:
the test calls ``handle_replay`` itself once the ROUTER is readable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import zmq

from controller.errors import StartupError
from controller.stream import wire
from controller.stream.journal import Journal
from controller.stream.publisher import EventPublisher

from tests.support.stream import HAND, TABLE, await_subscription, sample_events, next_message


def subscriber(context: zmq.Context[Any], publisher: EventPublisher,
               **options: int) -> zmq.Socket[bytes]:
    sub: zmq.Socket[bytes] = context.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    for option, value in options.items():
        sub.setsockopt(getattr(zmq, option), value)
    sub.setsockopt(zmq.SUBSCRIBE, wire.topic(TABLE))
    sub.connect(publisher.pub_endpoint)
    await_subscription(publisher, sub)
    return sub


def dealer(context: zmq.Context[Any], publisher: EventPublisher) -> zmq.Socket[bytes]:
    socket: zmq.Socket[bytes] = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.LINGER, 0)
    socket.connect(publisher.replay_endpoint)
    return socket


def ask(publisher: EventPublisher, client: zmq.Socket[bytes],
        *request_frames: bytes) -> list[bytes]:
    """Send a request, serve it, and collect the replies up to the last one."""
    client.send_multipart(list(request_frames))
    router = publisher.sockets[0]
    assert router.poll(10_000, zmq.POLLIN), "the request never reached the ROUTER"
    assert publisher.handle_replay() == 1
    replies = []
    while True:
        frames = next_message(client)
        replies.append(frames[-1])
        if json.loads(frames[-1])["type"] in ("snapshot", "replay_end", "error"):
            return replies


def journal_and_publish(journal: Journal, publisher: EventPublisher, count: int) -> list[Any]:
    records = []
    for event in sample_events(count):
        record = journal.append(event, table_id=TABLE, hand_id=HAND)
        publisher.publish(record)
        records.append(record)
    return records


def test_subscriber_receives_events_in_order(context: zmq.Context[Any], journal: Journal,
                                             publisher: EventPublisher) -> None:
    sub = subscriber(context, publisher)
    records = journal_and_publish(journal, publisher, 30)
    received = [next_message(sub) for _ in records]
    assert [frames for frames in received] == [
        [wire.topic_of(wire.decode(r.message)), r.message] for r in records]
    assert [wire.decode(frames[1]).seq for frames in received] == list(range(1, 31))
    assert publisher.published == 30 and publisher.dropped == 0


def test_topic_prefix_filters_by_type(context: zmq.Context[Any], journal: Journal,
                                      publisher: EventPublisher) -> None:
    sub = context.socket(zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, wire.topic(TABLE, "card_dealt"))
    sub.setsockopt(zmq.SUBSCRIBE, wire.topic(TABLE, "heartbeat"))
    sub.connect(publisher.pub_endpoint)
    await_subscription(publisher, sub)
    journal_and_publish(journal, publisher, 7)
    publisher.heartbeat("DEALING")  # marks the end of what was published
    seen = []
    while (frames := next_message(sub))[0] != b"surveillance.CALI-01.heartbeat":
        seen.append(wire.decode(frames[1]).type)
    assert seen == ["card_dealt", "card_dealt"]


def test_heartbeat_carries_the_last_seq(context: zmq.Context[Any], journal: Journal,
                                        publisher: EventPublisher) -> None:
    sub = subscriber(context, publisher)
    publisher.heartbeat("OPEN")
    topic, message = next_message(sub)
    beat = wire.decode(message)
    assert topic == b"surveillance.CALI-01.heartbeat" and isinstance(beat, wire.Heartbeat)
    assert (beat.seq, beat.state, beat.table_id) == (0, "OPEN", TABLE)
    journal_and_publish(journal, publisher, 4)
    for _ in range(4):
        next_message(sub)
    publisher.heartbeat("DECIDING")
    assert wire.decode(next_message(sub)[1]).seq == 4


def test_a_restarted_publisher_heartbeats_the_journal_seq(
        context: zmq.Context[Any], journal: Journal, publisher: EventPublisher) -> None:
    journal_and_publish(journal, publisher, 3)
    again = EventPublisher(context, table_id=TABLE, pub_endpoint="tcp://127.0.0.1:*",
                           replay_endpoint="tcp://127.0.0.1:*", journal=journal,
                           snapshot=dict)
    try:
        sub = subscriber(context, again)
        again.heartbeat("OPEN")
        assert wire.decode(next_message(sub)[1]).seq == 3
    finally:
        again.close()


def test_a_subscriber_that_never_reads_does_not_block_publish(context: zmq.Context[Any],
                                                              journal: Journal) -> None:
    publisher = EventPublisher(context, table_id=TABLE, pub_endpoint="tcp://127.0.0.1:*",
                               replay_endpoint="tcp://127.0.0.1:*", journal=journal,
                               snapshot=dict, sndhwm=1)
    try:
        stuck = subscriber(context, publisher, RCVHWM=1)  # connected, subscribed, never read
        record = journal.append(sample_events(3)[2], table_id=TABLE, hand_id=HAND)
        sent = [publisher.publish(record) for _ in range(100_000)]
        assert len(sent) == 100_000
        assert publisher.published + publisher.dropped == 100_000
        # The table is still responsive: a replay request is answered at once.
        replies = ask(publisher, dealer(context, publisher),
                      b'{"request":"replay","after":0}')
        assert replies == [record.message, wire.replay_end(1)]
        assert stuck.poll(10_000, zmq.POLLIN)  # it still gets what fits in its queue
    finally:
        publisher.close()


def test_snapshot_reply_carries_the_journal_seq(context: zmq.Context[Any], journal: Journal,
                                                publisher: EventPublisher) -> None:
    journal_and_publish(journal, publisher, 5)
    replies = ask(publisher, dealer(context, publisher), b'{"request":"snapshot"}')
    assert replies == [b'{"seq":5,"state":{"meter":123456,"state":"OPEN"},"type":"snapshot"}']


def test_replay_sends_journal_messages_then_replay_end(context: zmq.Context[Any], journal: Journal,
                                                       publisher: EventPublisher) -> None:
    records = journal_and_publish(journal, publisher, 12)
    client = dealer(context, publisher)
    assert ask(publisher, client, b'{"request":"replay","after":9}') == [
        *(r.message for r in records[9:]), b'{"last":12,"type":"replay_end"}']
    assert ask(publisher, client, b'{"request":"replay","after":2,"limit":3}') == [
        *(r.message for r in records[2:5]), b'{"last":5,"type":"replay_end"}']
    assert ask(publisher, client, b'{"request":"replay","after":12}') == [
        b'{"last":12,"type":"replay_end"}']
    assert ask(publisher, client, b'{"request":"replay","after":99}') == [
        b'{"last":99,"type":"replay_end"}']


def test_replay_is_cut_to_one_batch(context: zmq.Context[Any], journal: Journal,
                                    publisher: EventPublisher) -> None:
    journal_and_publish(journal, publisher, wire.MAX_REPLAY_BATCH + 5)
    replies = ask(publisher, dealer(context, publisher),
                  b'{"request":"replay","after":0,"limit":100000}')
    assert len(replies) == wire.MAX_REPLAY_BATCH + 1
    assert json.loads(replies[-1]) == {"type": "replay_end", "last": wire.MAX_REPLAY_BATCH}


def test_a_req_socket_is_answered_on_its_route(context: zmq.Context[Any], journal: Journal,
                                               publisher: EventPublisher) -> None:
    req = context.socket(zmq.REQ)
    req.setsockopt(zmq.LINGER, 0)
    req.connect(publisher.replay_endpoint)
    req.send(b'{"request":"snapshot"}')
    assert publisher.sockets[0].poll(10_000, zmq.POLLIN)
    publisher.handle_replay()
    assert json.loads(next_message(req)[0])["type"] == "snapshot"


@pytest.mark.parametrize("frames, reason", [
    ([b"not json"], "bad request: not JSON"),
    ([b'{"request":"everything"}'], "bad request: request: unknown request 'everything'"),
    ([b'{"request":"replay","after":"ten"}'], "bad request: after: Input should be a valid"),
    ([b'{"request":"replay","after":0,"limit":-5}'], "bad request: limit:"),
    ([b"[]"], "bad request: message: must be a JSON object"),
    ([b"{}", b"{}"], "a request is one frame of JSON, not 2 frames"),
])
def test_malformed_requests_get_an_error(context: zmq.Context[Any], journal: Journal,
                                         publisher: EventPublisher, frames: list[bytes],
                                         reason: str) -> None:
    client = dealer(context, publisher)
    replies = ask(publisher, client, *frames)
    assert len(replies) == 1
    error = wire.decode_reply(replies[0])
    assert isinstance(error, wire.ErrorReply) and error.reason.startswith(reason), error
    # the ROUTER still works after it
    assert json.loads(ask(publisher, client, b'{"request":"snapshot"}')[0])["type"] == "snapshot"


def test_a_failing_snapshot_is_an_error_reply_not_a_crash(context: zmq.Context[Any],
                                                          journal: Journal) -> None:
    def broken() -> dict[str, Any]:
        raise KeyError("seat 9")

    publisher = EventPublisher(context, table_id=TABLE, pub_endpoint="tcp://127.0.0.1:*",
                               replay_endpoint="tcp://127.0.0.1:*", journal=journal,
                               snapshot=broken)
    try:
        replies = ask(publisher, dealer(context, publisher), b'{"request":"snapshot"}')
        assert json.loads(replies[0]) == {"type": "error",
                                          "reason": "snapshot unavailable: KeyError: 'seat 9'"}
    finally:
        publisher.close()


def test_handle_replay_returns_at_once_with_nothing_queued(publisher: EventPublisher) -> None:
    assert publisher.handle_replay() == 0


def test_handle_replay_serves_at_most_max_requests(context: zmq.Context[Any], journal: Journal,
                                                   publisher: EventPublisher) -> None:
    client = dealer(context, publisher)
    for _ in range(5):
        client.send(b'{"request":"snapshot"}')
    router = publisher.sockets[0]
    served = 0
    while served < 5:
        assert router.poll(10_000, zmq.POLLIN)
        served += publisher.handle_replay(max_requests=2)
        assert publisher.requests_served == served
    assert [json.loads(next_message(client)[0])["type"] for _ in range(5)] == ["snapshot"] * 5


def test_binding_a_busy_endpoint_fails_cleanly(context: zmq.Context[Any], journal: Journal,
                                               publisher: EventPublisher) -> None:
    with pytest.raises(StartupError, match=f"cannot bind {publisher.pub_endpoint}: "
                                           "Address already in use.*another program"):
        EventPublisher(context, table_id=TABLE, pub_endpoint=publisher.pub_endpoint,
                       replay_endpoint="tcp://127.0.0.1:*", journal=journal, snapshot=dict)


def test_ipc_endpoints(context: zmq.Context[Any], journal: Journal, tmp_path: Path) -> None:
    publisher = EventPublisher(context, table_id=TABLE,
                               pub_endpoint=f"ipc://{tmp_path}/pub.sock",
                               replay_endpoint=f"ipc://{tmp_path}/replay.sock",
                               journal=journal, snapshot=dict)
    try:
        sub = subscriber(context, publisher)
        (record,) = journal_and_publish(journal, publisher, 1)
        assert next_message(sub)[1] == record.message
    finally:
        publisher.close()

"""A subscriber that stops reading never stalls the table, and then recovers every event.

The daemon runs in-process over the pty simulators (tests/support/rig.py). A
:class:`controller.stream.client.StreamClient` syncs, then reads nothing while the table plays
hands. Its PUB queue is made small (SNDHWM 20 and 4 KiB socket buffers, standing in for the
default 10,000 messages so the test needs a few hands, not hundreds), so the
publisher must drop messages for it: the table still finishes every hand (progress counted
in settled hands and journal records, no timing). Then the client reads again and, through
gap detection and replay, receives exactly the journal's seqs after its snapshot, each once,
in order, with the journal's bytes.
"""

from __future__ import annotations

import zmq

from controller.settings.scenario import load_scenario
from controller.stream import wire
from controller.stream.client import StreamClient
from controller.stream.journal import Journal, journal_path

from tests.support.rig import scenarios_for
from tests.support.rig import RigFactory
from tests.support.waits import wait_for

HANDS = 12


def test_a_stalled_subscriber_never_stalls_the_table_and_recovers_by_replay(
        rig_factory: RigFactory) -> None:
    rig = rig_factory("cali_lowball")
    daemon = rig.daemon
    assert daemon.publisher is not None
    # Small queues between the table and the slow client (the rig's own subscriber reads
    # after every input, so it never holds more than one input's events).
    daemon.publisher.surveillance_pub.setsockopt(zmq.SNDHWM, 20)
    daemon.publisher.surveillance_pub.setsockopt(zmq.SNDBUF, 4096)   # for connections made from now on
    context = zmq.Context()
    context.setsockopt(zmq.RCVHWM, 10)
    context.setsockopt(zmq.RCVBUF, 4096)
    client = StreamClient(context, table_id=daemon.table_id,
                          pub_endpoint=rig.stream.events, replay_endpoint=rig.stream.replay)
    try:
        assert client.await_heartbeat(10) is not None      # the subscription is live
        snapshot = client.sync(timeout=10)
        assert rig.ask({"command": "open"})["ok"]
        scenarios = [load_scenario(path) for path in scenarios_for("cali_lowball", HANDS)[:HANDS]]
        start_seq = daemon.journal.last_seq
        for scenario in scenarios:                           # the client reads nothing here
            rig.play(scenario)
        status = rig.status()                                # every hand settled
        assert len(scenarios) == HANDS and status["hand_number"] == HANDS
        assert status["state"] == "SETTLED" and status["hand"] is None
        last = daemon.journal.last_seq
        assert last - start_seq > 100                        # the table kept going
        # (PUB drops for a full subscriber silently: publisher.dropped never sees them; the
        # client's replayed gaps below prove it fell behind.)

        received: list[wire.EnvelopeBase] = []
        while not received or received[-1].seq < last:
            event = client.receive(timeout=10)
            assert event is not None, f"stuck after seq {received[-1].seq if received else None} of {last}"
            received.append(event)
        # Whether ZeroMQ dropped anything for it depends on socket buffers (on ipc:// the
        # kernel absorbed ~900 messages here); either way the client must end complete.
        print(f"slow subscriber: {HANDS} hands, {last - start_seq} records while stalled, "
              f"{client.gaps_filled} gap(s) filled by replay")
        seqs = [event.seq for event in received]
        assert seqs == list(range(snapshot.seq + 1, last + 1))
    finally:
        client.close()
        context.term()
    rig.stop_daemon()
    with Journal(journal_path(rig.tmp_path / "state")) as journal:
        messages = {record.seq: record.message for record in journal.records()}
    for event in received:
        assert messages[event.seq] == _bytes_of(event)


def _bytes_of(envelope: wire.EnvelopeBase) -> bytes:

    return wire.dumps(envelope)

"""A flood of replays on one family does not starve the other.

Red team 8: the last changes (archived replay, the claim ledger, the console's sign-in
turns, the vocabularies) attacked from outside.

Each test states the behaviour the project promises and is marked xfail (strict) while the
hole is open: a fix turns it into a pass, and strict makes the suite say so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import zmq

from controller.daemon.journal_quarantine import quarantine
from controller.stream.journal import Journal, journal_path

from tests.support.archives import alter, append
from tests.support.stream import TABLE


def test_a_flood_of_replays_on_one_family_does_not_starve_the_other(
        context: zmq.Context[Any], tmp_path: Path) -> None:  # noqa: F811
    import json
    import time

    from controller.stream.publisher import EventPublisher

    append(tmp_path, 1200)
    alter(journal_path(tmp_path), 1200)
    quarantine(tmp_path, "disk damage", by="sam")
    journal = Journal(journal_path(tmp_path), durability="batched")
    publisher = EventPublisher(
        context, table_id=TABLE, pub_endpoint="tcp://127.0.0.1:*",
        replay_endpoint="tcp://127.0.0.1:*", cms_pub_endpoint="tcp://127.0.0.1:*",
        cms_replay_endpoint="tcp://127.0.0.1:*", journal=journal,
        snapshot=lambda: {"journaled": journal.last_seq})
    flood, floor = context.socket(zmq.DEALER), context.socket(zmq.DEALER)
    try:
        flood.connect(publisher.replay_endpoint)
        floor.connect(publisher.cms_replay_endpoint)
        floor.send(b'{"request": "snapshot"}')
        surveillance_router, cms_router = publisher.sockets
        assert cms_router.poll(10_000, zmq.POLLIN)      # the floor's request is waiting
        answered_at = None
        for turn in range(1, 31):                        # the daemon's loop, turn by turn
            for _ in range(8):                           # a surveillance client keeps asking
                flood.send(json.dumps({"request": "replay", "after": 0}).encode())
            assert surveillance_router.poll(10_000, zmq.POLLIN)
            publisher.handle_replay(deadline=time.monotonic() + 0.02)
            while flood.poll(0):
                flood.recv()
            if floor.poll(0):
                answered_at = turn
                break
        assert answered_at is not None, "the floor's snapshot went unanswered for 30 turns"
    finally:
        flood.close(0)
        floor.close(0)
        publisher.close()
        journal.close()

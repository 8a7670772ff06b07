"""A held table never serves the records past its break.

Red team 7: what the sixth round's fixes left open.

Each test states the behaviour the project promises; each was an open hole (xfail strict)
until its fix landed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import zmq

from controller.stream import wire

from tests.support.waits import DEADLINE_S


def _served(table: Any, dealer: zmq.Socket[bytes], request: dict[str, Any]) -> list[Any]:
    """What the daemon's replay socket answers ``request`` with, through ``replay_end``."""
    import time

    publisher = table.daemon.publisher
    dealer.send(json.dumps(request).encode())
    served: list[Any] = []
    deadline = time.monotonic() + DEADLINE_S
    while not served or not isinstance(served[-1], (wire.ReplayEnd, wire.SnapshotReply)):
        assert time.monotonic() < deadline, f"no answer to {request}"
        publisher.handle_replay()
        while dealer.poll(10):
            served.append(wire.decode_reply(dealer.recv()))
    return served


def _heartbeat(table: Any, sub: zmq.Socket[bytes]) -> wire.Heartbeat:
    """The heartbeat the daemon sends at its next tick."""
    import time

    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        table.daemon._next_heartbeat = 0.0
        table.daemon._tick()
        while sub.poll(20):
            message = wire.decode(sub.recv_multipart()[-1])
            if isinstance(message, wire.Heartbeat):
                return message
    raise AssertionError("no heartbeat")


def test_a_held_table_never_serves_the_records_past_its_break(tmp_path: Path) -> None:
    from tests.support.forgery import append_forged
    from tests.support.daemon import run_config
    from tests.support.daemon import Daemon

    context = zmq.Context()
    dealer, sub = context.socket(zmq.DEALER), context.socket(zmq.SUB)
    for socket in (dealer, sub):
        socket.setsockopt(zmq.LINGER, 0)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    dealer.connect(f"ipc://{tmp_path}/r")
    sub.connect(f"ipc://{tmp_path}/e")
    try:
        table = Daemon(tmp_path, run_config(tmp_path), context)
        table.daemon.start()
        try:
            assert table.ask(command="open")["ok"]
            written, head = table.daemon.journal.last_seq, table.daemon.journal.last_hash
            forged = append_forged(tmp_path / "state", table.daemon.table_id)
            # Before the running check reads it, and after: the daemon's own records only.
            for check in (False, True):
                if check:
                    table.daemon.check_chain()
                    assert table.daemon.journal_broken is not None
                    assert table.daemon.journal_broken.seq == forged
                served = _served(table, dealer, {"request": "replay", "after": written - 1})
                assert [m.seq for m in served[:-1]] == [written], f"served {served}"
                assert served[-1] == wire.ReplayEnd(type="replay_end", last=written)
                beat = _heartbeat(table, sub)
                assert (beat.seq, beat.hash) == (written, head), \
                    f"the heartbeat names seq {beat.seq} (the daemon wrote up to {written})"
        finally:
            table.daemon.close()
        table = Daemon(tmp_path, run_config(tmp_path), context)
        table.daemon.start()
        try:
            broken = table.daemon.journal_broken
            assert broken is not None and broken.seq == forged      # held, as the mark says
            served = _served(table, dealer, {"request": "replay", "after": written})
            past = [m.seq for m in served if not isinstance(m, wire.ReplayEnd)
                    and m.seq >= broken.seq]
            assert not past, (f"the held table served seq {past} (the journal broke at seq "
                              f"{broken.seq}; the daemon wrote up to {written}) as its history")
            beat = _heartbeat(table, sub)
            assert (beat.seq, beat.hash, beat.journal_broken_at) == (written, head, forged)
            snapshot = _served(table, dealer, {"request": "snapshot"})[-1]
            assert snapshot.seq == written
            # Kept on disk as evidence all the same.
            assert table.daemon.journal.stored_end() == forged
        finally:
            table.daemon.close()
    finally:
        dealer.close(0)
        sub.close(0)
        context.term()

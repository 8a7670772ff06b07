"""Withdrawn requests: a request carried out, then asked about again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import zmq

from tests.support.daemon import beating


def carried_out_at_seq_7(tmp_path: Path) -> None:
    """The table opened (``request-0``) and closed (``request-1``, seq 7), then stopped."""
    with beating(tmp_path) as (table, _):
        assert table.ask(command="open", request_id="request-0")["ok"]
        assert table.ask(command="close", request_id="request-1")["ok"]
        before = table.ask(command="withdraw", requests=["request-1"])
        assert before["carried_out"] == {"request-1": 7}, before


def withdrawal_behind_others(tmp_path: Path, others: int, frames: int, turns: int
                             ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A console's ``open`` then its withdrawal, with ``others`` other clients' messages
    between them on the daemon's command socket: each a message of ``frames`` empty frames,
    or (``frames`` 0) one withdrawal of an id of its own. The console's reply to its
    withdrawal after at most ``turns`` turns of the daemon, and every reply it got."""
    import secrets

    from controller.daemon.command_channel import MAX_COMMAND_FRAMES
    from controller.stream.frames import FrameReader
    from tests.support.daemon import run_config
    from tests.support.daemon import Daemon

    context = zmq.Context()
    context.setsockopt(zmq.MAX_SOCKETS, 4096)
    table = Daemon(tmp_path, run_config(tmp_path), context)
    table.daemon.start()
    channel = table.daemon.channel
    # The daemon's socket on an in-process endpoint: what a client sends is on the socket
    # when its send returns, so the turn meets every message waiting.
    router, console = context.socket(zmq.ROUTER), context.socket(zmq.DEALER)
    clients = [context.socket(zmq.DEALER) for _ in range(others)]
    for socket in (router, console, *clients):
        socket.setsockopt(zmq.LINGER, 0)
        socket.setsockopt(zmq.SNDHWM, 0)
        socket.setsockopt(zmq.RCVHWM, 0)
    router.bind("inproc://commands")
    for socket in (console, *clients):
        socket.connect("inproc://commands")
    (real, channel.socket), real_reader = (channel.socket, router), channel._reader
    channel._reader = FrameReader(router, MAX_COMMAND_FRAMES)
    try:
        console.send_multipart([b"", json.dumps(
            {"command": "open", "request_id": "open-0001"}).encode()])
        for client in clients:                               # other clients'
            client.send_multipart([b""] * frames if frames else [
                b"", json.dumps({"command": "withdraw",
                                 "requests": [secrets.token_hex(8)]}).encode()])
        console.send_multipart([b"", json.dumps(             # the console gave up on it
            {"command": "withdraw", "requests": ["open-0001"]}).encode()])
        replies: list[dict[str, Any]] = []
        for _ in range(turns):                               # the daemon's turns
            channel.serve_turn()
            while console.poll(0):
                replies.append(json.loads(console.recv_multipart()[-1]))
            if len(replies) == 2:
                break
        return next(reply for reply in replies if "withdrawn" in reply), replies
    finally:
        channel.socket, channel._reader = real, real_reader
        for socket in (router, console, *clients):
            socket.close(0)
        table.daemon.close()
        context.term()

"""Replies to a client that never reads are dropped whole; other clients are answered.

Red team 16: this session's speed changes (commits dc33458, 3527ea9, 4e0bab9, 4d3e021)
attacked as a hostile process with write access to the journal's file, a full disk and a kill
between statements would: ``Journal._insert`` (a lone INSERT, or BEGIN IMMEDIATE, single-row
INSERTs, COMMIT), the written links the running chain check trusts without hashing
(``Journal.written_after``, ``chain_watch._Follow.read``), and the command channel's
lone-surrogate check and frame-by-frame replies.

No hole was found: these tests pin the behaviour the attacks found sound, so that a later speed
change that breaks it fails here. Each states the promise it checks."""

from __future__ import annotations

import json
from typing import Any

import zmq

from bench import fuzz


def _serve_until_answered(daemon: Any, client: zmq.Socket[bytes]) -> dict[str, Any]:
    """Serve the daemon's command socket (its loop is not running) until ``client`` has a
    reply; the reply."""
    for _ in range(500):
        daemon.handle_commands()
        if client.poll(10):
            reply: dict[str, Any] = json.loads(client.recv())
            return reply
    raise AssertionError("no reply after 500 turns of the command channel")


def test_replies_to_a_client_that_never_reads_are_dropped_whole_and_others_answered() -> None:
    """A client sends far more commands than its reply queue holds and reads none, another
    sends one and goes away before its reply: the replies past the queue are dropped whole
    (every reply the first client reads is one whole reply, as a REQ expects it), and a third
    client's commands are answered before and after."""
    with fuzz.command_daemon() as daemon, zmq.Context() as context:
        endpoint = daemon.commands.getsockopt(zmq.LAST_ENDPOINT).decode()
        flooding: zmq.Socket[bytes] = context.socket(zmq.DEALER)
        asking: zmq.Socket[bytes] = context.socket(zmq.REQ)
        gone: zmq.Socket[bytes] = context.socket(zmq.REQ)
        for socket in (flooding, asking, gone):
            socket.setsockopt(zmq.LINGER, 0)
            socket.connect(endpoint)
        try:
            sent, status = 0, json.dumps({"command": "status"}).encode()
            while sent < 2500:
                try:
                    flooding.send_multipart([b"", status], zmq.NOBLOCK)
                    sent += 1
                except zmq.Again:
                    daemon.handle_commands()
            asking.send(status)
            assert _serve_until_answered(daemon, asking)["ok"] is True
            gone.send(status)
            gone.close(0)
            asking.send(json.dumps({"command": "open"}).encode())
            assert _serve_until_answered(daemon, asking)["ok"] is True
            replies = 0
            while flooding.poll(5000 if replies == 0 else 500):
                frames = flooding.recv_multipart()
                assert len(frames) == 2 and frames[0] == b"", frames[:3]
                assert json.loads(frames[1])["ok"] is True
                replies += 1
            assert 0 < replies < sent
            assert daemon.table.state == "OPEN" and daemon.held_reason() is None
        finally:
            for socket in (flooding, asking, gone):
                socket.close(0)

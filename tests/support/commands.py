"""The command channel without devices: a router of requests, a hand locked."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import zmq

from bench import fuzz
from controller.daemon.loop import TableDaemon
from controller.stream.command_replies import Reply, encode

from tests.support.waits import DEADLINE_S


@contextmanager
def a_hand_locked() -> Iterator[TableDaemon]:
    """A daemon (no devices, its loop not running) with a Three Card Lowball hand locked,
    so that every supervisor command has something to act on."""
    with fuzz.command_daemon("three_card_lowball") as daemon:
        for command in ({"command": "open"},
                        {"command": "place", "spot": 1, "wager": "ante", "amount": 500},
                        {"command": "place", "spot": 1, "wager": "bonus", "amount": 500},
                        {"command": "lock"}):
            assert daemon.command(json.dumps(command).encode())["ok"], command
        yield daemon


class Router:
    """A stand-in for the daemon's socket: the test decides when and what it answers."""

    def __init__(self, context: zmq.Context[Any], endpoint: str) -> None:
        self.socket = context.socket(zmq.ROUTER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.bind(endpoint)

    def take(self, timeout_s: float = DEADLINE_S) -> tuple[list[bytes], dict[str, Any]]:
        assert self.socket.poll(int(timeout_s * 1000)), "no request arrived"
        *envelope, payload = self.socket.recv_multipart()
        request: dict[str, Any] = json.loads(payload)
        return envelope, request

    def answer(self, envelope: list[bytes], reply: Reply) -> None:
        self.socket.send_multipart([*envelope, encode(reply)])

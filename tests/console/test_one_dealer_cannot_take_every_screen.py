"""Red team 7: the console's screens, held by one dealer's sign-in."""

from __future__ import annotations

import contextlib
import socket as sockets
from urllib.parse import urlsplit

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from tests.support.console import Console
from tests.support.rig import Rig
from tests.support.sign_in import DEALER, PIT, next_of, sign_in


def screen_from(url: str, path: str, cookie: str, source: str) -> ClientConnection:
    """A screen's socket opened from the loopback address ``source`` (another machine, as
    far as the console can tell)."""
    where = urlsplit(url)
    raw = sockets.socket(sockets.AF_INET, sockets.SOCK_STREAM)
    raw.bind((source, 0))
    raw.connect((where.hostname, where.port))
    return connect(url.replace("http://", "ws://") + path, sock=raw,
                   additional_headers={"Cookie": cookie})


def test_one_dealers_sign_in_cannot_take_every_screen_of_the_console(
        locked_console: tuple[Rig, Console]) -> None:  # noqa: F811
    from controller.console.places import MAX_SCREENS, MAX_SCREENS_PER_ADDRESS

    rig, console = locked_console
    status, dealer = sign_in(console.url, "Dana", DEALER)
    assert status == 200 and dealer
    status, pit = sign_in(console.url, "Pat", PIT)
    assert status == 200 and pit
    with contextlib.ExitStack() as held:
        for n in range(MAX_SCREENS):
            source = f"127.0.0.{2 + n // MAX_SCREENS_PER_ADDRESS}"
            ws = held.enter_context(screen_from(console.url, "ws", dealer, source))
            next_of(ws, "view")
        with screen_from(console.url, "ws/pit", pit, "127.0.0.1") as floor:
            try:
                assert next_of(floor, "view") is not None
            except ConnectionClosed as closed:
                reason = closed.rcvd.reason if closed.rcvd is not None else "?"
                pytest.fail(f"the pit's screen was refused: {reason}")

"""Every WebSocket message is hostile input: the console answers each bad one with a clear
error, applies nothing twice, and one screen cannot flood the table. Driven with a plain
WebSocket client (no browser needed) against the console process and the real daemon."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from controller.console.messages import MAX_MESSAGE_BYTES

from tests.support.console import TableFactory
from tests.support.rig import Rig
from tests.support.waits import wait_for


class Screen:
    """A screen's WebSocket, as a context manager (it closes the socket)."""

    def __init__(self, url: str, **headers: str) -> None:
        self._connection = connect(url.replace("http://", "ws://") + "ws",
                                   additional_headers=headers or None)
        self.views: list[dict[str, Any]] = []

    def __enter__(self) -> Screen:
        self.socket = self._connection.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._connection.__exit__(*exc)

    def next(self, kind: str) -> dict[str, Any]:
        while True:
            message = json.loads(self.socket.recv(timeout=10))
            if message["type"] == "view":
                self.views.append(message)
            if message["type"] == kind:
                found: dict[str, Any] = message
                return found

    def send(self, message: str | dict[str, Any]) -> None:
        self.socket.send(message if isinstance(message, str) else json.dumps(message))

    def command(self, command: dict[str, Any], command_id: str | None = None) -> dict[str, Any]:
        command_id = command_id or str(uuid.uuid4())
        self.send({"type": "command", "id": command_id, "command": command})
        answer = self.next("answer")
        assert answer["id"] == command_id
        return answer


@pytest.fixture
def screen(table: TableFactory) -> Iterator[tuple[Rig, Screen]]:
    rig, console = table("cali_lowball")
    with Screen(console.url) as screen:
        screen.next("view")
        yield rig, screen


BAD_MESSAGES: list[tuple[str | dict[str, Any], str]] = [
    ("not json", "not valid JSON"),
    ("[1, 2]", "a message is a JSON object"),
    ({"type": "command", "id": "abcdefgh1", "command": {"command": "open"}, "admin": True},
     "admin: unknown key"),
    ({"type": "command", "id": "short", "command": {"command": "open"}}, "id:"),
    ({"type": "command", "id": "abcdefgh2", "command": {"command": "place", "spot": 99,
                                                        "wager": "ante", "amount": 500}},
     "spot: Input should be less than or equal to 7"),
    ({"type": "command", "id": "abcdefgh3", "command": {"command": "place", "spot": 1,
                                                        "wager": "ante", "amount": 10**30}},
     "amount"),
    ({"type": "command", "id": "abcdefgh4", "command": {"command": "void", "reason": "x"}},
     "'void' is a supervisor's command: no supervisor is signed in on this screen"),
    ({"type": "command", "id": "abcdefgh5", "command": {"command": "open", "by": "pit boss"}},
     "by: unknown key"),
    ("x" * (MAX_MESSAGE_BYTES + 1), f"at most {MAX_MESSAGE_BYTES} bytes"),
]


def test_each_bad_message_is_answered_and_nothing_reaches_the_table(
        screen: tuple[Rig, Screen]) -> None:
    rig, socket = screen
    for message, said in BAD_MESSAGES:
        socket.send(message)
        error = socket.next("error")
        assert said in error["error"], (message, error)
    assert socket.command({"command": "open"})["ok"]      # the screen still works
    assert [e.data.command for e in rig.events("command_accepted")] == ["open"]
    assert rig.events("command_refused") == []


def test_a_binary_frame_is_answered_and_the_screen_goes_on(screen: tuple[Rig, Screen]) -> None:
    rig, socket = screen
    socket.socket.send(b'{"type": "command"}')
    assert "text frame, not binary" in socket.next("error")["error"]
    assert socket.command({"command": "open"})["ok"]


def test_a_repeated_command_id_is_applied_once_and_answered_the_same(
        screen: tuple[Rig, Screen]) -> None:
    rig, socket = screen
    first = socket.command({"command": "open"}, "repeat-me-0001")
    again = socket.command({"command": "open"}, "repeat-me-0001")
    assert first["ok"] and again["ok"] and again["repeated"]
    assert len([e for e in rig.events("command_accepted") if e.data.command == "open"]) == 1


def test_a_command_for_the_wrong_state_says_why(screen: tuple[Rig, Screen]) -> None:
    rig, socket = screen
    answer = socket.command({"command": "lock"})
    assert not answer["ok"] and "CLOSED" in answer["error"]


def test_the_journal_names_the_console_not_what_the_browser_says(
        screen: tuple[Rig, Screen]) -> None:
    rig, socket = screen
    socket.command({"command": "open"})
    wait_for(lambda: rig.events("command_accepted"), "the open")
    accepted = rig.events("command_accepted")[0].data
    assert accepted.by == "dealer console" and accepted.role == "dealer"


def test_a_flooding_screen_is_told_to_slow_down_and_the_table_still_serves(
        screen: tuple[Rig, Screen], table: TableFactory) -> None:
    rig, socket = screen
    for number in range(40):
        socket.send({"type": "command", "id": f"flood-{number:04d}",
                     "command": {"command": "lock"}})
    answers = [socket.next("answer") for _ in range(40)]
    slowed = [a for a in answers if "slow down" in (a["error"] or "")]
    assert slowed and len(slowed) < 40
    assert rig.ask({"command": "open"})["ok"]     # another client is served at once


def test_a_page_of_another_site_cannot_open_the_socket(table: TableFactory) -> None:
    rig, console = table("cali_lowball")
    with pytest.raises(InvalidStatus), Screen(console.url, Origin="http://evil.example"):
        pass


def test_a_second_console_on_the_same_table_sees_the_same_table(table: TableFactory,
                                                                tmp_path: Path) -> None:
    """Two consoles are two clients of the daemon: the table serves both and orders their
    commands; a command sent from one is applied once and shown on both."""
    from tests.support.console import Console, write_configs

    rig, first = table("cali_lowball")
    (tmp_path / "second").mkdir()
    second = Console(write_configs(tmp_path / "second", rig))
    try:
        with Screen(first.url) as one, Screen(second.url) as two:
            one.next("view")
            two.next("view")
            assert one.command({"command": "open"}, "both-consoles-1")["ok"]
            answer = two.command({"command": "open"}, "both-consoles-1")
            assert not answer["ok"] and "OPEN" in answer["error"]   # the table's state decides
            while not any(view["state"] == "OPEN" for view in two.views):
                two.next("view")                             # (recv bounds the wait)
        assert len([e for e in rig.events("command_accepted")
                    if e.data.command == "open"]) == 1
    finally:
        second.close()

"""With sign-in required (always, off loopback) every screen needs a sign-in: the dealer's
and the pit's accounts are the console's own, supervisors sign in with the table's
credentials. Nothing is served to a browser that has not signed in."""

from __future__ import annotations

import http.cookiejar
import json
import urllib.error
import urllib.request

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import ClientConnection, connect

from controller.console.config import ConsoleConfig
from controller.settings.validation import InputError, validate

from tests.support.console import Console
from tests.support.rig import Rig
from tests.support.sign_in import DEALER, PIT, _sha, locked_console, sign_in, next_of
from tests.support.waits import wait_for


def socket(url: str, path: str, cookie: str | None = None) -> ClientConnection:
    return connect(url.replace("http://", "ws://") + path,
                   additional_headers={"Cookie": cookie} if cookie else None)


def test_nothing_is_served_before_a_sign_in(locked_console: tuple[Rig, Console]) -> None:
    rig, console = locked_console
    for path in ("", "pit"):
        with urllib.request.urlopen(console.url + path, timeout=10) as reply:
            assert reply.url.endswith("/supervisor" + ("?next=/pit" if path else ""))
    for path in ("ws", "ws/pit"):
        with pytest.raises(InvalidStatus), socket(console.url, path):
            pass
    assert sign_in(console.url, "Dana", "not-her-credential")[0] == 401


def test_a_dealer_signs_in_and_deals_but_cannot_void_or_see_the_pit(
        locked_console: tuple[Rig, Console]) -> None:
    rig, console = locked_console
    status, cookie = sign_in(console.url, "Dana", DEALER)
    assert status == 200 and cookie and DEALER not in cookie
    with socket(console.url, "ws", cookie) as ws:
        assert next_of(ws, "session")["role"] == "dealer"
        ws.send(json.dumps({"type": "command", "id": "dana-open-1",
                            "command": {"command": "open"}}))
        assert next_of(ws, "answer")["ok"]
        ws.send(json.dumps({"type": "command", "id": "dana-void-1",
                            "command": {"command": "void", "reason": "x"}}))
        assert "Dana is signed in as a dealer" in next_of(ws, "error")["error"]
    wait_for(lambda: rig.events("command_accepted"), "the open")
    assert rig.events("command_accepted")[0].data.by == "Dana"
    with pytest.raises(InvalidStatus), socket(console.url, "ws/pit", cookie):
        pass


def test_the_pit_signs_in_to_its_screen_only(locked_console: tuple[Rig, Console]) -> None:
    rig, console = locked_console
    status, cookie = sign_in(console.url, "Pat", PIT)
    assert status == 200 and cookie is not None
    with socket(console.url, "ws/pit", cookie) as ws:
        assert next_of(ws, "session")["role"] == "pit"
        ws.send(json.dumps({"type": "acknowledge", "seq": 1}))
        assert "needs a supervisor" in next_of(ws, "error")["error"]
    with pytest.raises(InvalidStatus), socket(console.url, "ws", cookie):
        pass


def test_off_loopback_every_screen_needs_an_account() -> None:
    with pytest.raises(InputError, match="every screen needs a sign-in"):
        validate(ConsoleConfig, {"table_config": "t.toml", "host": "192.0.2.7",
                                 "tls_cert_file": "c.pem", "tls_key_file": "k.pem"}, "c")
    config = validate(ConsoleConfig, {
        "table_config": "t.toml", "host": "192.0.2.7", "tls_cert_file": "c.pem",
        "tls_key_file": "k.pem", "accounts": {"Dana": {"role": "dealer",
                                                       "credential_sha256": _sha(DEALER)}}}, "c")
    assert config.signs_in
    assert not validate(ConsoleConfig, {"table_config": "t.toml"}, "c").signs_in

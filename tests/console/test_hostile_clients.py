"""The third red-team pass on the console: pages of other sites and rebound host names,
sign-ins fired at once or under forged addresses, screens whose sign-in ended, ids reused,
nonsense at full speed, commands while the table is away, and what a dealer's socket is
sent. Against the console process and the real daemon, and in Chromium."""

from __future__ import annotations

import concurrent.futures
import json
import socket
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from bench import processes
from controller.console.link import TableLink
from controller.console.sessions import FAILURES

from tests.support.console import Console, TableFactory
from tests.support.rig import Rig
from tests.support.sign_in import DEALER, next_of, sign_in
from tests.support.waits import wait_for


def post(url: str, body: dict[str, Any],
         headers: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url + "api/sign-in", data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json",
                                              **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            answer: dict[str, Any] = json.loads(reply.read())
            return reply.status, answer
    except urllib.error.HTTPError as error:
        text = error.read()
        return error.code, json.loads(text) if text.startswith(b"{") else {"error": text}


def rebound(url: str) -> tuple[str, dict[str, str]]:
    """The console's address, and the headers of a page of ``evil.example`` whose name the
    attacker's DNS answers with 127.0.0.1 (DNS rebinding): same origin as far as the browser
    knows, so it sends them."""
    port = url.rstrip("/").rsplit(":", 1)[1]
    name = f"evil.example:{port}"
    return url, {"Host": name, "Origin": f"http://{name}"}


def test_a_page_on_another_host_name_cannot_drive_the_table(table: TableFactory) -> None:
    rig, console = table("cali_lowball")
    url, headers = rebound(console.url)
    port = int(url.rstrip("/").rsplit(":", 1)[1])
    with pytest.raises(InvalidStatus):
        with connect(f"ws://evil.example:{port}/ws", additional_headers={"Origin": headers[
                "Origin"]}, sock=socket.create_connection(("127.0.0.1", port))) as ws:
            ws.send(json.dumps({"type": "command", "id": "rebound-0001",
                                "command": {"command": "open"}}))
            ws.recv(timeout=5)
    request = urllib.request.Request(url, headers=headers)
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 400
    status, _ = post(url, {"name": "Alice", "credential": "guess-number-1"}, headers)
    assert status == 400
    assert rig.events("command_accepted") == [] and rig.events("command_refused") == []
    with urllib.request.urlopen(console.url, timeout=10) as page:   # its own name still works
        assert page.status == 200


def test_sign_ins_fired_at_once_get_no_more_guesses_than_the_lock_out_allows(
        table: TableFactory) -> None:
    rig, console = table("cali_lowball")
    with concurrent.futures.ThreadPoolExecutor(24) as pool:
        statuses = list(pool.map(lambda n: post(console.url, {
            "name": "Alice", "credential": f"guess-number-{n:04d}"})[0], range(24)))
    assert statuses.count(401) <= FAILURES, statuses
    assert set(statuses) <= {401, 429}


def test_a_forged_forwarded_address_does_not_escape_the_lock_out(table: TableFactory) -> None:
    rig, console = table("cali_lowball")
    statuses = [post(console.url, {"name": "Alice", "credential": f"guess-number-{n:04d}"},
                     {"X-Forwarded-For": f"10.9.{n}.1", "Forwarded": f"for=10.8.{n}.1"})[0]
                for n in range(FAILURES + 3)]
    assert statuses[:FAILURES] == [401] * FAILURES
    assert statuses[FAILURES:] == [429] * 3, statuses


def test_a_screen_signed_out_elsewhere_is_shown_nothing_more(
        locked_console: tuple[Rig, Console]) -> None:
    rig, console = locked_console
    status, cookie = sign_in(console.url, "Dana", DEALER)
    assert status == 200 and cookie is not None
    with connect(console.url.replace("http://", "ws://") + "ws",
                 additional_headers={"Cookie": cookie}) as ws:
        next_of(ws, "view")
        request = urllib.request.Request(console.url + "api/sign-out", data=b"",
                                         headers={"Cookie": cookie}, method="POST")
        with urllib.request.urlopen(request, timeout=10) as reply:
            assert reply.status == 200
        assert rig.ask({"command": "open"})["ok"]           # the table changes: a new view
        with pytest.raises(ConnectionClosed):
            while True:
                message = json.loads(ws.recv(timeout=10))
                assert message["type"] != "view", "a signed-out screen was sent the table"


def test_a_command_given_while_the_table_is_away_is_refused_and_never_sent_later(
        tmp_path: Path) -> None:
    rig = Rig(tmp_path, "cali_lowball")
    table_id = rig.daemon.table_id
    rig.stop_daemon()
    stream = rig.stream
    views: list[dict[str, Any]] = []
    assert stream.table_events and stream.table_replay
    link = TableLink(table_id=table_id, spots=7, events=stream.table_events,
                     replay=stream.table_replay,
                     commands=stream.commands, on_view=views.append)
    link.start()
    answers: list[dict[str, Any]] = []
    try:
        link.send({"command": "open", "by": "test"}, answers.append)
        wait_for(lambda: answers, "an answer while the table is away", timeout=8)
        assert not answers[0]["ok"] and "nothing was sent" in answers[0]["error"]
        rig.start_daemon()
        wait_for(lambda: views and views[-1]["connected"], "the table back")
        link.send({"command": "open", "by": "test"}, answers.append)
        wait_for(lambda: len(answers) == 2, "the answer")
        assert answers[1]["ok"], answers[1]     # the first open was never carried out
        rig.stop_daemon()                       # the table goes while the screen is open
        wait_for(lambda: not views[-1]["connected"], "the screen saying the table is away")
        link.send({"command": "close", "by": "test"}, answers.append)
        wait_for(lambda: len(answers) == 3, "the answer")
        assert not answers[2]["ok"] and "nothing was sent" in answers[2]["error"]
        rig.start_daemon()
        wait_for(lambda: views[-1]["connected"], "the table back again")
        link.send({"command": "close", "by": "test"}, answers.append)
        wait_for(lambda: len(answers) == 4, "the answer")
        assert answers[3]["ok"], answers[3]     # the table was still open: nothing applied
    finally:
        link.stop()
        rig.close()


def test_a_screen_sending_nonsense_at_full_speed_cannot_flood_the_log(tmp_path: Path) -> None:
    """Each bad message was a warning line: 2,000 of them in about a second from one script,
    and a console whose log is not read fast enough (a full pipe, a stalled journald) stops
    serving every screen while it writes them."""
    from tests.support.console import Console, write_configs

    rig = Rig(tmp_path, "cali_lowball")
    console = Console(write_configs(tmp_path, rig))
    try:
        with connect(console.url.replace("http://", "ws://") + "ws") as ws:
            for number in range(2000):
                ws.send(f"not json {number}")
            for _ in range(2000):
                while json.loads(ws.recv(timeout=10))["type"] != "error":
                    pass
        _, headers = rebound(console.url)
        for _ in range(200):
            request = urllib.request.Request(console.url, headers=headers)
            with pytest.raises(urllib.error.HTTPError):
                urllib.request.urlopen(request, timeout=10)
    finally:
        processes.stop(console.process, 10)     # (killed if blocked writing its log)
        assert console.process.stdout is not None and console.process.stderr is not None
        log = console.process.stderr.read()
        console.process.stdout.close()
        console.process.stderr.close()
        rig.close()
    # one line per allowed message (10 at once, then 5 a second), one a second for the
    # names: bounds that hold however slowly a loaded machine serves the flood
    assert 1 <= log.count("bad message from a screen") <= 2000 // 10, log[-2000:]
    assert 1 <= log.count("another host name") <= 200 // 5


def test_an_id_given_again_with_another_command_is_refused_not_answered_as_the_first(
        table: TableFactory) -> None:
    rig, console = table("cali_lowball")
    with connect(console.url.replace("http://", "ws://") + "ws") as ws:
        def command(body: dict[str, Any], command_id: str) -> dict[str, Any]:
            ws.send(json.dumps({"type": "command", "id": command_id, "command": body}))
            while (message := json.loads(ws.recv(timeout=10)))["type"] != "answer":
                pass
            answer: dict[str, Any] = message
            return answer

        assert command({"command": "open"}, "reused-id-0001")["ok"]
        again = command({"command": "close"}, "reused-id-0001")
        assert not again["ok"] and "another command" in again["error"]
        assert command({"command": "open"}, "reused-id-0001")["repeated"]
    assert [e.data.command for e in rig.events("command_accepted")] == ["open"]


def test_an_account_signing_in_over_and_over_ends_its_own_sessions_not_a_supervisors() -> None:
    import hashlib

    from controller.console.config import Account
    from controller.console.sessions import MAX_SESSIONS, Sessions

    now = [0.0]
    sessions = Sessions(15, {"Alice": hashlib.sha256(b"alice-credential").hexdigest()},
                        clock=lambda: now[0])
    pit = {"Pat": Account(role="pit", credential_sha256=hashlib.sha256(b"pat-credential")
                          .hexdigest())}
    alice, _ = sessions.open("Alice", "alice-credential")
    for _ in range(3 * MAX_SESSIONS):
        now[0] += 1.0
        assert sessions.account("Pat", "pat-credential", pit) is not None
    session = sessions.get(alice)
    assert session is not None and session.name == "Alice"


def test_the_dealers_screen_is_sent_nothing_only_the_pit_may_see(
        locked_console: tuple[Rig, Console]) -> None:
    """A dealer's account opens the dealer's screen only: the last hands (who played them)
    and the alarms are the pit's, and must not reach a dealer's socket either."""
    from tests.support.sign_in import PIT

    rig, console = locked_console
    views = {}
    for name, credential, path in (("Dana", DEALER, "ws"), ("Pat", PIT, "ws/pit")):
        status, cookie = sign_in(console.url, name, credential)
        assert status == 200 and cookie is not None
        with connect(console.url.replace("http://", "ws://") + path,
                     additional_headers={"Cookie": cookie}) as ws:
            views[name] = next_of(ws, "view")
    assert "recall" in views["Pat"] and "alarms" in views["Pat"]
    assert "recall" not in views["Dana"] and "alarms" not in views["Dana"]
    assert views["Dana"]["spots"] == views["Pat"]["spots"]


def test_in_a_real_browser_a_rebound_name_gets_no_screen(browser: Browser,
                                                         table: TableFactory) -> None:
    """Chromium resolving evil.example to 127.0.0.1, as a rebinding attacker's DNS does once
    the page has loaded: what that origin can fetch or open on the console."""
    from tests.support.console import CHROMIUM

    rig, console = table("cali_lowball")
    port = int(console.url.rstrip("/").rsplit(":", 1)[1])
    rebinding = browser.browser_type.launch(
        executable_path=CHROMIUM,
        args=["--no-sandbox", "--disable-gpu", "--host-resolver-rules=MAP evil.example 127.0.0.1"])
    try:
        page = rebinding.new_page()
        reply = page.goto(f"http://evil.example:{port}/")
        assert reply is not None and reply.status == 400
        opened = page.evaluate("""url => new Promise(done => {
            const socket = new WebSocket(url);
            socket.onopen = () => { socket.send(JSON.stringify({type: "command",
                id: "rebound-browser-1", command: {command: "open"}})); done("open"); };
            socket.onerror = () => done("refused");
        })""", f"ws://evil.example:{port}/ws")
        assert opened == "refused"
    finally:
        rebinding.close()
    assert rig.ask({"command": "open"})["ok"]          # nothing of the page reached the table


def test_a_page_of_another_site_cannot_sign_a_screen_out(
        locked_console: tuple[Rig, Console]) -> None:
    rig, console = locked_console
    status, cookie = sign_in(console.url, "Dana", DEALER)
    assert status == 200 and cookie is not None

    def sign_out(**headers: str) -> int:
        request = urllib.request.Request(console.url + "api/sign-out", data=b"", method="POST",
                                         headers={"Cookie": cookie, **headers})
        try:
            with urllib.request.urlopen(request, timeout=10) as reply:
                status: int = reply.status
                return status
        except urllib.error.HTTPError as error:
            return error.code

    assert sign_out(Origin="http://evil.example") == 400
    with connect(console.url.replace("http://", "ws://") + "ws",
                 additional_headers={"Cookie": cookie}) as ws:
        assert next_of(ws, "session")["name"] == "Dana"       # still signed in
    assert sign_out() == 200

"""The console's places for screens: a script opening screens in a loop, from one machine or
several, signed in with an account or with none, never keeps a supervisor or the dealer out.
Real WebSocket clients against the console process and the real daemon (each "machine" is a
loopback address of its own); the policy itself is checked alone first."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from controller.console.app import GAVE_WAY
from controller.console.places import (
    ACCOUNT_PLACES,
    MAX_SCREENS,
    MAX_SCREENS_PER_ADDRESS,
    UNSIGNED_PLACES,
    Places,
    Rank,
)

from tests.support.console import SUPERVISORS, Console, TableFactory
from tests.support.rig import Rig
from tests.support.sign_in import DEALER, PIT, next_of, sign_in
from tests.support.waits import wait_for


def test_the_policy_keeps_room_for_the_signed_in_and_the_flooder_closes_its_own() -> None:
    signed: dict[str, tuple[Rank, str | None]] = {
        "dana": (Rank.ACCOUNT, "Dana"), "pat": (Rank.ACCOUNT, "Pat"),
        "alice": (Rank.SUPERVISOR, "Alice")}
    places: Places[Any] = Places(lambda token: signed.get(token or "", (Rank.UNSIGNED, None)))
    for n in range(UNSIGNED_PLACES):               # screens with no sign-in, 8 machines
        assert places.take(("anon", n), f"10.0.0.{n % 8}", None) == ([], None)
    gave, why = places.take(("anon", "new"), "10.0.0.9", None)
    assert why is None and gave == [("anon", 0)]   # the oldest of the busiest machine
    for n in range(ACCOUNT_PLACES - UNSIGNED_PLACES):   # a dealer's screens still find room
        assert places.take(("dana", n), f"10.1.0.{n % 4}", "dana") == ([], None)
    gave, why = places.take("pat-1", "10.2.0.1", "pat")  # the unsigned give way first
    assert why is None and gave == [("anon", 1)]
    gone = []
    for n in range(UNSIGNED_PLACES):               # the dealer floods: the unsigned go, then
        gone += places.take(("dana-more", n), f"10.3.0.{n % 4}", "dana")[0]   # Dana's own
    assert [key[0] for key in gone] == ["anon"] * (UNSIGNED_PLACES - 1) + ["dana"]
    assert len(places) == ACCOUNT_PLACES
    gave, why = places.take("pat-2", "10.2.0.1", "pat")
    assert why is None and gave == [("dana", 1)]  # the name holding the most gives way
    for n in range(MAX_SCREENS - ACCOUNT_PLACES):  # the supervisor's places were kept
        assert places.take(("alice", n), f"10.4.0.{n}", "alice") == ([], None)
    gave, why = places.take(("alice", "last"), "10.4.0.99", "alice")
    assert why is None and len(gave) == 1 and gave[0] != ("alice", 0)
    gave, why = places.take("anon-late", "10.5.0.1", None)     # nothing of a higher rank
    assert gave == [] and why is not None                     # gives way for none
    for n in range(MAX_SCREENS_PER_ADDRESS):       # one machine's cap, then its own oldest
        places.take(("one", n), "10.6.0.1", "alice")
    gave, why = places.take("one-more", "10.6.0.1", "dana")
    assert why is not None and "this machine" in why and gave == []
    signed["alice"] = (Rank.UNSIGNED, None)        # her sign-in ended: her screens rank as none
    gave, why = places.take("one-more", "10.6.0.1", "dana")    # and give way first
    assert why is None and gave[0] == ("one", 0)
    assert {key[0] for key in gave} <= {"one", "alice"} and len(places) <= ACCOUNT_PLACES


@contextlib.contextmanager
def _screen(url: str, path: str, address: str, cookie: str | None = None
            ) -> Iterator[ClientConnection]:
    """A screen from ``address`` (a loopback address of its own: another machine to the
    console), once it has been sent the view."""
    port = int(url.rstrip("/").rsplit(":", 1)[1])
    sock = socket.create_connection(("127.0.0.1", port), timeout=10,
                                    source_address=(address, 0))
    with connect(f"ws://127.0.0.1:{port}/{path}", sock=sock,
                 additional_headers={"Cookie": cookie} if cookie else None) as ws:
        next_of(ws, "view")
        yield ws


def _closed_why(ws: ClientConnection) -> tuple[int, str]:
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            ws.recv(timeout=10)
    assert closed.value.rcvd is not None
    return closed.value.rcvd.code, closed.value.rcvd.reason


def test_a_dealer_accounts_screens_from_four_machines_keep_the_supervisor_and_pit_in(
        locked_console: tuple[Rig, Console]) -> None:
    rig, console = locked_console
    cookies: dict[str, Any] = {}
    for name, credential in (("Dana", DEALER), ("Pat", PIT), ("Alice", SUPERVISORS["Alice"])):
        status, cookies[name] = sign_in(console.url, name, credential)
        assert status == 200 and cookies[name]
    with contextlib.ExitStack() as held:
        flood = [held.enter_context(_screen(console.url, "ws", f"127.0.0.{11 + n // 16}",
                                            cookies["Dana"]))
                 for n in range(ACCOUNT_PLACES)]
        late = held.enter_context(_screen(console.url, "ws", "127.0.0.20", cookies["Dana"]))
        assert _closed_why(flood[0]) == (1013, GAVE_WAY)    # Dana's own oldest gave way
        pit = held.enter_context(_screen(console.url, "ws/pit", "127.0.0.21", cookies["Pat"]))
        assert _closed_why(flood[1]) == (1013, GAVE_WAY)
        supervisor = held.enter_context(_screen(console.url, "ws", "127.0.0.22",
                                                cookies["Alice"]))
        for ws in (late, pit, supervisor):                  # all three still served
            assert ws.ping().wait(10)
    assert rig.ask({"command": "open"})["ok"]


def test_on_loopback_a_new_screen_takes_the_place_of_the_oldest_without_a_sign_in(
        table: TableFactory) -> None:
    rig, console = table("cali_lowball")
    url = console.url.replace("http://", "ws://") + "ws"
    with contextlib.ExitStack() as held:
        opened = [held.enter_context(_screen(console.url, "ws", "127.0.0.1"))
                  for _ in range(MAX_SCREENS_PER_ADDRESS)]
        held.enter_context(_screen(console.url, "ws", "127.0.0.1"))   # served: the dealer
        assert _closed_why(opened[0]) == (1013, GAVE_WAY)   # is never locked out
        status, cookie = sign_in(console.url, "Alice", SUPERVISORS["Alice"])
        assert status == 200 and cookie
        with connect(url, additional_headers={"Cookie": cookie}) as supervisor:
            assert next_of(supervisor, "session")["role"] == "supervisor"
            next_of(supervisor, "view")
        assert _closed_why(opened[1]) == (1013, GAVE_WAY)


def test_a_screen_is_closed_when_its_sign_in_ends_not_at_the_next_view(tmp_path: Path) -> None:
    """Nothing changes at the table meanwhile (no new view): the screen holds its place no
    longer than its sign-in. The console runs in this process (uvicorn in a thread), its
    sessions on a clock the test moves."""
    import hashlib
    import threading

    import uvicorn

    from controller.console.app import create_app
    from controller.console.config import Account
    from controller.console.link import TableLink
    from controller.console.sessions import Sessions

    rig = Rig(tmp_path, "cali_lowball")
    now = [1000.0]
    sessions = Sessions(1, {}, clock=lambda: now[0])
    stream = rig.stream
    assert stream.table_events and stream.table_replay
    link = TableLink(table_id=rig.daemon.table_id, spots=7, events=stream.table_events,
                     replay=stream.table_replay, commands=stream.commands, on_view=lambda view: None)
    app = create_app(link, "test console", sessions, signs_in=True, accounts={
        "Dana": Account(role="dealer", credential_sha256=hashlib.sha256(DEALER.encode())
                        .hexdigest())})
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]})
    thread.start()
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/"
        wait_for(lambda: server.started, "the console to listen")
        status, cookie = sign_in(url, "Dana", DEALER)
        assert status == 200 and cookie
        with _screen(url, "ws", "127.0.0.1", cookie) as ws:
            now[0] += 61.0                                 # the sign-in has ended
            assert _closed_why(ws) == (1008, "the sign-in has ended")
    finally:
        server.should_exit = True
        thread.join(30)
        listener.close()
        rig.close()

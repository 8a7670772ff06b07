"""A supervisor acts once: a sign-in on a screen covers one supervisor's command, at most two
minutes, and never past the start of the next hand; the journal names the supervisor and the
screen that asked.

Game protection, finding 5: after a supervisor voided a real misdeal on the dealer's screen,
on the next hand the dealer, seeing both hands, touched Void hand and it was accepted; the
journal said ``hand_voided {"by": "alice"}``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from websockets.sync.client import connect

from controller.console.sessions import AUTHORITY_S, Sessions

from tests.support.console import SUPERVISORS, ScreenFactory, TableFactory
from tests.support.rig import Rig
from tests.support.supervisor_screen import sign_in, start_hand
from tests.support.waits import wait_for

if TYPE_CHECKING:
    from playwright.sync_api import Page


def void_over_the_socket(url: str, page: Page) -> dict[str, Any]:
    """What the console answers a Void sent on the screen's own socket, with its cookie (as a
    dealer's script in the same browser would send it)."""
    cookies = "; ".join(f"{c['name']}={c['value']}" for c in page.context.cookies())
    with connect(url.replace("http://", "ws://") + "ws",
                 additional_headers={"Cookie": cookies, "Origin": url.rstrip("/")}) as socket:
        socket.send(json.dumps({"type": "command", "id": "void-again-0001",
                                "command": {"command": "void", "reason": "dealer alone"}}))
        while True:
            message = json.loads(socket.recv(timeout=10))
            if message["type"] in ("answer", "error"):
                return dict(message)


def next_hand(rig: Rig) -> None:
    """Wagers on spot 3, the lock, the first card (the table is open)."""
    rig.shoe.device.load(["Jd", "3h", "9s", "5c", "2c", "4d", "7h"])
    for wager in ("ante", "xtra_bonus"):
        assert rig.ask({"command": "place", "spot": 3, "wager": wager, "amount": 1000})["ok"]
    assert rig.ask({"command": "lock"})["ok"]
    rig.deal_one()


def test_a_supervisors_sign_in_covers_one_void_and_the_journal_names_the_screen(
        table: TableFactory, screen: ScreenFactory) -> None:
    rig, console = table("cali_lowball")
    start_hand(rig)
    rig.deal_one()
    page = screen(console.url)
    sign_in(page, console.url, "Alice", SUPERVISORS["Alice"])
    page.wait_for_selector('body[data-role="supervisor"] [data-action="void"]')
    page.fill("#void-reason", "misdeal: card face up")
    page.tap('[data-action="void"]')
    wait_for(lambda: rig.events("hand_voided"), "the void")
    page.wait_for_selector('body[data-role="pit"]')          # the authority is spent
    assert page.locator('[data-action="void"]').count() == 0
    accepted = [e.data for e in rig.events("command_accepted") if e.data.command == "void"]
    assert [(a.by, a.credential) for a in accepted] == [("Alice", "own")]
    assert accepted[0].asked_from.startswith("the dealer's screen at 127.0.0.1 on ")
    assert accepted[0].asked_from.endswith("(no dealer signed in)")
    next_hand(rig)                                  # the dealer, alone, on the next hand
    answer = void_over_the_socket(console.url, page)
    assert answer.get("ok") is not True
    assert "authority on this screen is over" in json.dumps(answer)
    assert len(rig.events("hand_voided")) == 1


def test_an_unused_sign_in_ends_when_the_next_hand_starts(table: TableFactory,
                                                          screen: ScreenFactory) -> None:
    rig, console = table("cali_lowball")
    assert rig.ask({"command": "open"})["ok"]
    page = screen(console.url)
    sign_in(page, console.url, "Bob", SUPERVISORS["Bob"])
    page.wait_for_selector('body[data-role="supervisor"]')
    next_hand(rig)
    page.wait_for_selector('body[data-role="pit"]')
    assert "authority on this screen is over" in json.dumps(void_over_the_socket(console.url,
                                                                                  page))
    assert rig.events("hand_voided") == []


def test_a_supervisors_authority_lasts_two_minutes_at_most() -> None:
    now = [1000.0]
    sessions = Sessions(15, {}, clock=lambda: now[0])
    token, session = sessions.open("Alice", "alice-credential-0123456789", dealer="Dana")
    assert sessions.authority(token) is session and session.dealer == "Dana"
    now[0] += AUTHORITY_S - 1
    assert sessions.authority(token) is session
    now[0] += 1
    assert sessions.authority(token) is None
    still = sessions.get(token)                     # what remains is the pit's view
    assert still is not None and still.role == "pit" and still.credential is None
    assert "two minutes" in still.ended

"""The dealer's screen and the pit's show only what the table shows: a hidden card is not in
the bytes the browser receives, and is drawn as a card back (docs/security.md).

Game protection, findings 1 and 4: the dealer's screen drew the dealer's three Three Card
Lowball cards and every player's as each was read, minutes before the rules show them (the
cards were in the WebSocket messages themselves); the pit's screen needed no sign-in on
loopback, and its recall of the hand in play returned every card.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.support.console import SIZES, SUPERVISORS, TableFactory, shot
from tests.support.rig import Rig
from tests.support.supervisor_screen import sign_in
from tests.support.waits import wait_for

if TYPE_CHECKING:   # the browser tests skip, not fail, where Playwright is missing
    from playwright.sync_api import Browser, Page

#: Spots 1 and 2 and the dealer, three cards each; spot 1 discards 9s, spot 2 stands; the
#: dealer (Kd Qd 7d: discards Kd Qd by the house way) draws 5h 6c.
DECK = ["9s", "2c", "Kd", "3h", "4h", "Qd", "Ac", "5s", "7d", "8h", "5h", "6c"]


def names_in(frames: list[str], deck: list[str]) -> set[str]:
    return {card for card in deck for frame in frames
            if re.search(rf"(?<![A-Za-z0-9]){card}(?![A-Za-z0-9])", frame)}


def watched_screen(browser: Browser, url: str, frames: list[str]) -> Page:
    """The dealer's screen at 1280x800, every WebSocket frame it receives kept in ``frames``."""
    width, height = SIZES["small"]
    page = browser.new_context(viewport={"width": width, "height": height},
                               has_touch=True).new_page()
    page.on("websocket", lambda socket: socket.on(
        "framereceived", lambda payload: frames.append(
            payload if isinstance(payload, str) else payload.decode())))
    page.goto(url)
    page.wait_for_selector("body[data-seq]")
    return page


def lock_two_spots(rig: Rig) -> None:
    rig.shoe.device.load(DECK)
    assert rig.ask({"command": "open"})["ok"]
    for spot in (1, 2):
        for wager in ("ante", "bonus"):
            assert rig.ask({"command": "place", "spot": spot, "wager": wager,
                            "amount": 1000})["ok"]
    assert rig.ask({"command": "lock"})["ok"]


def seq_shown(page: Page, rig: Rig) -> None:
    """Wait until the screen has drawn the table's last record."""
    last = rig.daemon.journal.last_seq
    page.wait_for_function("last => Number(document.body.dataset.seq) >= last", arg=last)


def test_the_dealers_screen_never_receives_a_hidden_card(table: TableFactory,
                                                         browser: Browser) -> None:
    rig, console = table("three_card_lowball")
    lock_two_spots(rig)
    frames: list[str] = []
    page = watched_screen(browser, console.url, frames)
    for _ in range(8):                              # the deal but its last card
        rig.deal_one()
    seq_shown(page, rig)
    assert names_in(frames, DECK) == set()
    assert page.locator('.spot[data-spot="2"] [data-card="back"]').count() == 3
    assert page.locator('#dealer-cards [data-card="back"]').count() == 2
    rig.deal_one()                                  # spot 1 is to draw: its cards, no other
    page.wait_for_selector('.spot[data-spot="1"] [data-card="9s"]')
    assert names_in(frames, DECK) == {"9s", "3h", "Ac"}
    assert page.locator('#dealer-cards [data-card="back"]').count() == 3
    shot(page, "dealer-draw-hidden-cards")
    page.tap('.spot[data-spot="1"] [data-card="9s"]')
    page.tap('[data-action="discard"]')
    wait_for(lambda: rig.events("decision_made"), "the discard")
    rig.deal_one()                                  # spot 1's replacement: face down
    page.wait_for_selector('.spot[data-spot="2"] [data-card="2c"]')
    assert names_in(frames, DECK) == {"9s", "3h", "Ac", "2c", "4h", "5s"}
    assert page.locator('.spot[data-spot="1"] [data-card="back"]').count() == 4
    assert page.locator('.spot[data-spot="1"] .discarded[data-card="back"]').count() == 1
    page.tap('.spot[data-spot="2"] [data-action="stand"]')
    page.wait_for_selector('#dealer-cards [data-card="Kd"]')   # the dealer's draw: shown
    assert "House way" in page.inner_text("#banner")
    rig.deal_one()
    rig.deal_one()
    wait_for(lambda: rig.events("hand_settled"), "the settlement")
    page.wait_for_selector('.spot[data-spot="1"] [data-card="8h"]')   # over: every card
    assert names_in(frames, DECK) == set(DECK)


def test_the_pit_signs_in_even_on_loopback_and_recalls_a_hand_once_it_is_over(
        table: TableFactory, browser: Browser) -> None:
    rig, console = table("three_card_lowball")
    lock_two_spots(rig)
    for _ in range(8):
        rig.deal_one()
    page = browser.new_context().new_page()
    page.goto(console.url + "pit")
    page.wait_for_url("**/supervisor?next=/pit")   # no sign-in, no pit
    ws_url = console.url.replace("http://", "ws://") + "ws/pit"
    with pytest.raises(InvalidStatus):             # nor its WebSocket
        connect(ws_url).close()
    frames: list[str] = []
    page.on("websocket", lambda socket: socket.on(
        "framereceived", lambda payload: frames.append(
            payload if isinstance(payload, str) else payload.decode())))
    sign_in(page, console.url, "Alice", SUPERVISORS["Alice"], then="/pit")
    page.wait_for_url("**/pit")
    page.wait_for_selector("body[data-seq]")
    hand_id = rig.events("hand_started")[0].hand_id
    cookie = {c["name"]: c["value"] for c in page.context.cookies()}
    with connect(ws_url, additional_headers={
            "Cookie": "; ".join(f"{k}={v}" for k, v in cookie.items())}) as socket:
        socket.send(json.dumps({"type": "recall", "hand_id": hand_id}))
        while (answer := json.loads(socket.recv(timeout=10)))["type"] not in ("hand", "error"):
            pass
    assert answer["type"] == "error" and "is in play" in answer["error"]
    assert names_in(frames, DECK) == set()
    shot(page, "pit-hand-in-play")

"""A supervisor signing in on the dealer's screen in Chromium."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.support.rig import Rig

if TYPE_CHECKING:   # the browser tests skip, not fail, where Playwright is missing
    from playwright.sync_api import Page


def sign_in(page: Page, url: str, name: str, credential: str, then: str = "/") -> None:
    page.goto(url + "supervisor" + ("" if then == "/" else f"?next={then}"))
    page.fill("#name", name)
    page.fill("#credential", credential)
    page.click("#submit")


def start_hand(rig: Rig) -> None:
    rig.shoe.device.load(["Jd", "3h", "9s", "5c", "2c", "4d", "7h"])
    assert rig.ask({"command": "open"})["ok"]
    for wager in ("ante", "xtra_bonus"):
        assert rig.ask({"command": "place", "spot": 3, "wager": wager, "amount": 1000})["ok"]
    assert rig.ask({"command": "lock"})["ok"]

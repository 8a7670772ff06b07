"""The dealer plays whole hands by touch on the console, in a real browser, against the real
daemon on the simulated shoe: the shoe deals when the screen says so, every other step is a
touch on the screen. What the screen shows is checked against what the table says."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.support.console import (ScreenFactory, TableFactory, deal_while_cards_are_due, place,
                                   shot)
from tests.support.rig import Rig
from tests.support.waits import wait_for

if TYPE_CHECKING:   # the browser tests skip, not fail, where Playwright is missing
    from playwright.sync_api import Page


def actions_on_screen(page: Page) -> set[str]:
    return set(page.eval_on_selector_all("[data-action]:not([hidden])",
                                         "nodes => nodes.map(n => n.dataset.action)"))


def test_a_three_card_hand_by_touch_with_a_discard(table: TableFactory,
                                                   screen: ScreenFactory) -> None:
    rig, console = table("three_card_lowball")
    rig.shoe.device.load(["Ac", "Kh", "3d", "5h", "9s", "2d", "4h", "7c", "8c", "6d"])
    page = screen(console.url)
    assert actions_on_screen(page) == {"open"}
    page.tap('[data-action="open"]')
    page.wait_for_selector("#tray:not([hidden])")
    assert "lock" not in actions_on_screen(page)             # nothing to lock yet
    place(page, 1, "ante", [500, 500])
    place(page, 1, "bonus", [500, 500])
    place(page, 1, "progressive", [100])
    assert page.inner_text('.spot[data-spot="1"] .wager[data-wager="ante"] b') == "$10.00"
    shot(page, "dealer-wagers")
    page.tap('[data-action="lock"]')
    wait_for(lambda: rig.status()["state"] != "OPEN", "the lock")
    page.wait_for_selector("#banner:has-text('Deal a card to spot 1')")
    assert actions_on_screen(page) == set()                  # the shoe deals: no button
    deal_while_cards_are_due(rig, page)
    page.wait_for_selector('.spot[data-spot="1"] [data-action="stand"]')
    assert actions_on_screen(page) == {"stand"}
    assert "Spot 1: stand or discard" in page.inner_text("#banner")
    hearts = page.locator('.spot[data-spot="1"] .card[data-card="Ac"]')
    assert "\u2663" in hearts.inner_text()                   # suit symbol
    page.tap('.spot[data-spot="1"] .card[data-card="9s"]')   # discard by touching the card
    shot(page, "dealer-discard")
    page.tap('.spot[data-spot="1"] [data-action="discard"]')
    # its draw keyed, the spot's cards are face down again until the showdown
    page.wait_for_selector('.spot[data-spot="1"] .decision:has-text("discard")')
    assert page.locator('.spot[data-spot="1"] [data-card="back"]').count() == 3
    deal_while_cards_are_due(rig, page, to_spots_only=True)
    way = rig.status()["hand"]["house_way"]
    assert way["discard"] == ["Kh"]                          # the dealer holds Kh 5h 2d
    page.wait_for_selector("#banner:has-text('House way: dealer discards K\u2665')")
    assert "K\u2665" in page.inner_text("#house-way")      # as printed on the card
    shot(page, "dealer-house-way")
    deal_while_cards_are_due(rig, page)
    for card in way["discard"]:
        page.wait_for_selector(f'#dealer-cards .card.discarded[data-card="{card}"]')
    panel = page.wait_for_selector('[data-payout="1"]')
    assert panel is not None
    page.wait_for_selector('.spot[data-spot="1"] .card.discarded[data-card="9s"]')
    settled = {(e.data.wager, e.data.net) for e in rig.events("wager_settled")}
    text = panel.inner_text()
    assert ("ante", 1000) in settled and "pay $10.00" in text
    awards = rig.events("progressive_awarded")
    assert awards and page.locator('[data-payout="1"] .award').count() == len(awards)
    total = sum(net for _, net in settled) + sum(a.data.amount for a in awards)
    assert f"pay ${total / 100:,.2f}" in page.inner_text('[data-payout="1"] .total')
    assert page.inner_text("#banner").startswith("Pay and collect")
    shot(page, "dealer-payouts")


def test_a_cali_hand_by_touch_with_a_fold(table: TableFactory, screen: ScreenFactory) -> None:
    rig, console = table("cali_lowball")
    rig.shoe.device.load(["Jd", "3h", "9s", "5c", "2c", "4d", "7h"])
    page = screen(console.url, "large")
    page.tap('[data-action="open"]')
    place(page, 1, "ante", [500, 500])
    place(page, 1, "xtra_bonus", [500, 500])
    # the dealer's screen has no card reader: a player carded at the table is named with
    # the wager (place SPOT WAGER AMOUNT PLAYER)
    assert rig.ask({"command": "place", "spot": 1, "wager": "lowdown_bonus", "amount": 500,
                    "player": "P-7 Zoë"})["ok"]
    page.wait_for_selector('.spot[data-spot="1"] .wager[data-wager="lowdown_bonus"]')
    page.tap('[data-action="lock"]')
    page.wait_for_selector("#banner:has-text('Deal a card')")
    deal_while_cards_are_due(rig, page)
    page.wait_for_selector('.spot[data-spot="1"] [data-action="check"]')
    assert actions_on_screen(page) == {"raise", "check"}
    page.tap('.spot[data-spot="1"] [data-action="check"]')
    wait_for(lambda: rig.events("decision_made"), "the check to reach the table")
    deal_while_cards_are_due(rig, page)
    page.wait_for_selector('.spot[data-spot="1"] [data-action="fold"]')
    assert actions_on_screen(page) == {"bet", "fold"}
    shot(page, "dealer-cali-decision-1920")
    page.tap('.spot[data-spot="1"] [data-action="fold"]')
    wait_for(lambda: len(rig.events("decision_made")) == 2, "the fold to reach the table")
    deal_while_cards_are_due(rig, page)
    panel = page.wait_for_selector('[data-payout="1"]')
    assert panel is not None
    wait_for(lambda: rig.events("hand_settled"), "the settlement")
    net = sum(e.data.net for e in rig.events("wager_settled"))
    assert net < 0 and f"collect ${-net / 100:,.2f}" in panel.inner_text()
    assert page.inner_text('[data-payout="1"] .player') == "P-7 Zoë"   # whom to collect from
    assert "fold" in page.inner_text('.spot[data-spot="1"] .decision')


def test_a_shoe_fault_shows_the_way_out_and_continue_resumes_the_hand(
        table: TableFactory, screen: ScreenFactory) -> None:
    rig, console = table("cali_lowball")
    rig.shoe.device.load(["Jd", "3h", "9s", "5c", "2c", "4d", "7h"])
    assert rig.ask({"command": "open"})["ok"]
    for wager in ("ante", "xtra_bonus"):
        assert rig.ask({"command": "place", "spot": 2, "wager": wager, "amount": 1000})["ok"]
    assert rig.ask({"command": "lock"})["ok"]
    page = screen(console.url)
    rig.deal_one()
    rig.shoe.device.jam()
    page.wait_for_selector("#banner.paused")
    assert "Continue" in page.inner_text("#banner")
    assert actions_on_screen(page) == {"continue"}
    shot(page, "dealer-fault")
    page.tap('[data-action="continue"]')
    wait_for(lambda: rig.status()["state"] != "PAUSED", "the hand to resume")
    page.wait_for_selector("#banner:not(.paused):has-text('Deal a card')")
    deal_while_cards_are_due(rig, page)
    page.wait_for_selector('.spot[data-spot="2"] [data-action="raise"]')

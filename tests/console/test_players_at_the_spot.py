"""The dealer names who plays each spot, and who deals, by touch: a player-card number keyed
in on the screen's keypad or read by a card reader that types like a keyboard, a badge for the
dealer. Before this only ``lowball-table dealer place 5 ante 1000 "Pat Smith"`` named a
player, so every hand dealt from the screen was unrated, and no hand named its dealer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.support.console import (ScreenFactory, TableFactory, deal_while_cards_are_due, place,
                                   shot)
from tests.support.rig import Rig
from tests.support.waits import wait_for

if TYPE_CHECKING:   # the browser tests skip, not fail, where Playwright is missing
    from playwright.sync_api import Page


def key_in(page: Page, digits: str) -> None:
    for digit in digits:
        page.tap(f'#keypad [data-key="{digit}"]')


def play_a_cali_hand_to_the_fold(rig: Rig, page: Page) -> None:
    page.tap('[data-action="lock"]')
    page.wait_for_selector("#banner:has-text('Deal a card')")
    deal_while_cards_are_due(rig, page)
    page.tap('.spot[data-spot="1"] [data-action="check"]')
    wait_for(lambda: rig.events("decision_made"), "the check to reach the table")
    deal_while_cards_are_due(rig, page)
    page.tap('.spot[data-spot="1"] [data-action="fold"]')
    deal_while_cards_are_due(rig, page)
    wait_for(lambda: rig.events("hand_settled"), "the settlement")


def test_a_player_keyed_in_at_the_spot_is_named_on_the_hands_records(
        table: TableFactory, screen: ScreenFactory) -> None:
    rig, console = table("cali_lowball")
    rig.shoe.device.load(["Jd", "3h", "9s", "5c", "2c", "4d", "7h"])
    page = screen(console.url)
    page.tap('[data-action="open"]')
    page.wait_for_selector("#tray:not([hidden])")
    page.tap('[data-seat="1"]')
    page.wait_for_selector("#keypad:not([hidden])")
    key_in(page, "44170098")
    shot(page, "dealer-player-keypad")
    page.tap("#keypad-ok")
    page.wait_for_selector('.spot[data-spot="1"] .seat[data-player="44170098"]')
    assert page.is_hidden("#keypad")
    # a card reader types the track with its sentinels, then Enter
    page.tap('[data-seat="3"]')
    page.keyboard.type(";6011000990139424=2512?")
    page.keyboard.press("Enter")
    page.wait_for_selector('.spot[data-spot="3"] .seat[data-player="6011000990139424"]')
    place(page, 1, "ante", [500, 500])
    place(page, 1, "xtra_bonus", [500, 500])
    play_a_cali_hand_to_the_fold(rig, page)
    # the names reach the stream where the command line's place ... PLAYER puts them
    (locked,) = rig.events("wagers_locked")
    assert {wager.player for wager in locked.data.wagers} == {"44170098"}
    assert {settled.data.player for settled in rig.events("wager_settled")} == {"44170098"}
    assert page.inner_text('[data-payout="1"] .player') == "44170098"
    # the player stays at the spot for the next hand, until the dealer changes it
    page.wait_for_selector('[data-seat="1"]')
    assert page.inner_text('[data-seat="1"]') == "44170098"
    page.tap('[data-seat="1"]')
    page.tap("#keypad-none")                                # Unrated
    page.wait_for_selector('.spot[data-spot="1"] .seat[data-player=""]')
    assert rig.status()["seated"] == {"3": "6011000990139424"}


def test_names_change_only_between_hands_and_a_bad_id_is_refused_in_words(
        table: TableFactory, screen: ScreenFactory) -> None:
    """An id the table would not take (markup, another script's lookalike letters) is refused
    where it is parsed, and says why; during a hand no name can be changed."""
    rig, console = table("cali_lowball")
    rig.shoe.device.load(["Jd", "3h", "9s", "5c", "2c", "4d", "7h"])
    page = screen(console.url)
    page.tap('[data-action="open"]')
    page.tap('[data-seat="2"]')
    page.keyboard.type("<b>Pat</b>")
    page.keyboard.press("Enter")
    page.wait_for_selector("#notice:has-text('player id')")
    assert rig.status()["seated"] == {}
    place(page, 1, "ante", [500, 500])
    place(page, 1, "xtra_bonus", [500, 500])
    page.tap('[data-action="lock"]')
    page.wait_for_selector("#banner:has-text('Deal a card')")
    assert page.locator("[data-seat]").count() == 0          # no name changes mid-hand
    refused = rig.ask({"command": "seat_player", "spot": 2, "player": "Pat"})
    assert not refused["ok"] and "between hands" in refused["error"]


def test_a_dealer_signs_in_by_badge_and_each_hand_names_its_dealer(
        table: TableFactory, screen: ScreenFactory) -> None:
    rig, console = table("cali_lowball")
    rig.shoe.device.load(["Jd", "3h", "9s", "5c", "2c", "4d", "7h"])
    page = screen(console.url, "large")
    assert page.inner_text("#dealer-name") == "No dealer signed in"
    page.tap('[data-seat="dealer"]')
    key_in(page, "0412")
    page.tap("#keypad-ok")
    page.wait_for_selector('#dealer-name[data-dealer="0412"]')
    page.tap('[data-action="open"]')
    place(page, 1, "ante", [500, 500])
    place(page, 1, "xtra_bonus", [500, 500])
    shot(page, "dealer-signed-in")
    play_a_cali_hand_to_the_fold(rig, page)
    assert [started.data.dealer for started in rig.events("hand_started")] == ["0412"]
    changes = [event.data for event in rig.events("command_accepted")
               if event.data.command == "change_dealer"]
    assert [change.arguments for change in changes] == ['{"dealer":"0412"}']

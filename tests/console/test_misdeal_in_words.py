"""A misdeal on the dealer's screen, in the dealer's words, and after the void what to give back
to whom, until the next hand; refusals in dollars.

Origin: the screen read ``Paused: card 9h while waiting for decisions of spots 2
(unexpected_card). call a supervisor to void the hand``; after ``Void hand`` the layout
cleared at once with no list of what to return to whom; a refusal read ``spot 2: ante 100 is
outside the table limits 500 to 100000``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from controller.core.card_faces import printed_card
from controller.core.vocabulary import FaultCode
from tests.support.console import SUPERVISORS, ScreenFactory, TableFactory, place, shot
from tests.support.rig import Rig
from tests.support.supervisor_screen import sign_in
from tests.support.waits import wait_for

if TYPE_CHECKING:   # the browser tests skip, not fail, where Playwright is missing
    from playwright.sync_api import Page

ROOT = Path(__file__).resolve().parents[2]
#: Spot 3 and the dealer's hole cards (spot, dealer, spot, dealer), then one card too many.
DECK = ["Jd", "3h", "9s", "5c", "Th", "4d", "7h"]
EXTRA = "Th"


def dealer_status(rig: Rig) -> str:
    """``lowball-table dealer status`` against the rig's table, as the dealer types it."""
    done = subprocess.run([sys.executable, "-m", "controller.cli.main", "dealer", "--connect",
                           rig.stream.commands, "status"], cwd=ROOT, capture_output=True,
                          text=True, timeout=30, env={"PYTHONIOENCODING": "utf-8",
                                                      "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return done.stdout


def no_internal_words(text: str) -> None:
    assert not any(code.value in text for code in FaultCode), text
    assert "seat" not in text.lower(), text


def test_a_misdeal_reads_in_words_and_the_void_says_what_to_give_back(
        table: TableFactory, screen: ScreenFactory) -> None:
    rig, console = table("cali_lowball")
    rig.shoe.device.load(DECK)
    assert rig.ask({"command": "open"})["ok"]
    page: Page = screen(console.url)

    # wagers that break the game's rule, placed from the chip tray: the lock refused in dollars
    for wager, chip in (("ante", 100), ("xtra_bonus", 500)):
        place(page, 3, wager, [chip])
    page.tap('[data-action="lock"]')
    page.wait_for_selector("#notice:not([hidden])")
    assert page.inner_text("#notice") == ("Refused: spot 3: Ante $1.00 and X-Tra Bonus $5.00 "
                                          "must be equal")
    for wager in ("ante", "xtra_bonus"):
        assert rig.ask({"command": "place", "spot": 3, "wager": wager, "amount": 1000,
                        "player": "Pat"})["ok"]
    assert rig.ask({"command": "lock"})["ok"]
    for _ in range(4):
        rig.deal_one()
    wait_for(lambda: rig.status()["state"] == "DECIDING", "spot 3's decision")
    rig.deal_one()                                   # one card too many
    page.wait_for_selector("#banner.paused")
    banner = page.inner_text("#banner")
    assert banner == ("Paused: an extra card came out of the shoe while spot 3 was deciding: "
                      "card (hidden), dealt to no one. Call a supervisor to burn the card or "
                      "void the hand")
    no_internal_words(banner)
    assert EXTRA not in banner and printed_card(EXTRA) not in banner   # the dealer's side
    shot(page, "dealer-misdeal")
    status = dealer_status(rig)
    assert "paused: an extra card came out of the shoe while spot 3 was deciding" in status
    no_internal_words(status)

    supervisor = screen(console.url)
    sign_in(supervisor, console.url, "Alice", SUPERVISORS["Alice"])
    supervisor.wait_for_selector('body[data-role="supervisor"] [data-action="void"]')
    supervisor.fill("#void-reason", f"extra card {EXTRA} on the draw")
    supervisor.tap('[data-action="void"]')
    wait_for(lambda: rig.events("hand_voided"), "the void")

    summary = ["Hand CALI-01-000001 voided by Alice: give every wager back",
               "Spot 3 (Pat): return $20.00 (Ante $10.00, X-Tra Bonus $10.00)",
               "Cards: all 5 cards of the hand to the discard rack"]
    page.wait_for_selector("#void-summary:not([hidden])")
    assert page.inner_text("#void-summary").splitlines() == summary
    assert EXTRA not in page.inner_text("body")   # the reason named it; the summary does not
    shot(page, "dealer-void-summary")
    status = dealer_status(rig)
    assert all(line in status for line in summary), status
    assert EXTRA not in status and printed_card(EXTRA) not in status

    # the summary stays while the next hand's wagers go down, and goes with its lock
    rig.shoe.device.load(["2c", "3d", "4s", "5h"])
    for wager in ("ante", "xtra_bonus"):
        assert rig.ask({"command": "place", "spot": 1, "wager": wager, "amount": 500})["ok"]
    page.wait_for_selector('.spot[data-spot="1"] [data-wager="ante"]')
    assert page.is_visible("#void-summary")
    assert "Spot 3 (Pat): return $20.00" in dealer_status(rig)
    assert rig.ask({"command": "lock"})["ok"]
    page.wait_for_selector("#void-summary[hidden]", state="attached")
    assert "voided" not in dealer_status(rig)

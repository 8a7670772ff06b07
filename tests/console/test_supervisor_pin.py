"""A supervisor signs in on the touch screen by touching her name and keying in her PIN.
Before, the sign-in was a 43-character credential typed on a touch screen, and the demo made
one it never showed. The console's lock-outs hold for PINs as for credentials."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from controller.console.config import write_console_config
from tests.support.console import Console, shot
from tests.support.pins import PIN, SUPERVISORS, PinRig

if TYPE_CHECKING:   # the browser tests skip, not fail, where Playwright is missing
    from playwright.sync_api import Browser, Page


@pytest.fixture
def console(tmp_path: Path) -> Iterator[Console]:
    rig = PinRig(tmp_path, "three_card_lowball", {"Sam Reyes": PIN}, supervisors=SUPERVISORS)
    served = Console(write_console_config(tmp_path, rig.daemon.loaded, supervisors=SUPERVISORS,
                                          with_pins=("Sam Reyes",)))
    yield served
    served.close()
    rig.close()


def sign_in_page(browser: Browser, url: str, width: int, height: int) -> Page:
    context = browser.new_context(viewport={"width": width, "height": height}, has_touch=True)
    page = context.new_page()
    page.goto(f"{url}supervisor")
    page.wait_for_selector('[data-supervisor="Sam Reyes"]')
    return page


def key_in(page: Page, digits: str) -> None:
    for digit in digits:
        page.tap(f'#pin-keys [data-key="{digit}"]')


@pytest.mark.parametrize("width,height", [(1024, 768), (1920, 1080)])
def test_a_supervisor_signs_in_by_touching_her_name_and_keying_her_pin(
        browser: Browser, console: Console, width: int, height: int) -> None:
    page = sign_in_page(browser, console.url, width, height)
    page.tap('[data-supervisor="Sam Reyes"]')
    assert page.input_value("#name") == "Sam Reyes"
    key_in(page, PIN)
    shot(page, f"supervisor-pin-{width}")
    for selector in ("#submit", '#pin-keys [data-key="0"]', '[data-supervisor="Sam Reyes"]'):
        box = page.locator(selector).bounding_box()
        assert box is not None and box["y"] + box["height"] <= height, selector
    page.tap("#submit")
    page.wait_for_selector('body[data-role="supervisor"]')
    assert "Supervisor Sam Reyes" in page.inner_text("#supervisor")
    page.context.close()


def test_wrong_pins_lock_the_screen_out_as_wrong_credentials_do(
        browser: Browser, console: Console) -> None:
    page = sign_in_page(browser, console.url, 1280, 800)
    for guess in ("111111", "222222", "333333", "444444", "555555"):
        page.tap('[data-supervisor="Sam Reyes"]')
        key_in(page, guess)
        page.tap("#submit")
        page.wait_for_selector("#error:has-text('Refused')")
        page.eval_on_selector("#error", "node => { node.textContent = ''; }")
    page.tap('[data-supervisor="Sam Reyes"]')
    key_in(page, PIN)                        # the right PIN, too late: the screen is locked
    page.tap("#submit")
    page.wait_for_selector("#error:has-text('locked for')")
    page.context.close()

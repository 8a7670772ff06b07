"""The console's tests: Chromium (Playwright) and the console run as its own process beside a
:class:`tests.support.rig.Rig`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from bench import processes
from controller.console.config import write_console_config

from tests.support.rig import Rig

if TYPE_CHECKING:   # the browser tests skip, not fail, where Playwright is missing
    from playwright.sync_api import Browser, BrowserContext, Page


CHROMIUM = os.environ.get("LOWBALL_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


HOW_TO_GET_CHROMIUM = ("the browser tests need Chromium from Debian's packages: "
                       "sudo apt-get install --no-install-recommends chromium (or sudo make deps)")


SIZES = {"small": (1280, 800), "large": (1920, 1080)}


#: The supervisors of the test table: name -> credential.
SUPERVISORS = {"Alice": "alice-credential-0123456789", "Bob": "bob-credential-9876543210"}


#: The console's pit account (the pit's screen asks for a sign-in even on loopback).
PIT_ACCOUNT = ("Piper", "piper-pit-credential-0123")


#: Where the browser tests save the screenshots docs/ shows (``make screenshots``); unset, none.
SCREENSHOTS = os.environ.get("LOWBALL_SCREENSHOTS")


#: The ``table`` fixture: make(game, pit=False) -> (rig, console).
TableFactory = Callable[..., "tuple[Rig, Console]"]


#: The ``screen`` fixture: make(url, size) -> the dealer's screen.
ScreenFactory = Callable[..., "Page"]


def shot(page: Page, name: str) -> None:
    """Keep what the screen shows now as ``NAME.png`` when screenshots are asked for."""
    if SCREENSHOTS:
        page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}.png"))


def write_configs(tmp_path: Path, rig: Rig, pit: bool = False) -> Path:
    """The console's config for the rig's table (its id, endpoints and supervisors; ``pit``:
    and the pit's account, :data:`PIT_ACCOUNT`)."""
    return write_console_config(tmp_path, rig.daemon.loaded, supervisors=rig.supervisors,
                                accounts={PIT_ACCOUNT[0]: ("pit", PIT_ACCOUNT[1])} if pit
                                else None)


class Console:
    """``lowball-table console`` in its own process; :attr:`url` once it listens."""

    def __init__(self, config: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "controller.cli.main", "console", "--config", str(config),
             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.process.stdout is not None and self.process.stderr is not None
        line = self.process.stdout.readline()
        if not line.startswith("console: "):
            self.process.kill()
            raise AssertionError(f"the console did not start: {line}"
                                 f"{self.process.stderr.read()}")
        self.url = line.split()[1]

    def close(self) -> None:
        processes.stop(self.process, 10)
        # The console's log, shown with a failing test's output.
        assert self.process.stdout is not None and self.process.stderr is not None
        sys.stdout.write(self.process.stderr.read())
        self.process.stdout.close()
        self.process.stderr.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not os.path.exists(CHROMIUM):
        pytest.skip(HOW_TO_GET_CHROMIUM)
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM,
                                             args=["--no-sandbox", "--disable-gpu"])
        yield browser
        browser.close()


@pytest.fixture
def table(tmp_path: Path) -> Iterator[TableFactory]:
    """make(game, pit=False) -> (rig, console): a daemon on the simulators and its console
    (``pit``: with the pit's account)."""
    made: list[Rig | Console] = []

    def make(game: str, pit: bool = False) -> tuple[Rig, Console]:
        rig = Rig(tmp_path, game, supervisors=SUPERVISORS)
        made.append(rig)
        console = Console(write_configs(tmp_path, rig, pit))
        made.append(console)
        return rig, console

    yield make
    for thing in reversed(made):
        thing.close()


@pytest.fixture
def screen(browser: Browser) -> Iterator[ScreenFactory]:
    """make(url, size) -> a page showing the dealer's screen, once the table's view is on it."""
    contexts: list[BrowserContext] = []

    def make(url: str, size: str = "small") -> Page:
        width, height = SIZES[size]
        context = browser.new_context(viewport={"width": width, "height": height},
                                      has_touch=True)
        contexts.append(context)
        page = context.new_page()
        page.goto(url)
        page.wait_for_selector("body[data-seq]")
        return page

    yield make
    for context in contexts:
        context.close()


def deal_while_cards_are_due(rig: Rig, page: Page, *, to_spots_only: bool = False) -> None:
    """The shoe deals each card the table asks for (``to_spots_only``: up to the dealer's
    first); each must reach the screen, face up or, hidden, as a card back."""
    while (state := rig.status())["hand"] is not None and \
            state["hand"]["next"]["kind"] == "card" and \
            not (to_spots_only and state["hand"]["next"]["to"] == "dealer"):
        held = sum(len(cards) for cards in state["hand"]["cards"].values())
        rig.deal_one()
        page.wait_for_function(
            "held => document.querySelectorAll('#spots .card, #dealer-cards .card, "
            "#community .card').length > held || document.querySelector('[data-payout]')",
            arg=held)


def place(page: Page, spot: int, wager: str, chips: list[int]) -> None:
    # A spot is chosen only while the screen takes wagers: a touch before the tray is shown
    # (the table's opening not on the screen yet) chooses nothing, as for a dealer.
    page.wait_for_selector("#tray:not([hidden])")
    page.tap(f'.spot[data-spot="{spot}"]')
    page.tap(f'[data-wager-kind="{wager}"]')
    for chip in chips:
        page.tap(f'[data-chip="{chip}"]')
    page.tap("#place")
    page.wait_for_selector(f'.spot[data-spot="{spot}"] .wager[data-wager="{wager}"]')

from collections.abc import Callable
from typing import Any

import pytest

from controller import build_info
from controller.core.cards import parse_cards
from controller.core.games import Decision
from controller.core.games.base import Hand
from controller.core.table_settings import GameSetup
from controller.settings.table_config import (
    LoadedConfig,
    Rules,
    default_config_path,
    load_config,
)

#: The ``cali_setup`` / ``three_card_setup`` fixtures: rules (and a paytable) -> a setup.
SetupFactory = Callable[..., GameSetup]


def pytest_configure(config: pytest.Config) -> None:
    # A compiled module older than its source would be tested instead of the source.
    stale = build_info.stale_compiled_modules()
    if stale:
        raise pytest.UsageError(
            f"compiled game core older than its source: {', '.join(stale)}. "
            f"Run `make test` (it rebuilds), or `make compiled` / `make pure` first.")


def pytest_report_header(config: pytest.Config) -> str:
    return build_info.describe()


@pytest.fixture(scope="session")
def cali_config() -> LoadedConfig:
    return load_config(default_config_path("cali_lowball"))


@pytest.fixture(scope="session")
def three_card_config() -> LoadedConfig:
    return load_config(default_config_path("three_card_lowball"))


@pytest.fixture
def cali_setup(cali_config: LoadedConfig) -> SetupFactory:
    def make(**rules: Any) -> GameSetup:
        return cali_config.setup(rules=Rules(**rules))
    return make


@pytest.fixture
def three_card_setup(three_card_config: LoadedConfig) -> SetupFactory:
    def make(paytable: str = "paytable-1", **rules: Any) -> GameSetup:
        return three_card_config.setup(paytable=paytable, rules=Rules(**rules))
    return make


def play(hand: Hand, shoe: str, decisions: dict[int, list[str]] | None = None
         ) -> dict[tuple[int, str], tuple[str, int]]:
    """Drive ``hand`` to settlement: cards from ``shoe``, decisions per seat in order."""
    cards = list(parse_cards(shoe))
    pending = {seat: list(texts) for seat, texts in (decisions or {}).items()}
    while (step := hand.next_step()).kind != "settled":
        if step.kind == "card":
            hand.deal(cards.pop(0))
        else:
            seat = step.seats[0]
            hand.decide(seat, Decision.parse(pending[seat].pop(0)))
    assert not cards, f"unused cards {cards}"
    return {(s.seat, s.wager): (s.result, s.net) for s in hand.settlements()}

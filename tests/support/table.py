"""The pure table and engines driven without a daemon (:class:`Driver`, :func:`play`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from controller.core.cards import parse_cards, parse_card
from controller.core.games import Decision
from controller.core.games.base import Hand
from controller.core.table_events import StateChanged
from controller.core.table_settings import GameSetup
from controller.core.table_states import TableState
from controller.settings.table_config import (
    LoadedConfig,
    Rules,
    default_config_path,
    load_config,
    build_table,
)
from controller.stream.table_commands import parse_command


#: The ``cali_setup`` / ``three_card_setup`` fixtures: rules (and a paytable) -> a setup.
SetupFactory = Callable[..., GameSetup]


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


class Driver:
    """Feeds a table and keeps every event, as the journal would."""

    def __init__(self, game: str = "cali_lowball", loaded: LoadedConfig | None = None,
                 actor: str = "alice") -> None:
        self.table = build_table(loaded or load_config(default_config_path(game)))
        #: who the commands are from (the name the table journals beside a supervisor's)
        self.actor = actor
        #: Any: each test reads the fields of the kinds of event it expects.
        self.events: list[Any] = []
        #: the simulated shoe's card count (every card dealt counts one)
        self.count = 0
        #: (number of events, the table's snapshot) after each input: the journal commits an
        #: input with its effects in one transaction, so a power cut leaves one of these.
        self.checkpoints = [(0, self.table.snapshot())]

    def record(self, events: list[Any]) -> list[Any]:
        self.events += events
        self.checkpoints.append((len(self.events), self.table.snapshot()))
        return events

    def do(self, role: str = "dealer", **command: Any) -> list[Any]:
        return self.record(self.table.command(parse_command(command), self.actor, role))

    def card(self, text: str, seq: int | None = None, count: int | None = None) -> list[Any]:
        if count is None:
            self.count += 1
            count = self.count
        return self.record(self.table.shoe_card(parse_card(text), seq or len(self.events) % 256,
                                                "", count))

    def cards(self, texts: str) -> list[Any]:
        events = []
        for text in texts.split():
            events += self.card(text)
        return events

    def states(self) -> list[TableState]:
        return [e.state for e in self.events if type(e) is StateChanged]


def cali_hand(driver: Driver, **extra: Any) -> list[Any]:
    driver.do(command="open")
    for spot in (1, 2):
        driver.do(command="place", spot=spot, wager="ante", amount=1000)
        driver.do(command="place", spot=spot, wager="xtra_bonus", amount=1000)
    return driver.do(command="lock", **extra)

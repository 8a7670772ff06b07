"""Scenario files: one hand as JSON, replayed through the same engine the table runs.

A scenario is how a test lab, a surveillance officer or a test suite replays a hand::

    {"game": "cali_lowball", "paytable": "example",
     "seats": {"1": {"ante": 1000, "xtra_bonus": 1000, "lowdown_bonus": 500},
               "4": {"ante": 2500, "xtra_bonus": 2500}},
     "decisions": {"1": ["raise"], "4": ["check", "bet"]},
     "shoe": ["As", "7d", "Kc", "2h", "9s", "3c", "4d", "Jh", "5s"]}

Optional: ``rules`` (overrides the table's variant switches) and ``meter`` (the jackpot meter
before the hand, in cents). ``shoe`` lists every card in the order it leaves the shoe; the
deal order assigns each one. Anything malformed raises :class:`ScenarioError` naming the field
(``shoe[7]``, ``seats.4``, ``decisions.4[1]``) and no settlement is produced.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, NoReturn, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from controller.core.cards import Card, CardError, find_duplicate, parse_card
from controller.core.events import (
    DEALER,
    HandShown,
    HouseWay,
    MeterSettled,
    ProgressiveAwarded,
    Event,
    HandSettled,
    WagerSettled,
)
from controller.core.games import (
    ENGINES,
    Decision,
    Hand,
    IllegalAction,
    ThreeCardLowballHand,
    WagerError,
)
from controller.core.games.base import seat_name
from controller.settings.table_config import Game, JackpotSplit, LoadedConfig, Rules
from controller.settings.validation import Cents, InputError, validate


def _card(value: Any) -> Card:
    try:
        return parse_card(value)
    except CardError as error:
        raise ValueError(str(error)) from None


CardText = Annotated[Card, BeforeValidator(_card)]


def _seat_key(value: Any) -> str:
    if not (isinstance(value, str) and value in {"1", "2", "3", "4", "5", "6", "7"}):
        raise ValueError("spots are numbered \"1\" to \"7\"")
    return value


SeatKey = Annotated[str, BeforeValidator(_seat_key)]


class RulesOverride(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    xtra_bonus_loses_on_loss: bool | None = None
    lowdown_bonus_survives_fold: bool | None = None
    burn_before_flop: bool | None = None
    jackpot_split: JackpotSplit | None = None

    def applied_to(self, rules: Rules) -> Rules:
        return rules.model_copy(update=self.model_dump(exclude_none=True))


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    game: Game
    paytable: Annotated[str, Field(min_length=1)]
    seats: Annotated[dict[SeatKey, dict[str, Cents]], Field(min_length=1)]
    decisions: dict[SeatKey, list[str]] = {}
    shoe: list[CardText]
    rules: RulesOverride = RulesOverride()
    meter: Cents | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        duplicate = find_duplicate(self.shoe)
        if duplicate is not None:
            first = self.shoe.index(duplicate)
            second = self.shoe.index(duplicate, first + 1)
            raise ValueError(f"shoe: duplicate card {duplicate} at shoe[{first}] and "
                             f"shoe[{second}]")
        if self.meter is not None and not ENGINES[self.game].HAS_PROGRESSIVE:
            raise ValueError("meter: only Three Card Lowball has a progressive meter")
        return self


class ScenarioError(InputError):
    """A scenario that cannot be replayed; the message names the field."""


def load_scenario(path: Path | str) -> Scenario:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScenarioError(str(path), ["file not found"]) from None
    except (OSError, UnicodeDecodeError) as error:
        raise ScenarioError(str(path), [f"cannot be read: {error}"]) from None
    except json.JSONDecodeError as error:
        raise ScenarioError(str(path), [f"not valid JSON: {error}"]) from None
    return parse_scenario(data, str(path))


def parse_scenario(data: Any, source: str = "scenario") -> Scenario:
    try:
        return validate(Scenario, data, source)
    except InputError as error:
        raise ScenarioError(source, error.problems) from None


def replay(scenario: Scenario, config: LoadedConfig, source: str = "scenario") -> Hand:
    """Play ``scenario`` through the engine; return the settled hand."""

    def fail(field: str, message: str) -> NoReturn:
        raise ScenarioError(source, [f"{field}: {message}"])

    try:
        setup = config.setup(scenario.game, scenario.paytable,
                             scenario.rules.applied_to(config.config.rules))
    except InputError as error:
        fail("paytable", error.problems[0].removeprefix("paytable: "))
    wagers = {int(seat): amounts for seat, amounts in scenario.seats.items()}
    for key in scenario.decisions:
        if key not in scenario.seats:
            fail(f"decisions.{key}", f"seat {key} has no wagers in 'seats'")
    engine = ENGINES[scenario.game]
    try:
        hand = engine.start(setup, wagers, setup.progressive.seed if scenario.meter is None
                            else scenario.meter)
    except WagerError as error:
        fail(f"seats.{error.seat}" if type(error.seat) is int and error.seat >= 0 else "seats",
             str(error))

    shoe = iter(enumerate(scenario.shoe))
    pending = {int(seat): list(enumerate(texts)) for seat, texts in scenario.decisions.items()}
    while True:
        step = hand.next_step()
        if step.kind == "settled":
            break
        if step.kind == "card":
            index, card = next(shoe, (None, None))
            if card is None:
                fail("shoe", f"ran out after {len(scenario.shoe)} cards; the next card was due "
                             f"to {seat_name(step.to)} ({hand.phase})")
            try:
                hand.deal(card)
            except IllegalAction as error:
                fail(f"shoe[{index}]", str(error))
            continue
        seat = step.seats[0]
        if not pending.get(seat):
            fail(f"decisions.{seat}", f"seat {seat} must decide {hand.phase} "
                                      f"({' or '.join(step.options)}) but has no decision left")
        index, text = pending[seat].pop(0)
        field = f"decisions.{seat}[{index}]"
        try:
            hand.decide(seat, Decision.parse(text))
        except (ValueError, IllegalAction) as error:
            fail(field, str(error))
    left = len(scenario.shoe) - hand.cards_used
    if left:
        fail("shoe", f"{left} card{'s' if left > 1 else ''} left over after the hand settled "
                     f"(the hand used {hand.cards_used} of {len(scenario.shoe)})")
    for seat, remaining in pending.items():
        if remaining:
            index, text = remaining[0]
            fail(f"decisions.{seat}[{index}]", f"{text!r} was never asked for")
    return hand


def settlement_report(hand: Hand) -> dict[str, Any]:
    """The settlement of a settled hand as plain data (``replay --json`` prints this)."""
    hands: dict[str, Any] = {}
    for event in hand.history:
        if type(event) is HandShown:
            entry: dict[str, Any] = {"cards": [str(card) for card in event.cards],
                                     "hand_class": event.hand_class}
            if event.folded:
                entry["folded"] = True
            hands["dealer" if event.to == DEALER else str(event.to)] = entry
        elif type(event) is HouseWay:
            house_way = {"discard": [str(card) for card in event.discard], "rule": event.rule}
    if isinstance(hand, ThreeCardLowballHand):
        for seat in hand.seats:
            hands[str(seat)]["dealt"] = [str(card) for card in hand.dealt[seat]]
            hands[str(seat)]["discarded"] = [str(card) for card in hand.discarded[seat]]
        hands["dealer"]["dealt"] = [str(card) for card in hand.dealt[DEALER]]
        hands["dealer"]["house_way"] = house_way
    meter = next((event for event in hand.history if type(event) is MeterSettled), None)
    settled = hand.history[-1]
    assert type(settled) is HandSettled, "the hand is not settled"
    return {
        "game": hand.game,
        "paytable": hand.setup.paytable_name,
        "hand": hands,
        "settlements": [_plain(event) for event in hand.history if type(event) is WagerSettled],
        "progressive": [_plain(event) for event in hand.history
                        if type(event) is ProgressiveAwarded],
        "meter": _plain(meter) if meter else None,
        "house_result": settled.house_result,
    }


def _plain(event: Event) -> dict[str, Any]:
    return event._asdict()

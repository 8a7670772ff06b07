"""Every refusal, fault, alarm and prompt the table writes is in a dealer's words: money in
dollars, never a bare figure of cents; "spot", never "seat"; no internal code.

Origin: a dealer read ``Refused: spot 2: ante 100 is outside the table limits 500 to
100000``, ``seat 2: Ante 2500 and Bonus 500 must be equal`` and ``Paused: card 9h while
waiting for decisions of spots 2 (unexpected_card). call a supervisor to void the hand``.

The texts are collected by driving the table systematically, not by picking a few: every
command the command channel knows (:data:`controller.stream.table_commands.COMMAND_CLASSES`),
with amounts below, inside and above every limit, by the dealer and by a supervisor, in every
state a table reaches (closed, open, each step of a hand, each fault and misdeal the shoe and
the devices can cause, settled, a jackpot pending); every shoe fault code; every device lost,
back and restarted; and the engines' own wager rules over every wager key.
"""

from __future__ import annotations

import re
from functools import cache, partial
from collections.abc import Callable, Iterator
from typing import Any, get_args

import pytest

from controller.console.board import banner
from controller.core.cards import DECK
from controller.core.games import IllegalAction, WagerError
from controller.core.table import CommandError
from controller.core.table_events import Alarm, CommandRefused, Fault, LockRefused
from controller.core.vocabulary import Device, DeviceCondition, FaultCode, ShoeFaultCode
from controller.settings.validation import InputError
from controller.stream.table_commands import COMMAND_CLASSES, parse_command
from controller.settings.table_config import LoadedConfig, default_config_path, load_config
from tests.support.table import Driver


@cache
def config(game: str) -> LoadedConfig:
    return load_config(default_config_path(game))


def fresh(game: str) -> Driver:
    return Driver(game, config(game))

#: Amounts that probe every limit (cents): under the minimum, at it, odd cents, the
#: progressive's own, over every maximum, absurd. Each is distinctive enough that finding it
#: bare in a text means a cents figure reached a person.
PROBES = (1, 99, 100, 123, 499, 500, 501, 1000, 1234, 2500, 9999, 10000, 10001, 12345,
          99999, 100000, 100001, 123456, 500000, 10**9, 10**12)
#: Figures in the table's own settings that a text may name (the limits, the meter's seed).
SETTINGS = (500, 100000, 10000, 100, 500000)
#: A number written in a text, not part of a dollar amount, a word, an id or a wire value
#: whose unit is named ("2500 cents").
BARE_NUMBER = re.compile(r"(?<![$\d.,A-Za-z-])(\d[\d,]*)(?![\d.,]*\d)(?! cents)(?![A-Za-z-])")
INTERNAL_CODES = tuple(code.value for code in FaultCode)


def bare_cents(text: str) -> list[str]:
    """The figures from 100 up written bare in ``text``: every probe and setting from $1.00
    up is one (a figure under 100 is a spot, a card count, a rule's number)."""
    return [match[1] for match in BARE_NUMBER.finditer(text)
            if int(match[1].replace(",", "")) >= 100]


class Texts:
    """Every text a person may read that the table wrote, with where it came from."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def keep(self, where: str, events: list[Any], driver: Driver | None = None) -> None:
        for event in events:
            if type(event) is CommandRefused:
                self.seen.setdefault(event.reason, f"{where}: refused {event.command}")
            elif type(event) is LockRefused:
                for problem in event.problems:
                    self.seen.setdefault(problem, f"{where}: lock refused")
            elif type(event) in (Fault, Alarm):
                self.seen.setdefault(event.detail, f"{where}: {type(event).__name__}")
        if driver is not None:
            for side in (False, True):
                snapshot = driver.table.snapshot(table_side=side)
                self.seen.setdefault(snapshot["expecting"], f"{where}: prompt")
                self.seen.setdefault(banner(snapshot), f"{where}: banner")


def requests(game: str) -> Iterator[dict[str, Any]]:
    """Every command the channel knows, with each probe amount and a spot and wager each."""
    wagers = ("ante", "bonus", "progressive", "xtra_bonus", "lowdown_bonus", "raise", "nope")
    for cls in COMMAND_CLASSES:
        name = get_args(cls.model_fields["command"].annotation)[0]
        fields = set(cls.model_fields) - {"command"}
        if "amount" in fields and "spot" in fields:
            for amount in PROBES:
                for wager in wagers:
                    yield {"command": name, "spot": 1 + amount % 7, "wager": wager,
                           "amount": amount}
        elif "amount" in fields:
            for amount in PROBES:
                for sign in (1, -1):
                    yield {"command": name, "amount": sign * amount, "reason": "probe"}
        elif "spot" in fields and "decision" in fields:
            for decision in ("raise", "check", "bet", "fold", "stand", "discard:As",
                             "discard:As,Kd,Qh", "jump"):
                yield {"command": name, "spot": 1, "decision": decision}
                yield {"command": name, "spot": 6, "decision": decision}
        elif "spot" in fields:
            yield {"command": name, "spot": 1, "wager": "ante"}
        elif "seq" in fields:
            yield {"command": name, "seq": 1}
        else:
            yield {"command": name, **({"reason": "probe"} if "reason" in fields else {})}


def probe(texts: Texts, where: str, make: Callable[[], Driver]) -> None:
    """Every request, by the dealer and a supervisor, against a fresh table in one state."""
    state = make()
    texts.keep(where, [], state)
    for request in requests(state.table.game):
        try:
            command = parse_command(request)
        except InputError:
            continue   # the wire's own refusals: test_wire_refusals_name_cents
        for role in ("dealer", "supervisor"):
            try:
                state.table.verify(command, role)   # the refusal's reason, changing nothing
            except (CommandError, IllegalAction, WagerError) as error:
                texts.seen.setdefault(str(error), f"{where}: refused {request['command']}")
                continue
            # taken: carried out on a table of its own in this state (its effects' texts)
            driver = make()
            texts.keep(where, driver.table.command(command, "probe", role), driver)


def opened(game: str) -> Driver:
    driver = fresh(game)
    driver.do(command="open")
    return driver


def with_wagers(game: str, spots: tuple[int, ...] = (1, 2), amount: int = 1000) -> Driver:
    driver = opened(game)
    second = "bonus" if game == "three_card_lowball" else "xtra_bonus"
    for spot in spots:
        driver.do(command="place", spot=spot, wager="ante", amount=amount, player=f"P{spot}")
        driver.do(command="place", spot=spot, wager=second, amount=amount)
        if game == "three_card_lowball":
            driver.do(command="place", spot=spot, wager="progressive", amount=100)
    return driver


def locked(game: str) -> Driver:
    driver = with_wagers(game)
    driver.do(command="lock")
    return driver


def dealt(game: str, cards: int) -> Callable[[], Driver]:
    def make() -> Driver:
        driver = locked(game)
        driver.cards(" ".join(str(card) for card in DECK[-cards:]))
        return driver
    return make


def deciding(game: str) -> Callable[[], Driver]:
    return dealt(game, 9 if game == "three_card_lowball" else 6)


def paused(game: str, cause: Callable[[Driver], list[Any]], at: Callable[[], Driver],
           texts: Texts, where: str) -> Callable[[], Driver]:
    def make() -> Driver:
        driver = at()
        texts.keep(where, driver.record(cause(driver)), driver)
        return driver
    return make


GAMES = ("cali_lowball", "three_card_lowball")


Cause = Callable[[Driver], list[Any]]


def shoe_faults() -> Iterator[Cause]:
    """Each way a hand pauses: every shoe fault code, every device lost, back or restarted, a
    duplicate, an extra card, counts skipped, the count going back, a conflict, a card during
    a pause."""
    def fault(code: ShoeFaultCode) -> Cause:
        return lambda d: d.table.shoe_fault(code, "shoe's own text")

    def status(device: Device, condition: DeviceCondition) -> Cause:
        return lambda d: d.table.device_status(device, condition, "cable out")

    yield from (fault(code) for code in ShoeFaultCode)
    yield from (status(device, condition) for device in Device for condition in DeviceCondition)
    yield lambda d: d.card(str(DECK[-1]))                     # a duplicate
    yield lambda d: d.card(str(DECK[0]))                      # an extra card
    yield lambda d: d.card(str(DECK[1]), count=d.count + 3)   # counts skipped
    yield lambda d: d.card(str(DECK[2]), count=1)             # the count went back
    yield lambda d: d.card(str(DECK[3]), count=d.count)       # a conflict
    yield lambda d: [*d.table.shoe_fault(ShoeFaultCode.DOOR, ""),
                     *d.card(str(DECK[4]))]                    # a card while paused


@pytest.fixture(scope="module")
def every_text() -> dict[str, str]:
    texts = Texts()
    for game in GAMES:
        probe(texts, f"{game} closed", partial(fresh, game))
        probe(texts, f"{game} open", partial(opened, game))
        probe(texts, f"{game} wagers down", partial(with_wagers, game))
        probe(texts, f"{game} one player on five spots",
              partial(with_wagers, game, (1, 2, 3, 4, 5)))
        probe(texts, f"{game} locked", partial(locked, game))
        for cards in (1, 4):
            probe(texts, f"{game} {cards} cards dealt", dealt(game, cards))
        probe(texts, f"{game} deciding", deciding(game))
        for at_name, at in (("dealing", dealt(game, 2)), ("deciding", deciding(game))):
            for number, cause in enumerate(shoe_faults()):
                where = f"{game} {at_name} fault {number}"
                probe(texts, where, paused(game, cause, at, texts, where))
    # wager amounts at lock: unequal, missing, over the limits
    for game in GAMES:
        second = "bonus" if game == "three_card_lowball" else "xtra_bonus"
        for first_amount, second_amount in ((1000, 500), (1000, 0), (0, 1000), (100, 100),
                                            (200000, 200000), (1234, 1235)):
            driver = opened(game)
            driver.table.wagers[1] = {key: amount for key, amount in
                                      (("ante", first_amount), (second, second_amount))
                                      if amount}
            texts.keep(f"{game} lock {first_amount}/{second_amount}",
                       driver.do(command="lock"), driver)
    # the engines' own wager rules, over every wager key and probe amount
    from controller.core.games import ENGINES
    for game, engine in ENGINES.items():
        setup = fresh(game).table.setup
        for key in engine.WAGER_KEYS:
            for amount in PROBES:
                for problem in engine.seat_problems(setup, 1, {key: amount}):
                    texts.seen.setdefault(problem, f"{game} seat_problems")
                own = engine.wager_problem(setup, 1, key, amount)
                if own:
                    texts.seen.setdefault(own, f"{game} wager_problem")
    return texts.seen


def test_the_drive_reaches_every_kind_of_text(every_text: dict[str, str]) -> None:
    """The scan is only as good as its reach: refusals of each command, lock refusals,
    faults, alarms, prompts and banners were all collected."""
    wheres = " ".join(every_text.values())
    for kind in ("refused place", "refused lock", "refused decide", "refused void",
                 "refused burn", "refused adjust_meter", "refused continue", "lock refused",
                 "Fault", "Alarm", "prompt", "banner", "seat_problems"):
        assert kind in wheres, kind
    assert len(every_text) > 150


def test_no_text_names_an_amount_in_cents(every_text: dict[str, str]) -> None:
    bare = {text: (where, figures) for text, where in every_text.items()
            if (figures := bare_cents(text))}
    assert not bare, "\n".join(f"{where}: {text!r} names {figures}"
                               for text, (where, figures) in bare.items())


def test_every_amount_named_is_in_dollars_and_cents(every_text: dict[str, str]) -> None:
    amounts = [amount for text in every_text for amount in re.findall(r"\$[\d,.]+", text)]
    assert amounts and all(re.fullmatch(r"\$\d{1,3}(,\d{3})*\.\d\d", amount.rstrip(",."))
                           for amount in amounts)


def test_texts_say_spot_and_no_internal_code(every_text: dict[str, str]) -> None:
    wrong = {text: where for text, where in every_text.items()
             if re.search(r"\bseats?\b", text) or any(code in text for code in INTERNAL_CODES)}
    assert not wrong, "\n".join(f"{where}: {text!r}" for text, where in wrong.items())


def test_banners_are_sentences_with_one_next_step(every_text: dict[str, str]) -> None:
    banners = [text for text, where in every_text.items() if where.endswith("banner")]
    paused = [text for text in banners if text.startswith("Paused: ")]
    assert paused
    for text in paused:
        assert re.search(r"\. (Clear it, then touch Continue|Call a supervisor to (burn the "
                         r"card or void the hand|void the hand))$", text), text
        assert "spots 1)" not in text and not re.search(r"spots \d+\b(?! and)", text), text


@pytest.mark.parametrize("request_", [
    {"command": "place", "spot": 1, "wager": "ante", "amount": 0},
    {"command": "place", "spot": 1, "wager": "ante", "amount": 10**13},
    {"command": "place", "spot": 1, "wager": "ante", "amount": "5.00"},
    {"command": "adjust_meter", "amount": 10**11, "reason": "x"},
    {"command": "adjust_meter", "amount": -10**11, "reason": "x"},
])
def test_wire_refusals_name_cents(request_: dict[str, Any]) -> None:
    """The wire carries cents: a refusal of the JSON itself says so next to the figure, and
    gives the bound in dollars too."""
    with pytest.raises(InputError) as refused:
        parse_command(request_)
    text = str(refused.value)
    assert not bare_cents(text) and "cents" in text, text

"""The par sheets checked by simulation: hands played through the real engines with the optimal
strategy, every measured figure compared with its exact value within four standard errors.

Each simulated hand seats seven spots (every spot's cards, flop and dealer are a uniformly
random deal, so each spot's expectation is the par sheet's); the hand, not the spot, is the
independent unit, so the standard errors include the spots' correlation through the shared
dealer. ``python -m bench.par_check [HANDS]`` runs the long check (``make bench`` does).
"""

from __future__ import annotations

import math
import random
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from fractions import Fraction
from typing import Any

from controller.cli.math import (
    cali_inputs,
    three_card_bonus,
    three_card_progressive,
)
from controller.core.cards import DECK, Card, parse_cards
from controller.core.events import COMMUNITY, DEALER, HandShown, ProgressiveAwarded
from controller.core.games import CaliLowballHand, Decision, ThreeCardLowballHand
from controller.par import cali_lowball as cali
from controller.par import three_card_lowball as three
from controller.settings.table_config import Rules, default_config_path, load_config

SEATS = tuple(range(1, 8))
#: Agreement: every figure within this many standard errors of its exact value.
TOLERANCE = 4


class Tally:
    """Per-hand sums of several quantities, for means and their standard errors."""

    def __init__(self) -> None:
        self.hands = 0
        self.sums: dict[str, float] = defaultdict(float)
        self.squares: dict[str, float] = defaultdict(float)

    def add(self, values: dict[str, float]) -> None:
        self.hands += 1
        for name, value in values.items():
            self.sums[name] += value
            self.squares[name] += value * value

    def mean_and_error(self, name: str, per: int) -> tuple[float, float]:
        """The mean per spot (``per`` spots a hand) and its standard error."""
        n = self.hands
        mean = self.sums[name] / n
        variance = max(self.squares[name] / n - mean * mean, 0.0) * n / (n - 1)
        return mean / per, math.sqrt(variance / n) / per


def compare(tally: Tally, exact: dict[str, Fraction], per: int) -> list[dict[str, Any]]:
    """Each figure's exact value, simulated mean, standard error and distance in errors."""
    rows: list[dict[str, Any]] = []
    for name, value in exact.items():
        mean, error = tally.mean_and_error(name, per)
        distance = abs(mean - float(value)) / error if error else (
            0.0 if mean == float(value) else math.inf)
        rows.append({"figure": name, "exact": float(value), "simulated": mean,
                     "standard_error": error, "errors": distance})
    return rows


# -- Cali LowBall --------------------------------------------------------------------------------

def cali_exact(sheet: cali.CaliParSheet) -> dict[str, Fraction]:
    figures = {f"return {name}": value for name, value in sheet.returns.items()}
    figures["return lowdown_bonus"] = sheet.lowdown_return
    figures["average wager"] = sheet.average_wager
    for name in ("win", "tie", "lose", cali.FOLD, "ante push"):
        figures[f"frequency {name}"] = sheet.results[name]
    win_or_tie = sheet.results["win"] + sheet.results["tie"]
    figures["frequency win or tie"] = win_or_tie
    for name, (frequency, _) in sheet.xtra_lines.items():
        figures[f"X-Tra line {name}"] = frequency
    return figures


def simulate_cali(hands: int, rng: random.Random, paytable: str = "example",
                  deals: tuple[cali.Start, ...] | None = None,
                  rules: Rules | None = None) -> tuple[list[dict[str, Any]], float]:
    """Play ``hands`` seven-spot hands of the shipped Cali LowBall config (``rules``: other
    rule switches) with the optimal strategy; return the comparison rows and the CPU
    seconds the play took."""
    setup = load_config(default_config_path("cali_lowball")).setup("cali_lowball", paytable,
                                                                    rules)
    odds, math_rules = cali_inputs(setup)
    sheet = cali.par_sheet(deals or cali.enumerate_deals(), odds, math_rules)
    strategy = sheet.strategy
    unit = 100 * math.lcm(*(value.denominator for value in
                            (*odds.xtra_bonus.values(), *odds.lowdown_bonus.values())))
    wagers = {seat: {"ante": unit, "xtra_bonus": unit, "lowdown_bonus": unit} for seat in SEATS}
    raise_, check, bet, fold = (Decision(name) for name in (cali.RAISE, cali.CHECK, cali.BET,
                                                            cali.FOLD))
    tally = Tally()
    started = time.process_time()
    for _ in range(hands):
        hand = CaliLowballHand(setup, wagers)
        deck = rng.sample(DECK, 2 * len(SEATS) + 2 + 3)
        cards = iter(deck)
        for _ in range(hand.cards_expected()):
            hand.deal(next(cards))
        starts: dict[int, tuple[int, int]] = {}
        for seat in SEATS:
            low, high = sorted(card.rank for card in hand.cards[seat])
            starts[seat] = (low, high)
        for seat in SEATS:
            hand.decide(seat, raise_ if strategy.pre_flop[starts[seat]].decision == cali.RAISE
                        else check)
        for _ in range(hand.cards_expected()):
            hand.deal(next(cards))
        first, second, third = sorted(card.rank for card in hand.cards[COMMUNITY])
        flop = (first, second, third)
        for seat in hand.next_step().seats:
            hand.decide(seat, bet if strategy.post_flop_bets[starts[seat], flop] else fold)
        assert hand.settled and DEALER in hand.cards
        values: dict[str, float] = defaultdict(float)
        classes = {event.to: event.hand_class for event in hand.history
                   if type(event) is HandShown}
        for settled in hand.settlements():
            net = settled.net / unit
            name = settled.wager
            values[f"return {name}"] += net
            if name != "lowdown_bonus":
                values["return total"] += net
            if name == "raise":
                values["average wager"] += settled.amount / unit
                values["frequency win or tie" if settled.result == "win" else
                       "frequency lose"] += 1
            elif name == "ante":
                values["average wager"] += 2
                if settled.result == "forfeit":
                    values["frequency fold"] += 1
                elif settled.result == "push":
                    values["frequency ante push"] += 1
            elif name == "xtra_bonus" and settled.result == "win":
                values[f"X-Tra line {classes[settled.seat]}"] += 1
        tally.add(values)
    seconds = time.process_time() - started
    exact = cali_exact(sheet)
    exact.pop("frequency win")
    exact.pop("frequency tie")
    return compare(tally, exact, len(SEATS)), seconds


def print_rows(title: str, rows: list[dict[str, Any]], hands: int, seconds: float,
               spots: int = len(SEATS)) -> None:
    print(f"{title}: {hands:,} hands x {spots} spot{'s' if spots > 1 else ''} "
          f"in {seconds:.0f} s CPU")
    for row in rows:
        mark = "ok" if row["errors"] <= TOLERANCE else "DISAGREES"
        print(f"  {row['figure']:<28} exact {row['exact']:>14.9f}  simulated "
              f"{row['simulated']:>14.9f}  +- {row['standard_error']:.9f}  "
              f"{row['errors']:5.2f} SE  {mark}")


# -- Three Card Lowball ----------------------------------------------------------------------------

def three_card_exact(sheet: three.ThreeCardParSheet) -> dict[str, Fraction]:
    figures = {f"return {name}": value for name, value in sheet.returns.items()}
    for name in ("win", "tie", "lose"):
        figures[f"frequency {name}"] = sheet.results[name]
    for name, (frequency, _) in sheet.lines.items():
        figures[f"Bonus line {name}"] = frequency
    for name, frequency in sheet.progressive_awards.items():
        figures[f"progressive {name}"] = frequency
    return figures


#: Starting hand (as a set) -> the cards discarded from it.
Strategy = dict[frozenset[Card], tuple[Card, ...]]


def play_out(hand: ThreeCardLowballHand, cards: Iterator[Card],
             decide: Callable[[Sequence[Card]], Decision]) -> None:
    """Deal from ``cards`` until ``hand`` settles; each spot asked decides ``decide(its
    cards)``."""
    while True:
        for _ in range(hand.cards_expected()):
            hand.deal(next(cards))
        step = hand.next_step()
        if step.kind == "settled":
            return
        if step.kind == "decision":
            for seat in step.seats:
                hand.decide(seat, decide(hand.dealt[seat]))


def _decision(discard: Sequence[Card]) -> Decision:
    return Decision("discard", tuple(discard)) if discard else Decision("stand")


def three_card_strategy(sheet: three.ThreeCardParSheet) -> Strategy:
    """Starting hand (as a set) -> the cards the sheet's strategy discards."""
    return {frozenset(hand): best.discard for hand, best in sheet.strategy.items()}


def document_exact(document: dict[str, Any]) -> dict[str, Fraction]:
    """:func:`three_card_exact` from a par sheet's ``--json`` form."""
    def value(figure: dict[str, Any]) -> Fraction:
        return Fraction(figure["fraction"])

    figures = {f"return {name}": value(figure) for name, figure in document["returns"].items()}
    for name in ("win", "tie", "lose"):
        figures[f"frequency {name}"] = value(document["results"][name])
    for name, line in document["lines"].items():
        figures[f"Bonus line {name}"] = value(line["frequency"])
    for name, figure in document["progressive"]["frequencies"].items():
        figures[f"progressive {name}"] = value(figure)
    return figures


def document_strategy(document: dict[str, Any]) -> Strategy:
    """:func:`three_card_strategy` from a par sheet's ``--json`` form."""
    return {frozenset(parse_cards(hand)): tuple(parse_cards(discard))
            for hand, discard in document["strategy"].items()}


def simulate_three_card(hands: int, rng: random.Random, deck: list[Card], paytable: str,
                        strategy: Strategy, exact: dict[str, Fraction],
                        seats: tuple[int, ...] = (1,)) -> tuple[list[dict[str, Any]], float]:
    """Play ``hands`` hands of the shipped Three Card Lowball config on ``seats``, shoes
    shuffled from ``deck``, each spot drawing by ``strategy``; return the comparison rows
    with the ``exact`` figures (counted on the same deck) and the CPU seconds of the play."""
    setup = load_config(default_config_path("three_card_lowball")).setup(
        "three_card_lowball", paytable)
    unit = 100 * math.lcm(*(odds.per for odds in setup.paytable.for_wager("bonus").values()))
    wagers = {seat: {"ante": unit, "bonus": unit, "progressive": setup.progressive.wager}
              for seat in seats}
    decisions = {hand: _decision(discard) for hand, discard in strategy.items()}
    tally = Tally()
    started = time.process_time()
    for _ in range(hands):
        hand = ThreeCardLowballHand(setup, wagers)
        play_out(hand, iter(rng.sample(deck, len(deck))),
                 lambda cards: decisions[frozenset(cards)])
        values: dict[str, float] = defaultdict(float)
        final_class = {event.to: event.hand_class for event in hand.history
                       if type(event) is HandShown}
        for settled in hand.settlements():
            if settled.wager == "progressive":
                continue
            values[f"return {settled.wager}"] += settled.net / unit
            values["return total"] += settled.net / unit
            if settled.wager == "ante":
                values[{"win": "frequency win", "push": "frequency tie",
                        "lose": "frequency lose"}[settled.result]] += 1
                if settled.result == "win":
                    values[f"Bonus line {final_class[settled.seat]}"] += 1
        for event in hand.history:
            if type(event) is ProgressiveAwarded:
                values[f"progressive {event.award}"] += 1
        tally.add(values)
    seconds = time.process_time() - started
    return compare(tally, exact, len(seats)), seconds


#: Three Card Lowball's reduced deck for the whole-sheet check: A, 2, 4, 10 of c, d, h.
SMALL_DECK = [card for card in DECK if card.rank in (1, 2, 4, 10) and card.suit != "s"]


def simulate_three_card_draw(hand_text: str, hands: int, rng: random.Random,
                             paytable: str) -> tuple[list[dict[str, Any]], float]:
    """One full-deck starting hand: every draw's exact value against the mean net of that
    draw played through the engine (the hand dealt to spot 1, the rest of the deck shuffled)."""
    from controller.core.cards import parse_cards

    setup = load_config(default_config_path("three_card_lowball")).setup(
        "three_card_lowball", paytable)
    bonus = three_card_bonus(setup)
    held = parse_cards(hand_text)
    counted = three.draws(held)
    unit = 100 * math.lcm(*(odds.per for odds in setup.paytable.for_wager("bonus").values()))
    rest = [card for card in DECK if card not in held]
    tally = Tally()
    started = time.process_time()
    for _ in range(hands):
        values: dict[str, float] = {}
        shuffled = rng.sample(rest, len(rest))
        for draw in counted:
            hand = ThreeCardLowballHand(setup, {1: {"ante": unit, "bonus": unit}})
            dealer = iter(shuffled)
            for card in held:
                hand.deal(card)
                hand.deal(next(dealer))
            hand.decide(1, _decision(draw.discard))
            while not hand.settled:
                hand.deal(next(dealer))
            values[three.hand_key(draw.discard) or "stand"] = \
                sum(event.net for event in hand.settlements()) / unit
        tally.add(values)
    seconds = time.process_time() - started
    exact = {three.hand_key(draw.discard) or "stand": draw.value(bonus) for draw in counted}
    return compare(tally, exact, 1), seconds


def house_way_draw(cards: Sequence[Card]) -> tuple[Card, ...]:
    """The player copies the dealer's house way."""
    from controller.core.games.house_way import house_way

    return house_way(cards).discard


def low_cards_draw(cards: Sequence[Card]) -> tuple[Card, ...]:
    """A plain player's rule: discard one card of a pair and every card above seven, at most
    two (the highest); a straight or flush kept whole gives up its highest card."""
    from controller.core.rankings import three_card

    kept: list[Card] = []
    discard: list[Card] = []
    for card in sorted(cards, key=lambda card: card.rank):
        (discard if any(other.rank == card.rank for other in kept) else kept).append(card)
    discard += [card for card in kept if card.rank > 7]
    discard = sorted(discard, key=lambda card: -card.rank)[:2]
    if not discard and three_card.hand_class(cards) in ("flush", "straight", "straight flush"):
        discard = [max(cards, key=lambda card: card.rank)]
    return tuple(discard)


def simulate_three_card_rule(hands: int, rng: random.Random, paytable: str,
                             draw: Callable[[Sequence[Card]], tuple[Card, ...]]
                             ) -> tuple[list[dict[str, Any]], float]:
    """Seven spots that each draw by ``draw(cards) -> discard``, full deck: the return of the
    Ante and Bonus and the house edge, by simulation only (no exact figure to compare with)."""
    setup = load_config(default_config_path("three_card_lowball")).setup(
        "three_card_lowball", paytable)
    unit = 100 * math.lcm(*(odds.per for odds in setup.paytable.for_wager("bonus").values()))
    wagers = {seat: {"ante": unit, "bonus": unit} for seat in SEATS}
    tally = Tally()
    started = time.process_time()
    for _ in range(hands):
        hand = ThreeCardLowballHand(setup, wagers)
        play_out(hand, iter(rng.sample(DECK, 52)), lambda cards: _decision(draw(cards)))
        net = sum(event.net for event in hand.settlements()) / unit
        tally.add({"return total": net, "house edge": -net / 2})
    seconds = time.process_time() - started
    rows: list[dict[str, Any]] = []
    for name in ("return total", "house edge"):
        mean, error = tally.mean_and_error(name, len(SEATS))
        rows.append({"figure": name, "simulated": mean, "standard_error": error})
    return rows, seconds


def three_card_full_deck(hands: int, rng: random.Random) -> None:
    """All 22,100 starting hands counted again (timed), each seeded paytable's par sheet
    compared whole with the committed one (docs/par-sheets/), then played through the
    engine with its strategy."""
    import json
    from pathlib import Path

    from controller.cli.math import three_card_document
    from controller.par.three_card_counts import count_hands

    started = time.perf_counter()
    cpu = time.process_time()
    counted = count_hands()
    print(f"Three Card Lowball, full deck: every starting hand counted in "
          f"{time.perf_counter() - started:.0f} s ({time.process_time() - cpu:.0f} s CPU)")
    committed = Path(__file__).resolve().parent.parent / "docs" / "par-sheets"
    config = load_config(default_config_path("three_card_lowball"))
    for paytable in ("paytable-1", "paytable-2", "paytable-3"):
        started = time.perf_counter()
        document = three_card_document(config.setup("three_card_lowball", paytable), counted)
        path = committed / f"three_card_lowball-{paytable}.json"
        same = json.loads(path.read_text()) == document
        print(f"  {paytable}: par sheet in {time.perf_counter() - started:.0f} s, house edge "
              f"{document['house_edge']['decimal']}; "
              f"{'the same as' if same else 'DIFFERS FROM'} {path.name}")
        rows, seconds = simulate_three_card(hands, rng, list(DECK), paytable,
                                            document_strategy(document),
                                            document_exact(document), SEATS)
        print_rows(f"Three Card Lowball, full deck, {paytable}, optimal strategy", rows,
                   hands, seconds)


def main(cali_hands: int = 300_000, three_card_hands: int = 300_000,
         one_hand_deals: int = 100_000, rule_hands: int = 200_000,
         full_deck_hands: int = 1_000_000) -> None:
    from controller.cli.math import three_card_bonus, three_card_progressive
    from controller.par.three_card_counts import count_hands

    rng = random.Random(17)
    rows, seconds = simulate_cali(cali_hands, rng)
    print_rows("Cali LowBall, paytable example, optimal strategy", rows, cali_hands, seconds)
    setup = load_config(default_config_path("three_card_lowball")).setup()
    sheet = three.par_sheet(count_hands(SMALL_DECK), three_card_bonus(setup),
                            three_card_progressive(setup), SMALL_DECK)
    rows, seconds = simulate_three_card(three_card_hands, rng, SMALL_DECK, setup.paytable_name,
                                        three_card_strategy(sheet), three_card_exact(sheet))
    print_rows(f"Three Card Lowball on the 12-card deck (A 2 4 10 of c d h), "
               f"{setup.paytable_name}, optimal strategy", rows, three_card_hands, seconds, 1)
    rows, seconds = simulate_three_card_draw("Ah 2c 9d", one_hand_deals, rng,
                                             setup.paytable_name)
    print_rows(f"Three Card Lowball, full deck, starting hand Ah 2c 9d, each draw "
               f"({setup.paytable_name})", rows, one_hand_deals, seconds, 1)
    three_card_full_deck(full_deck_hands, rng)
    for paytable in ("paytable-1", "paytable-2", "paytable-3"):
        for name, draw in (("the house way", house_way_draw),
                           ("pairs and cards above 7 discarded", low_cards_draw)):
            rows, seconds = simulate_three_card_rule(rule_hands, rng, paytable, draw)
            print(f"Three Card Lowball, full deck, {paytable}, every spot drawing by {name}: "
                  f"{rule_hands:,} hands x {len(SEATS)} spots in {seconds:.0f} s CPU")
            for row in rows:
                print(f"  {row['figure']:<28} simulated {row['simulated']:>14.9f}  +- "
                      f"{row['standard_error']:.9f}")


if __name__ == "__main__":
    main(*(int(arg) for arg in sys.argv[1:]))

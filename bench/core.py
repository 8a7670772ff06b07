"""Game-core benchmarks: hand evaluations per second and engine-only hands per second.

The rankings are timed side by side with pokerkit's ``RegularLowHand`` on the same random
hands in the same run. The engines play complete seven-seat hands from shuffled decks with a
fixed decision policy, with every event created as at the table.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from controller.core.cards import DECK, Card
from controller.core.games import CaliLowballHand, Decision, ThreeCardLowballHand
from controller.core.rankings import ace_to_five, three_card
from controller.core.table_settings import GameSetup
from controller.settings.table_config import default_config_path, load_config

HANDS = 200_000
ENGINE_HANDS = 20_000
SEATS = range(1, 8)

Hand = TypeVar("Hand", CaliLowballHand, ThreeCardLowballHand)
Wagers = Mapping[int, Mapping[str, int]]


def best_rate(function: Callable[[], object], count: int, repeats: int = 3) -> float:
    """Items per second of this process's CPU time, best of ``repeats`` runs (CPU time, so
    that other work on the machine does not count against the figure)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        function()
        best = min(best, time.process_time() - start)
    return count / best


def rankings(rng: random.Random) -> dict[str, float]:
    fives = [rng.sample(DECK, 5) for _ in range(HANDS)]
    threes = [rng.sample(DECK, 3) for _ in range(HANDS)]
    results: dict[str, float] = {}

    def ours_five() -> None:
        strength = ace_to_five.strength
        for hand in fives:
            strength(hand)

    def ours_three() -> None:
        strength = three_card.strength
        for hand in threes:
            strength(hand)

    results["ace-to-five (ours)"] = best_rate(ours_five, HANDS)
    results["three-card (ours)"] = best_rate(ours_three, HANDS)
    try:
        import pokerkit
    except ImportError:
        return results
    to_pokerkit = {card: next(iter(pokerkit.Card.parse(str(card)))) for card in DECK}
    sample = [[to_pokerkit[card] for card in hand] for hand in fives[: HANDS // 10]]

    def theirs() -> None:
        for hand in sample:
            pokerkit.RegularLowHand(hand)

    results["ace-to-five (pokerkit RegularLowHand)"] = best_rate(theirs, len(sample))
    return results


_RAISE, _CHECK, _BET, _FOLD, _STAND = (Decision(action)
                                       for action in ("raise", "check", "bet", "fold", "stand"))


def _cali_policy(hand: CaliLowballHand, seat: int) -> Decision:
    """Odd seats raise; even seats check, then seat 2 folds and seats 4 and 6 bet."""
    if hand.phase == "pre-flop":
        return _RAISE if seat % 2 else _CHECK
    return _FOLD if seat == 2 else _BET


def _three_card_policy(hand: ThreeCardLowballHand, seat: int) -> Decision:
    """Discard the cards above seven (at most two), else stand."""
    high = tuple(card for card in hand.dealt[seat] if card.rank > 7)[:2]
    return Decision("discard", high) if high else _STAND


def play(engine: Callable[[GameSetup, Wagers], Hand], setup: GameSetup, wagers: Wagers,
         decks: Sequence[Sequence[Card]], policy: Callable[[Hand, int], Decision]) -> None:
    """Complete hands: each dealing step's cards in one go, then the decisions asked for."""
    for deck in decks:
        hand = engine(setup, wagers)
        cards = iter(deck)
        deal, decide = hand.deal, hand.decide
        while True:
            for _ in range(hand.cards_expected()):
                deal(next(cards))
            step = hand.next_step()
            if step.kind == "decision":
                for seat in step.seats:
                    decide(seat, policy(hand, seat))
            elif step.kind == "settled":
                break


def engines(rng: random.Random) -> dict[str, float]:
    decks = [rng.sample(DECK, 52) for _ in range(ENGINE_HANDS)]
    cali = load_config(default_config_path("cali_lowball")).setup()
    three = load_config(default_config_path("three_card_lowball")).setup()
    cali_wagers = {seat: {"ante": 1000, "xtra_bonus": 1000, "lowdown_bonus": 500} for seat in SEATS}
    three_wagers = {seat: {"ante": 1000, "bonus": 1000, "progressive": 100} for seat in SEATS}
    return {
        "Cali LowBall, 7 seats": best_rate(
            lambda: play(CaliLowballHand, cali, cali_wagers, decks, _cali_policy), ENGINE_HANDS),
        "Three Card Lowball, 7 seats": best_rate(
            lambda: play(ThreeCardLowballHand, three, three_wagers, decks, _three_card_policy),
            ENGINE_HANDS),
    }

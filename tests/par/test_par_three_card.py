"""Three Card Lowball's exact game math (controller/par/): the per-hand counting checked by
brute force, the all-hands counting (three_card_counts) against the per-hand counting, the
settlement against the engine's on random full-deck hands, a whole par sheet against a
simulation through the engine on a reduced deck, and the committed full-deck par sheets
(docs/par-sheets/, recomputed whole by `make bench`) by a sample of hands counted again and a
short simulation through the engine."""

import json
import random
from collections.abc import Sequence
from fractions import Fraction
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from bench.par_check import (SEATS, TOLERANCE, document_exact, document_strategy,
                             simulate_three_card, three_card_exact, three_card_strategy)
from controller.cli.main import main
from controller.cli.math import three_card_bonus, three_card_progressive
from controller.core.cards import Card, DECK, parse_cards
from controller.core.games import Decision, ThreeCardLowballHand
from controller.core.games.house_way import house_way
from controller.core.rankings import three_card
from controller.core.table_settings import GameSetup
from controller.par import report
from controller.par import three_card_lowball as three
from controller.par.three_card_counts import count_hands
from controller.settings.table_config import default_config_path, load_config

#: Twelve cards: A, 2, 4 and 10 of clubs, diamonds and hearts (both colours, every house-way
#: branch but the high pair's).
SMALL_DECK = [card for card in DECK if card.rank in (1, 2, 4, 10) and card.suit != "s"]
#: Twenty cards of four suits: straights (A-2-3), flushes, trips, pairs of tens and higher
#: with a low or a high kicker, and every suit for the house way's suit-order choices.
MIDDLE_DECKS = {
    "A 2 3 10 Q": [card for card in DECK if card.rank in (1, 2, 3, 10, 12)],
    "A 2 4 9 J": [card for card in DECK if card.rank in (1, 2, 4, 9, 11)],
}
PAYTABLES = ("paytable-1", "paytable-2", "paytable-3")
COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "par-sheets"


def committed_sheet(paytable: str) -> dict[str, Any]:
    sheet: dict[str, Any] = json.loads((COMMITTED / f"three_card_lowball-{paytable}.json").read_text())
    return sheet


def setup_for(paytable: str = "paytable-1") -> GameSetup:
    return load_config(default_config_path("three_card_lowball")).setup(
        "three_card_lowball", paytable)


def brute_force(hand: Sequence[Card], deck: Sequence[Card]
                ) -> list[dict[str, tuple[Fraction | int, ...]]]:
    """Every replacement, dealer deal and house-way draw, one at a time, as exact shares."""
    unseen = [card for card in deck if card not in hand]
    result = []
    for kept_count in (3, 2, 1):
        for kept in combinations(hand, kept_count):
            classes: dict[str, list[Fraction | int]] = {}
            replacements = list(combinations(unseen, 3 - kept_count))
            for drawn in replacements:
                strength, name = three_card.strength_and_class((*kept, *drawn))
                left = [card for card in unseen if card not in drawn]
                deals = list(combinations(left, 3))
                for dealt in deals:
                    discard = house_way(dealt).discard
                    dealer_kept = [card for card in dealt if card not in discard]
                    rest = [card for card in left if card not in dealt]
                    dealer_draws = list(combinations(rest, len(discard)))
                    for dealer_drawn in dealer_draws:
                        dealer = three_card.strength((*dealer_kept, *dealer_drawn))
                        share = Fraction(1, len(replacements) * len(deals) * len(dealer_draws))
                        counts = classes.setdefault(name, [0, 0, 0])
                        counts[0 if strength < dealer else 1 if strength == dealer else 2] += share
            result.append({name: tuple(counts) for name, counts in classes.items()})
    return result


@pytest.mark.parametrize("hand", ["Ac 2d 4h", "Tc Td 2c", "Ac 2c 4c", "Tc Th Td"])
def test_the_counts_of_every_draw_are_the_brute_force_counts(hand: str) -> None:
    cards = parse_cards(hand)
    counted = three.draws(cards, SMALL_DECK)
    assert [{name: tuple(Fraction(ways, draw.ways) for ways in counts)
             for name, counts in draw.classes.items()} for draw in counted] \
        == brute_force(cards, SMALL_DECK)
    assert [draw.discard for draw in counted][:4] == [(), (cards[2],), (cards[1],), (cards[0],)]


def test_the_math_settles_as_the_engine_does() -> None:
    """Random full-deck hands, random draws: the math's Ante and Bonus nets are the engine's."""
    setup = setup_for("paytable-2")
    bonus = three_card_bonus(setup)
    rng = random.Random(8)
    for _ in range(500):
        deck = rng.sample(DECK, 10)
        hand = ThreeCardLowballHand(setup, {1: {"ante": 100, "bonus": 100}})
        for card in deck[:6]:
            hand.deal(card)
        player, dealer = deck[0:6:2], deck[1:6:2]
        discard = tuple(card for card in player if rng.random() < 0.4)[:2]
        hand.decide(1, Decision("discard", discard) if discard else Decision("stand"))
        drawn = deck[6:6 + len(discard)]
        for card in drawn:
            hand.deal(card)
        dealer_drawn = deck[6 + len(discard):6 + len(discard)
                            + len(house_way(dealer).discard)]
        for card in dealer_drawn:
            hand.deal(card)
        assert hand.settled
        engine = {event.wager: Fraction(event.net, 100) for event in hand.settlements()}
        assert three.settle(player, discard, drawn, dealer, dealer_drawn, bonus) == engine, deck


def test_counting_every_hand_at_once_gives_the_counts_of_each_hand() -> None:
    assert count_hands(SMALL_DECK) == three.enumerate_hands(SMALL_DECK)


@pytest.mark.parametrize("deck", MIDDLE_DECKS, ids=str)
def test_counting_every_hand_at_once_agrees_with_each_hand_counted_alone(deck: str) -> None:
    """Every draw's win, tie and loss counts per final class, on twenty-card decks: all
    hands at once against 25 random hands counted alone (a wrong count fails it)."""
    cards = MIDDLE_DECKS[deck]
    counted = count_hands(cards)
    assert len(counted) == 1140
    for hand in random.Random(deck).sample(sorted(counted, key=three.hand_key), 25):
        assert counted[hand] == three.draws(hand, cards), three.hand_key(hand)


@pytest.fixture(scope="module")
def small_sheet() -> three.ThreeCardParSheet:
    setup = setup_for()
    return three.par_sheet(count_hands(SMALL_DECK), three_card_bonus(setup),
                           three_card_progressive(setup), SMALL_DECK)


def test_the_par_sheet_holds_together(small_sheet: three.ThreeCardParSheet) -> None:
    assert small_sheet.hands == 220 and len(small_sheet.strategy) == 220
    assert small_sheet.house_edge == -small_sheet.returns["total"] / 2
    results = small_sheet.results
    assert results["win"] + results["tie"] + results["lose"] == 1
    assert results["stand"] + results["discard 1"] + results["discard 2"] == 1
    for hand, best in small_sheet.strategy.items():
        assert small_sheet.values[hand][best.discard] == max(small_sheet.values[hand].values())
    # A pat 4-2-A stands.
    assert small_sheet.strategy[tuple(parse_cards("Ac 2d 4h"))].discard == ()
    meter = small_sheet.break_even_meter
    assert small_sheet.progressive_return(meter) == 0
    assert small_sheet.progressive_return(meter + 100) > 0


def test_a_simulation_through_the_engine_agrees_with_every_figure(
        small_sheet: three.ThreeCardParSheet) -> None:
    rows, _ = simulate_three_card(20_000, random.Random(2026), SMALL_DECK, "paytable-1",
                                  three_card_strategy(small_sheet),
                                  three_card_exact(small_sheet))
    assert len(rows) > 10
    for row in rows:
        assert row["errors"] <= TOLERANCE, row


def test_hand_keys_follow_rank_then_suit_order() -> None:
    assert three.hand_key(parse_cards("4d Ah 2c")) == "Ah 2c 4d"
    assert three.hand_key(parse_cards("Ks Kc")) == "Kc Ks"
    assert three.hand_key(()) == ""


@pytest.mark.parametrize("argv, message", [
    (["advise", "--cards", "Ah 2c"], "--cards: give 3 cards, not 2"),
    (["advise", "--cards", "Ah 2c 2c"], "card 2c is given twice"),
    (["advise", "--cards", "Ah 2c 4d", "--flop", "5s 6s 7s"], "--flop: Three Card Lowball"),
    (["par-sheet", "--paytable", "paytable-9"], "paytable-9"),
])
def test_the_command_refuses_what_it_cannot_answer(capsys: pytest.CaptureFixture[str],
                                                   argv: list[str], message: str) -> None:
    action, *rest = argv
    assert main(["math", action, "--game", "three_card_lowball", *rest]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.slow
def test_advise_counts_one_full_deck_hand(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["math", "advise", "--game", "three_card_lowball", "--cards", "9d Ah 2c",
                 "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["situation"] == "cards Ah 2c 9d, the draw"
    assert document["best"] == "discard 9d"
    assert set(document["values"]) == {"stand", "discard 9d", "discard 2c", "discard Ah",
                                       "discard 2c 9d", "discard Ah 9d", "discard Ah 2c"}
    assert document["values"]["discard 9d"]["decimal"].startswith("0.61947925")
    assert committed_sheet("paytable-1")["strategy"]["Ah 2c 9d"] == "9d"


def test_the_document_gives_every_figure_and_hand(small_sheet: three.ThreeCardParSheet) -> None:
    setup = setup_for()
    document = report.three_card_document(small_sheet, "paytable-1", three_card_bonus(setup))
    assert document["house_edge"] == document["element_of_risk"]
    assert Fraction(document["house_edge"]["fraction"]) == small_sheet.house_edge
    assert len(document["strategy"]) == 220
    assert document["strategy"]["Ac 2d 4h"] == ""
    assert list(document["lines"]) == list(setup.paytable.for_wager("bonus"))
    progressive = document["progressive"]
    assert Fraction(progressive["break_even_meter"]["fraction"]) == small_sheet.break_even_meter
    text = report.three_card_text(document)
    assert "house edge (per initial wager, ante + bonus)" in text
    assert "break-even meter" in text


@pytest.mark.parametrize("paytable", PAYTABLES)
def test_the_committed_par_sheet_is_the_paytables_own(paytable: str) -> None:
    """The committed sheet names its paytable and odds as the shipped config has them, and
    its figures hold together."""
    document = committed_sheet(paytable)
    setup = setup_for(paytable)
    assert document["game"] == "three_card_lowball" and document["paytable"] == paytable
    assert {name: line["odds"] for name, line in document["lines"].items()} == {
        name: f"{odds.numerator}:{odds.denominator}"
        for name, odds in three_card_bonus(setup).items()}
    progressive = setup.progressive
    assert document["progressive"]["wager"] == progressive.wager
    assert document["progressive"]["seed"] == progressive.seed

    def value(figure: dict[str, str]) -> Fraction:
        return Fraction(figure["fraction"])

    returns = {name: value(figure) for name, figure in document["returns"].items()}
    assert value(document["house_edge"]) == -returns["total"] / 2
    assert returns["total"] == returns["ante"] + returns["bonus"]
    results = {name: value(figure) for name, figure in document["results"].items()}
    assert results["win"] + results["tie"] + results["lose"] == 1
    assert results["stand"] + results["discard 1"] + results["discard 2"] == 1
    assert len(document["strategy"]) == 22_100
    assert results["stand"] == Fraction(sum(not discard for discard in
                                            document["strategy"].values()), 22_100)


@pytest.mark.slow
def test_the_committed_strategy_is_optimal_for_a_sample_of_hands() -> None:
    """A random full-deck starting hand counted again, alone (about 12 s; the advise test
    below checks another): each committed sheet's draw is the best of the seven."""
    hands = random.Random(17).sample(three.starting_hands(), 1)
    sheets = {paytable: committed_sheet(paytable) for paytable in PAYTABLES}
    for hand in hands:
        counted = three.draws(hand)
        for paytable, document in sheets.items():
            bonus = three_card_bonus(setup_for(paytable))
            values = {draw.discard: draw.value(bonus) for draw in counted}
            best = max(counted, key=lambda draw: (values[draw.discard], -len(draw.discard)))
            assert document["strategy"][three.hand_key(hand)] == three.hand_key(best.discard), \
                (paytable, three.hand_key(hand))


@pytest.mark.slow
def test_a_full_deck_simulation_through_the_engine_agrees_with_the_committed_sheet() -> None:
    """60,000 seven-spot hands with the committed strategy (make bench plays millions): every
    figure within four standard errors; the jackpot (about 1 in 270,000 spots) is left to
    make bench."""
    document = committed_sheet("paytable-1")
    exact = document_exact(document)
    exact.pop("progressive jackpot")
    rows, _ = simulate_three_card(60_000, random.Random(2027), list(DECK), "paytable-1",
                                  document_strategy(document), exact, SEATS)
    assert len(rows) == len(exact)
    for row in rows:
        assert row["errors"] <= TOLERANCE, row

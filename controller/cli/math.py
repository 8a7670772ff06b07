"""``lowball-table math par-sheet|advise``: exact game math of a paytable.

``par-sheet --game G --paytable P [--config FILE] [--json]`` prints the par sheet (house edge,
element of risk, every pay line, the optimal strategy); ``advise --game G --cards "..."
[--flop "..."]`` the expected value of each choice in one situation. The paytables, rule
switches and progressive are the config's (default: the shipped config of the game). Exit
status 2 with a message naming what was wrong for a bad argument.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from controller.cli import Subcommands
from controller.core.cards import Card, CardError, find_duplicate, format_cards, parse_cards
from controller.errors import LowballError
from controller.par import approval, report
from controller.par.wager_edges import (  # the game math's inputs from a table's setup
    cali_inputs as cali_inputs,
    three_card_bonus as three_card_bonus,
    three_card_progressive as three_card_progressive,
)
from controller.par.figures import exact, fraction_text, percent_text
from controller.par import cali_lowball as cali
from controller.par import three_card_lowball as three
from controller.core.table_settings import GAMES, GameSetup
from controller.settings.table_config import default_config_path, load_config
from controller.settings.validation import InputError

PROGRAM = "lowball-table math"
class ArgumentError(LowballError, ValueError):
    """A bad argument; the message names it."""


def register(subparsers: Subcommands, name: str, help_text: str) -> None:
    parser = subparsers.add_parser(name, help=help_text, description=__doc__.splitlines()[0])
    actions = parser.add_subparsers(dest="math_command", metavar="ACTION", required=True)
    sheet = actions.add_parser("par-sheet", help="the par sheet of one paytable")
    _common(sheet)
    sheet.add_argument("--json", action="store_true",
                       help="the stable JSON form (docs/par-sheets.md)")
    sheet.set_defaults(func=run_par_sheet)
    check = actions.add_parser(
        "check", help="warn when the paytable in force has a negative house edge or one that "
                      "differs from its approved_house_edge")
    _common(check)
    check.set_defaults(func=run_check)
    advice = actions.add_parser("advise", help="the expected value of each choice in one hand")
    _common(advice)
    advice.add_argument("--cards", required=True,
                        help="the player's cards: two (Cali LowBall) or three (Three Card)")
    advice.add_argument("--flop", help="Cali LowBall: the three community cards, after a check")
    advice.add_argument("--json", action="store_true", help="print the values as JSON")
    advice.set_defaults(func=run_advise)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--game", required=True, choices=GAMES)
    parser.add_argument("--paytable", help="a paytable of the game in the paytables file "
                                           "(default: the config's)")
    parser.add_argument("--config", help="table config (TOML) whose paytables and rules apply; "
                                         "default: the shipped config of the game")


def _setup(args: argparse.Namespace) -> GameSetup:
    config = load_config(args.config or default_config_path(args.game))
    return config.setup(args.game, args.paytable)


def three_card_document(setup: GameSetup,
                        counted: Mapping[tuple[Card, ...], tuple[three.DrawCounts, ...]],
                        ) -> dict[str, Any]:
    """The ``--json`` par sheet of the setup's paytable from the counts of every hand."""
    bonus = three_card_bonus(setup)
    sheet = three.par_sheet(counted, bonus, three_card_progressive(setup))
    document: dict[str, Any] = report.three_card_document(sheet, setup.paytable_name, bonus)
    return document


def run_par_sheet(args: argparse.Namespace) -> int:
    try:
        setup = _setup(args)
    except InputError as error:
        return _fail(error)
    if args.game == "three_card_lowball":
        from controller.par.three_card_counts import count_hands

        print(f"{PROGRAM}: counting all 22,100 starting hands (about 2 to 3 minutes of CPU)",
              file=sys.stderr)
        document = three_card_document(setup, count_hands())
        print(json.dumps(document, indent=1) if args.json else report.three_card_text(document))
        return 0
    odds, rules = cali_inputs(setup)
    sheet = cali.par_sheet(cali.enumerate_deals(), odds, rules)
    document = report.cali_document(sheet, setup.paytable_name, rules, odds)
    print(json.dumps(document, indent=1) if args.json else report.cali_text(document))
    return 0


def house_edge(setup: GameSetup) -> Fraction:
    """The exact house edge of the setup's paytable (Three Card Lowball: as recorded for a
    seeded paytable's lines, otherwise counted)."""
    if setup.game == "cali_lowball":
        odds, rules = cali_inputs(setup)
        return cali.par_sheet(cali.enumerate_deals(), odds, rules).house_edge

    def count() -> Fraction:
        from controller.par.three_card_counts import count_hands

        print(f"{PROGRAM}: no house edge on record for paytable {setup.paytable_name}'s "
              f"lines; counting all 22,100 starting hands (about 2 to 3 minutes of CPU)",
              file=sys.stderr)
        bonus = three_card_bonus(setup)
        return three.par_sheet(count_hands(), bonus, three_card_progressive(setup)).house_edge

    return approval.three_card_house_edge(three_card_bonus(setup), count)


def run_check(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config or default_config_path(args.game))
        setup = config.setup(args.game, args.paytable)
    except InputError as error:
        return _fail(error)
    edge = house_edge(setup)
    approved = config.paytables.for_game(setup.game)[setup.paytable_name].approved_house_edge
    print(f"paytable {setup.paytable_name}: house edge {percent_text(edge)} "
          f"({fraction_text(edge)}) per initial wager; approved_house_edge "
          f"{approved if approved is not None else 'not given'}")
    for warning in approval.warnings(setup.paytable_name, edge, approved):
        print(f"{PROGRAM}: warning: {warning}", file=sys.stderr)
    return 0


def _cards(text: str, count: int, what: str) -> tuple[Card, ...]:
    try:
        cards = parse_cards(text)
    except CardError as error:
        raise ArgumentError(f"--{what}: {error}") from None
    if len(cards) != count:
        raise ArgumentError(f"--{what}: give {count} cards, not {len(cards)}")
    return cards


def run_advise(args: argparse.Namespace) -> int:
    try:
        setup = _setup(args)
        if args.game == "cali_lowball":
            cards = _cards(args.cards, 2, "cards")
            flop = _cards(args.flop, 3, "flop") if args.flop is not None else None
            duplicate = find_duplicate([*cards, *(flop or ())])
            if duplicate is not None:
                raise ArgumentError(f"card {duplicate} is given twice")
            odds, rules = cali_inputs(setup)
            values = cali.advise(tuple(sorted(card.rank for card in cards)),
                                 tuple(sorted(card.rank for card in flop)) if flop else None,
                                 odds, rules)
            situation = f"cards {format_cards(cards)}" + (
                f", flop {format_cards(flop)}, after a check" if flop else ", before the flop")
        else:
            if args.flop is not None:
                raise ArgumentError("--flop: Three Card Lowball has no flop")
            cards = _cards(args.cards, 3, "cards")
            duplicate = find_duplicate(cards)
            if duplicate is not None:
                raise ArgumentError(f"card {duplicate} is given twice")
            bonus = three_card_bonus(setup)
            values = {("discard " + three.hand_key(draw.discard)) if draw.discard else "stand":
                      draw.value(bonus) for draw in three.draws(cards)}
            situation = f"cards {three.hand_key(cards)}, the draw"
    except (InputError, ArgumentError) as error:
        return _fail(error)
    if args.json:
        print(json.dumps({"game": args.game, "paytable": setup.paytable_name,
                          "situation": situation,
                          "best": max(values, key=lambda name: values[name]),
                          "values": {name: exact(value)
                                     for name, value in values.items()}}, indent=1))
    else:
        print(report.advice_text(args.game, situation, values))
    return 0


def _fail(error: Exception) -> int:
    print(f"{PROGRAM}: {error}", file=sys.stderr)
    return 2

"""``lowball-table replay SCENARIO.json [--json] [--config FILE]``: print a hand's settlement.

Exit status 0 with the settlement; 2 with a message naming the field for a malformed
scenario or config (and no settlement printed).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from controller.cli import Subcommands
from controller.core.money import format_cents
from controller.settings.scenario import ScenarioError, load_scenario, replay, settlement_report
from controller.settings.table_config import default_config_path, load_config
from controller.settings.validation import InputError


def register(subparsers: Subcommands, name: str, help_text: str) -> None:
    parser = subparsers.add_parser(name, help=help_text, description=__doc__.splitlines()[0])
    parser.add_argument("scenario", help="scenario file (JSON)")
    parser.add_argument("--json", action="store_true", help="print the settlement as JSON")
    parser.add_argument("--config", help="table config (TOML) whose paytables, rules and "
                                         "progressive apply; default: the shipped config")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        scenario = load_scenario(args.scenario)
        config = load_config(args.config or default_config_path(scenario.game))
        hand = replay(scenario, config, source=args.scenario)
    except (ScenarioError, InputError) as error:
        print(f"lowball-table replay: {error}", file=sys.stderr)
        return 2
    report = settlement_report(hand)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(render(report))
    return 0


def render(report: dict[str, Any]) -> str:
    """The settlement as a dealer or surveillance officer would read it."""
    lines = [f"{report['game']}  paytable {report['paytable']}", ""]
    for who, shown in report["hand"].items():
        label = "dealer " if who == "dealer" else f"seat {who}"
        extra = "  (folded)" if shown.get("folded") else ""
        if "house_way" in shown:
            way = shown["house_way"]
            discard = " ".join(way["discard"]) or "nothing"
            extra += f"   house way: discard {discard} ({way['rule']})"
        lines.append(f"  {label}  {' '.join(shown['cards']):<15} {shown['hand_class']}{extra}")
    lines += ["", "  seat  wager           amount  result          net"]
    for entry in report["settlements"]:
        lines.append(f"  {entry['seat']:>4}  {entry['wager']:<13} {format_cents(entry['amount']):>9}"
                     f"  {entry['result']:<7} {format_cents(entry['net']):>11}")
    for award in report["progressive"]:
        lines.append(f"  {award['seat']:>4}  progressive award {award['award']}: "
                     f"{format_cents(award['amount'])}")
    meter = report["meter"]
    if meter:
        lines.append(f"\n  meter {format_cents(meter['before'])} -> {format_cents(meter['after'])}"
                     f" (contributions {format_cents(meter['contributions'])}, jackpot paid "
                     f"{format_cents(meter['awards'])}, reseed {format_cents(meter['reseed'])})")
    lines.append(f"  house result {format_cents(report['house_result'])}")
    return "\n".join(lines)

"""Par sheets as documents: the stable JSON form (``docs/par-sheets.md``) and the text form.

Every exact figure appears in JSON as ``{"fraction": "p/q", "decimal": "0.123456789012"}``;
the text form prints the decimals (12 places) and percentages (9 places).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from controller.core.cards import SUIT_CHARS, Card
from controller.par import cali_lowball as cali
from controller.par import three_card_lowball as three
from controller.par.figures import decimal_text, exact, percent_text, square_root_text

FORMAT_VERSION = 1


def cali_document(sheet: cali.CaliParSheet, paytable: str, rules: cali.CaliRules,
                  odds: cali.CaliOdds) -> dict[str, Any]:
    strategy = sheet.strategy
    checks = [ranks for ranks, start in strategy.pre_flop.items() if start.decision == cali.CHECK]
    folds: dict[str, list[str]] = {}
    for (start, flop), bets in sorted(strategy.post_flop_bets.items()):
        if start in checks and not bets:
            folds.setdefault(cali.start_key(start), []).append(cali.ranks_text(flop))
    document = {
        "format": FORMAT_VERSION,
        "game": "cali_lowball",
        "paytable": paytable,
        "rules": rules._asdict(),
        "unit": "ante",
        "deals": sheet.deals,
        "house_edge": exact(sheet.house_edge),
        "element_of_risk": exact(sheet.element_of_risk),
        "returns": {name: exact(value) for name, value in sheet.returns.items()},
        "initial_wager": exact(sheet.initial_wager),
        "average_wager": exact(sheet.average_wager),
        "variance": exact(sheet.variance),
        "standard_deviation": square_root_text(sheet.variance),
        "results": {name: exact(value) for name, value in sheet.results.items()},
        "lines": {name: {"odds": _odds_text(odds.xtra_bonus[name]), "frequency": exact(freq),
                         "return": exact(share)}
                  for name, (freq, share) in sheet.xtra_lines.items()},
        "lowdown_bonus": {
            "return": exact(sheet.lowdown_return),
            "house_edge": exact(-sheet.lowdown_return),
            "variance": exact(sheet.lowdown_variance),
            "standard_deviation": square_root_text(sheet.lowdown_variance),
            "lines": {name: {"odds": _odds_text(odds.lowdown_bonus[name]),
                             "frequency": exact(freq), "return": exact(share)}
                      for name, (freq, share) in sheet.lowdown_lines.items()},
        },
        "strategy": {cali.start_key(ranks): start.decision
                     for ranks, start in sorted(strategy.pre_flop.items())},
        "start_values": {cali.start_key(ranks): {cali.RAISE: exact(start.raise_value),
                                                 cali.CHECK: exact(start.check_value)}
                         for ranks, start in sorted(strategy.pre_flop.items())},
        "post_flop_folds": folds,
    }
    return document


def _odds_text(value: Fraction) -> str:
    return f"{value.numerator}:{value.denominator}"


def _figure(value: dict[str, str]) -> str:
    return value["decimal"]


def _percent(value: dict[str, str]) -> str:
    return percent_text(Fraction(value["fraction"]))


def cali_text(document: dict[str, Any]) -> str:
    rules = ", ".join(f"{key} = {str(value).lower()}" for key, value in document["rules"].items())
    lines = [f"Cali LowBall par sheet, paytable {document['paytable']}", f"rules: {rules}",
             f"one player against the dealer, every one of {document['deals']:,} deals "
             f"(full card removal); amounts in antes", ""]
    lines.append(f"  house edge (per initial wager, ante + X-Tra Bonus)  "
                 f"{_percent(document['house_edge'])}")
    lines.append(f"  element of risk (per unit wagered, raises included) "
                 f"{_percent(document['element_of_risk'])}")
    lines.append(f"  expected return: ante {_figure(document['returns']['ante'])}, X-Tra Bonus "
                 f"{_figure(document['returns']['xtra_bonus'])}, raise "
                 f"{_figure(document['returns']['raise'])}, total "
                 f"{_figure(document['returns']['total'])}")
    lines.append(f"  average wager {_figure(document['average_wager'])}, standard deviation "
                 f"{document['standard_deviation']} (antes)")
    results = document["results"]
    lines.append("  results: " + ", ".join(f"{name} {_figure(value)}"
                                           for name, value in results.items()))
    lines += ["", "  X-Tra Bonus line   odds      frequency        return"]
    for name, line in document["lines"].items():
        lines.append(f"  {name:<17} {line['odds']:>6}  {_figure(line['frequency'])}  "
                     f"{_figure(line['return'])}")
    lowdown = document["lowdown_bonus"]
    lines += ["", f"  Lowdown Bonus on its own: return {_figure(lowdown['return'])}, house edge "
                  f"{_percent(lowdown['house_edge'])}, standard deviation "
                  f"{lowdown['standard_deviation']}",
              "  Lowdown line       odds      frequency        return"]
    for name, line in lowdown["lines"].items():
        lines.append(f"  {name:<17} {line['odds']:>6}  {_figure(line['frequency'])}  "
                     f"{_figure(line['return'])}")
    raises = [start for start, decision in document["strategy"].items() if decision == "raise"]
    lines += ["", f"  strategy: raise {len(raises)} of {len(document['strategy'])} starts "
                  f"(by ranks): {' '.join(raises) or 'none'}; check the others"]
    folds = document["post_flop_folds"]
    if folds:
        lines.append(f"  after a check, fold on {sum(map(len, folds.values()))} "
                     f"(start, flop) rank combinations (--json lists them); bet the others")
    else:
        lines.append("  after a check, always bet (folding never returns more)")
    return "\n".join(lines)


def advice_text(game: str, situation: str, values: dict[str, Fraction]) -> str:
    best = max(values, key=lambda name: values[name])
    lines = [f"{game}: {situation}", f"  best: {best}"]
    for name, value in sorted(values.items(), key=lambda item: -item[1]):
        lines.append(f"  {name:<16} {decimal_text(value)}")
    return "\n".join(lines)


def three_card_document(sheet: three.ThreeCardParSheet, paytable: str,
                        bonus: dict[str, Fraction]) -> dict[str, Any]:
    progressive = sheet.progressive
    order = sorted(sheet.strategy, key=_hand_order)
    return {
        "format": FORMAT_VERSION,
        "game": "three_card_lowball",
        "paytable": paytable,
        "unit": "ante",
        "hands": sheet.hands,
        "house_edge": exact(sheet.house_edge),
        "element_of_risk": exact(sheet.house_edge),
        "returns": {name: exact(value) for name, value in sheet.returns.items()},
        "initial_wager": exact(Fraction(2)),
        "average_wager": exact(Fraction(2)),
        "variance": exact(sheet.variance),
        "standard_deviation": square_root_text(sheet.variance),
        "results": {**{name: exact(sheet.results[name]) for name in ("win", "tie", "lose")},
                    "fold": exact(Fraction(0)),
                    **{name: exact(sheet.results[name])
                       for name in ("stand", "discard 1", "discard 2")}},
        "lines": {name: {"odds": _odds_text(bonus[name]), "frequency": exact(frequency),
                         "return": exact(share)}
                  for name, (frequency, share) in sheet.lines.items()},
        "progressive": {
            "wager": progressive.wager,
            "awards": dict(progressive.awards),
            "contribution_rate": exact(progressive.contribution_rate),
            "seed": progressive.seed,
            "frequencies": {name: exact(value)
                            for name, value in sheet.progressive_awards.items()},
            "fixed_return": exact(sheet.progressive_fixed_return),
            "return_at_seed": exact(sheet.progressive_return(progressive.seed)),
            "break_even_meter": exact(sheet.break_even_meter),
            "long_run_return": exact(sheet.progressive_long_run_return),
        },
        "strategy": {three.hand_key(hand): three.hand_key(sheet.strategy[hand].discard)
                     for hand in order},
    }


def _hand_order(hand: tuple[Card, ...]) -> list[tuple[int, int]]:
    return sorted((card.rank, SUIT_CHARS.index(card.suit)) for card in hand)


#: The meters (in units of the progressive wager) at which the text form shows its return.
METER_STEPS = (1_000, 2_000, 5_000, 10_000, 20_000, 50_000)


def three_card_text(document: dict[str, Any]) -> str:
    lines = [f"Three Card Lowball par sheet, paytable {document['paytable']}",
             f"one player against the dealer, every one of {document['hands']:,} starting "
             f"hands, each draw, the dealer's every deal and house-way draw (full card "
             f"removal); amounts in antes", ""]
    lines.append(f"  house edge (per initial wager, ante + bonus)        "
                 f"{_percent(document['house_edge'])}")
    lines.append(f"  element of risk (no raise: the same)                "
                 f"{_percent(document['element_of_risk'])}")
    returns = document["returns"]
    lines.append(f"  expected return: ante {_figure(returns['ante'])}, bonus "
                 f"{_figure(returns['bonus'])}, total {_figure(returns['total'])}")
    lines.append(f"  standard deviation {document['standard_deviation']} (antes)")
    lines.append("  results: " + ", ".join(f"{name} {_figure(value)}"
                                           for name, value in document["results"].items()))
    lines += ["", "  Bonus line         odds      frequency        return"]
    for name, line in document["lines"].items():
        lines.append(f"  {name:<17} {line['odds']:>6}  {_figure(line['frequency'])}  "
                     f"{_figure(line['return'])}")
    progressive = document["progressive"]
    wager = progressive["wager"]
    jackpot = Fraction(progressive["frequencies"]["jackpot"]["fraction"])
    fixed = Fraction(progressive["fixed_return"]["fraction"])
    lines += ["", f"  progressive ({wager} cents a wager): award frequencies"]
    for name, value in progressive["frequencies"].items():
        paid = progressive["awards"].get(name, "the meter")
        lines.append(f"  {name:<20} {_figure(value)}  pays {paid}")
    lines.append(f"  return per unit wagered = {_figure(progressive['fixed_return'])} - 1 + "
                 f"{_figure(progressive['frequencies']['jackpot'])} x meter / wager")
    for steps in METER_STEPS:
        meter = steps * wager
        lines.append(f"    meter {meter:>12,} cents: "
                     f"{_percent(exact(fixed - 1 + jackpot * meter / wager))}")
    break_even = Fraction(progressive["break_even_meter"]["fraction"])
    lines.append(f"  break-even meter {decimal_text(break_even, 2)} cents; at the seed ({progressive['seed']:,} cents) "
                 f"{_percent(progressive['return_at_seed'])}; over many jackpots "
                 f"(contributions and seed paid back) {_percent(progressive['long_run_return'])}")
    strategy = document["strategy"]
    counts = {"stand": 0, "discard 1": 0, "discard 2": 0}
    for discard in strategy.values():
        counts[("stand", "discard 1", "discard 2")[len(discard.split())]] += 1
    lines += ["", "  strategy: of " + f"{len(strategy):,} starting hands, " + ", ".join(
        f"{name} {count:,}" for name, count in counts.items()) + " (--json lists each)"]
    return "\n".join(lines)

"""The house edge of the paytable in force, against zero and against the figure recorded with
its approval: the warnings of ``lowball-table math check`` (warnings, never refusals: the
paytable is the operator's and the regulator's to approve).

Cali LowBall's edge is counted (seconds); Three Card Lowball's comes from :data:`RECORDED`
when the Bonus lines are a seeded paytable's (the committed par sheets, docs/par-sheets/),
otherwise it is counted too (minutes: every starting hand).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from controller.core.vocabulary import HandClass
from controller.par.figures import percent_text

FOUR_TWO_ACE_ONE_COLOR, FOUR_TWO_ACE_TWO_COLOR, FOUR_THREE_ACE = (
    HandClass.FOUR_TWO_ACE_ONE_COLOR, HandClass.FOUR_TWO_ACE_TWO_COLOR, HandClass.FOUR_THREE_ACE)
FIVE_HIGH, SIX_HIGH, SEVEN_HIGH = HandClass.FIVE_HIGH, HandClass.SIX_HIGH, HandClass.SEVEN_HIGH

#: Three Card Lowball: the exact house edge of Bonus lines (class -> odds "N:M", sorted) as
#: the committed par sheets give it; the progressive is a separate wager.
RECORDED: dict[tuple[tuple[str, str], ...], Fraction] = {
    ((FOUR_TWO_ACE_ONE_COLOR, "10:1"), (FOUR_TWO_ACE_TWO_COLOR, "6:1"), (FOUR_THREE_ACE, "5:1"),
     (FIVE_HIGH, "3:1"), (SIX_HIGH, "2:1"), (SEVEN_HIGH, "1:1")):
        Fraction(768282207817, 79732922068800),
    ((FOUR_TWO_ACE_ONE_COLOR, "12:1"), (FOUR_TWO_ACE_TWO_COLOR, "8:1"), (FOUR_THREE_ACE, "4:1"),
     (FIVE_HIGH, "3:1"), (SIX_HIGH, "2:1"), (SEVEN_HIGH, "1:1")):
        Fraction(71658585899, 17333243928000),
    ((FOUR_TWO_ACE_ONE_COLOR, "10:1"), (FOUR_TWO_ACE_TWO_COLOR, "6:1"), (FOUR_THREE_ACE, "4:1"),
     (FIVE_HIGH, "3:1"), (SIX_HIGH, "2:1"), (SEVEN_HIGH, "1:1")):
        Fraction(1406734172159, 99666152586000),
}


#: Three Card Lowball: the progressive's award frequencies (award -> share of all deals, the
#: jackpot's included) under the optimal draw for the Bonus lines of :data:`RECORDED`, as the
#: same committed par sheets give them (``progressive.frequencies``). The draw, hence the 4-high
#: and 5-high frequencies, depends on the Bonus lines; the awards' amounts do not enter.
_PATS = {"jackpot": Fraction(381, 101792600),
         "pat-4-2-A-one-color": Fraction(25330757, 46824596000),
         "pat-4-2-A-two-color": Fraction(303948527, 140473788000)}
RECORDED_PROGRESSIVE: dict[tuple[tuple[str, str], ...], dict[str, Fraction]] = {
    ((FOUR_TWO_ACE_ONE_COLOR, "10:1"), (FOUR_TWO_ACE_TWO_COLOR, "6:1"), (FOUR_THREE_ACE, "5:1"),
     (FIVE_HIGH, "3:1"), (SIX_HIGH, "2:1"), (SEVEN_HIGH, "1:1")):
        {**_PATS, "4-high": Fraction(542454471379, 33222050862000),
         "5-high": Fraction(742073697427, 16611025431000)},
    ((FOUR_TWO_ACE_ONE_COLOR, "12:1"), (FOUR_TWO_ACE_TWO_COLOR, "8:1"), (FOUR_THREE_ACE, "4:1"),
     (FIVE_HIGH, "3:1"), (SIX_HIGH, "2:1"), (SEVEN_HIGH, "1:1")):
        {**_PATS, "4-high": Fraction(3235420639379, 199332305172000),
         "5-high": Fraction(992414010641, 22148033908000)},
    ((FOUR_TWO_ACE_ONE_COLOR, "10:1"), (FOUR_TWO_ACE_TWO_COLOR, "6:1"), (FOUR_THREE_ACE, "4:1"),
     (FIVE_HIGH, "3:1"), (SIX_HIGH, "2:1"), (SEVEN_HIGH, "1:1")):
        {**_PATS, "4-high": Fraction(3180268535363, 199332305172000),
         "5-high": Fraction(8872411044977, 199332305172000)},
}


def lines_key(bonus: dict[str, Fraction]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((name, f"{odds.numerator}:{odds.denominator}")
                        for name, odds in bonus.items()))


def warnings(paytable: str, house_edge: Fraction, approved: str | None) -> list[str]:
    """What is wrong with ``house_edge`` for the paytable in force, if anything."""
    found = []
    if house_edge < 0:
        found.append(f"paytable {paytable}: the house edge is negative "
                     f"({percent_text(house_edge)}): the player has the advantage")
    if approved is not None and Fraction(approved) != house_edge:
        found.append(f"paytable {paytable}: the exact house edge {percent_text(house_edge)} "
                     f"({house_edge.numerator}/{house_edge.denominator}) differs from the "
                     f"approved_house_edge {approved}")
    return found


def three_card_house_edge(bonus: dict[str, Fraction],
                          count: Callable[[], Fraction]) -> Fraction:
    """The recorded edge of these Bonus lines, or ``count()`` when none is recorded."""
    recorded = RECORDED.get(lines_key(bonus))
    return recorded if recorded is not None else count()

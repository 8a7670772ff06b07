"""What both par sheets share: exact fractions printed as decimals, and the spread of a result.

Every figure is a :class:`fractions.Fraction`; :func:`decimal_text` prints one to a fixed
number of places, rounded half away from zero, with integer arithmetic only.

>>> decimal_text(Fraction(1, 3))
'0.333333333333'
>>> decimal_text(Fraction(-2, 3), 4)
'-0.6667'
>>> fraction_text(Fraction(-6, 4))
'-3/2'
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, localcontext
from fractions import Fraction

PLACES = 12


def decimal_text(value: Fraction, places: int = PLACES) -> str:
    scaled = abs(value) * 10 ** places
    whole, rest = divmod(scaled.numerator, scaled.denominator)
    if 2 * rest >= scaled.denominator:
        whole += 1
    digits = str(whole).rjust(places + 1, "0")
    sign = "-" if value < 0 and whole else ""
    return f"{sign}{digits[:-places]}.{digits[-places:]}" if places else f"{sign}{digits}"


def percent_text(value: Fraction, places: int = 9) -> str:
    return decimal_text(value * 100, places) + " %"


def fraction_text(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}" if value.denominator != 1 \
        else str(value.numerator)


def exact(value: Fraction) -> dict[str, str]:
    """A figure as the par sheet's JSON gives it: the exact fraction and a decimal."""
    return {"fraction": fraction_text(value), "decimal": decimal_text(value)}


def square_root_text(value: Fraction, places: int = PLACES) -> str:
    """The square root of a non-negative fraction, to ``places`` decimals."""
    with localcontext() as context:
        context.prec = places + 20
        root = (Decimal(value.numerator) / Decimal(value.denominator)).sqrt()
        return str(root.quantize(Decimal(1).scaleb(-places)))


def mean_and_variance(outcomes: Mapping[Fraction, int]) -> tuple[Fraction, Fraction]:
    """The mean and variance of a net result given as ``net -> number of ways``."""
    total = sum(outcomes.values())
    mean = Fraction(sum(net * ways for net, ways in outcomes.items()), total)
    second = Fraction(sum(net * net * ways for net, ways in outcomes.items()), total)
    return mean, second - mean * mean

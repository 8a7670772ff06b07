"""Money: integer cents, odds as exact ratios, rates as exact fractions. No floats anywhere.

>>> Odds.parse("3:2").payout(1000)
1500
>>> Odds.parse("10:1").payout(2500)
25000
>>> parse_rate("12.5%")
Fraction(1, 8)
>>> format_cents(1234567)
'$12,345.67'
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import NamedTuple

from controller.errors import LowballError

_ODDS = re.compile(r"^\s*(\d{1,6})\s*(?::|to)\s*(\d{1,6})\s*$")
_RATE = re.compile(r"^\s*(\d{1,3}(?:\.\d{1,4})?)\s*%\s*$")


class MoneyError(LowballError, ValueError):
    """An amount, odds or rate that is not well formed."""


class Odds(NamedTuple):
    """A payout ratio: the wager pays ``pays`` for every ``per`` staked ("3:2")."""

    pays: int
    per: int

    @classmethod
    def parse(cls, text: str) -> Odds:
        match = _ODDS.match(text) if isinstance(text, str) else None
        if match is None:
            raise MoneyError(f"odds {text!r} must be written 'N:M', such as '10:1' or '3:2'")
        pays, per = int(match[1]), int(match[2])
        if per == 0:
            raise MoneyError(f"odds {text!r}: the second number must not be 0")
        return cls(pays, per)

    def payout(self, stake: int) -> int:
        """What a winning ``stake`` (cents) is paid, in whole cents, rounded down."""
        return stake * self.pays // self.per

    def __str__(self) -> str:
        return f"{self.pays}:{self.per}"


def parse_rate(text: object) -> Fraction:
    """A percentage written as text ("20%", "12.5%") as an exact fraction of 1."""
    match = _RATE.match(text) if isinstance(text, str) else None
    if match is None:
        raise MoneyError(f"rate {text!r} must be a percentage written as text, such as '20%'")
    try:
        rate = Fraction(Decimal(match[1])) / 100
    except InvalidOperation as error:  # pragma: no cover - the pattern admits only decimals
        raise MoneyError(f"rate {text!r}: {error}") from error
    if rate > 1:
        raise MoneyError(f"rate {text!r} is more than 100%")
    return rate


def format_rate(rate: Fraction) -> str:
    percent = rate * 100
    text = str(Decimal(percent.numerator) / Decimal(percent.denominator))
    return f"{text}%"


def format_cents(cents: int) -> str:
    """``$12,345.67``; a negative amount is written ``-$1.50``."""
    sign = "-" if cents < 0 else ""
    dollars, remainder = divmod(abs(cents), 100)
    return f"{sign}${dollars:,}.{remainder:02d}"

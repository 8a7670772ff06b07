"""Money: integer cents, odds as exact ratios, rates as exact fractions. No floats anywhere.

>>> Odds.parse("3:2").payout(1000)
1500
>>> Odds.parse("10:1").payout(2500)
25000
>>> parse_rate("12.5%")
Fraction(1, 8)
>>> format_cents(1234567)
'$12,345.67'
>>> parse_dollars("$25.50")
2550

Integer cents on the wire, in the journal and in the config; dollars wherever a person reads
(:func:`format_cents`) or types (:func:`parse_dollars`) an amount.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import NamedTuple

from controller.errors import LowballError

_ODDS = re.compile(r"^\s*(\d{1,6})\s*(?::|to)\s*(\d{1,6})\s*$")
#: Dollars as a person types them: ``25``, ``25.5``, ``25.50``, ``$25``, ``$1,000``, with an
#: optional sign before or after the ``$`` (``-25``, ``-$25``, ``$-25``); at most two decimals.
_DOLLARS = re.compile(r"^([+-]?)\$?([+-]?)([0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.([0-9]{0,2}))?$")
_TOO_PRECISE = re.compile(r"^[+-]?\$?[+-]?[0-9,]+\.[0-9]{3,}$")
#: The largest amount a person may type, in cents ($10,000,000,000.00): any wager or meter
#: adjustment the table takes is far below it (the command channel's own bounds hold too).
MAX_TYPED_CENTS = 10**12
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


def parse_dollars(text: object, *, name: str = "amount", negative: bool = False,
                  zero: bool = False, limit: int = MAX_TYPED_CENTS) -> int:
    """An amount a person typed in dollars (``25``, ``25.50``, ``$25``, ``$1,000``), in cents.

    Refused with a :class:`MoneyError` naming the input: anything but digits with at most two
    decimals (``25.505``, ``1e3``, ``25 dollars``), a negative amount unless ``negative``, zero
    unless ``zero``, and more than ``limit`` cents either way.

    >>> parse_dollars("25"), parse_dollars("25.5"), parse_dollars("$1,000")
    (2500, 2550, 100000)
    >>> parse_dollars("-25", negative=True)
    -2500
    """
    if not isinstance(text, str):
        raise MoneyError(f"{name}: dollars are typed as text such as 25 or 25.50, "
                         f"not {type(text).__name__}")
    shown = text if len(text) <= 32 else text[:32] + "..."
    match = _DOLLARS.match(text.strip())
    if match is None or (match[1] and match[2]):
        if _TOO_PRECISE.match(text.strip()):
            raise MoneyError(f"{name} {shown!r} has more than two decimals: dollars and "
                             f"cents, such as 25.50")
        raise MoneyError(f"{name} {shown!r} is not an amount in dollars, such as 25, 25.50 "
                         f"or $25")
    sign = -1 if "-" in (match[1], match[2]) else 1
    whole = match[3].replace(",", "")
    if len(whole) > 15:
        raise MoneyError(f"{name} {shown!r} is more than {format_cents(limit)}")
    cents = sign * (int(whole) * 100 + int((match[4] or "").ljust(2, "0")))
    if cents < 0 and not negative:
        raise MoneyError(f"{name} {shown!r} is negative: type the amount without a minus sign")
    if cents == 0 and not zero:
        raise MoneyError(f"{name} {shown!r} is zero")
    if abs(cents) > limit:
        raise MoneyError(f"{name} {shown!r} is more than {format_cents(limit)}")
    return cents

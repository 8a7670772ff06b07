"""Turning pydantic validation errors into messages an operator can act on.

Every config file, scenario and command is validated by a pydantic model; a failure is reported
as one line per problem, each naming the key path (``limits.min_ante``, ``seats.4.bonus``,
``shoe[7]``) and what was wrong with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    Field,
    PlainSerializer,
    PlainValidator,
    ValidationError,
)

from controller.core.money import MoneyError, Odds, parse_rate
from controller.errors import LowballError


class InputError(LowballError, ValueError):
    """Untrusted input was rejected. ``problems`` holds one ``path: message`` line each."""

    def __init__(self, source: str, problems: Sequence[str]):
        self.source = source
        self.problems = tuple(problems)
        super().__init__(f"{source}: " + "; ".join(self.problems))

    def __str__(self) -> str:
        if len(self.problems) == 1:
            return f"{self.source}: {self.problems[0]}"
        return f"{self.source}:\n" + "\n".join(f"  {problem}" for problem in self.problems)


def key_path(location: Sequence[int | str]) -> str:
    """``("seats", "4", "bonus")`` -> ``seats.4.bonus``; ``("shoe", 7)`` -> ``shoe[7]``."""
    path = ""
    for part in location:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path or "(top level)"


def problems_of(error: ValidationError) -> list[str]:
    lines = []
    for detail in error.errors(include_url=False):
        # Drop pydantic's internal union/validator tags, keep the user's key names.
        location = [part for part in detail["loc"]
                    if not (isinstance(part, str) and part.startswith(("function-", "tagged-")))]
        message = detail["msg"]
        if message.startswith("Value error, "):
            message = message[len("Value error, "):]
        if detail["type"] == "extra_forbidden":
            message = "unknown key (not allowed here)"
        if location and location[-1] == "[key]":
            location.pop()
            message = f"not allowed as a key: {message}"
        lines.append(f"{key_path(location)}: {message}")
    return lines


Model = TypeVar("Model", bound=BaseModel)


def validate(model: type[Model], data: Any, source: str) -> Model:
    """``model.model_validate(data)``, raising :class:`InputError` that names each key path."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise InputError(source, problems_of(error)) from None


def _odds(value: Any) -> Odds:
    if isinstance(value, Odds):
        return value
    try:
        return Odds.parse(value)
    except MoneyError as error:
        raise ValueError(str(error)) from None


def _rate(value: Any) -> Fraction:
    try:
        return parse_rate(value)
    except MoneyError as error:
        raise ValueError(str(error)) from None


#: The largest amount of money any input may name: ten billion dollars, in cents. Far above
#: any table's limits, and small enough that a payout (a wager times the longest odds a
#: paytable may name, 999999:1) still fits a signed 64-bit integer, as integrators store it.
MAX_CENTS = 10**12
#: An amount of money in cents: a whole number, never a float or a string.
Cents = Annotated[int, Field(strict=True, ge=0, le=MAX_CENTS)]
PositiveCents = Annotated[int, Field(strict=True, gt=0, le=MAX_CENTS)]
#: Odds written "N:M" in config files.
OddsText = Annotated[Odds, BeforeValidator(_odds), PlainSerializer(str, return_type=str)]


def _format_rate(rate: Any) -> str:
    from controller.core.money import format_rate

    return format_rate(rate)


#: A percentage written as text ("20%"), held as an exact Fraction.
RateText = Annotated[Any, PlainValidator(_rate), PlainSerializer(_format_rate, return_type=str)]

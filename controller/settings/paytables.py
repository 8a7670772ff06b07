"""Paytables: named tables of hand class -> odds, loaded from TOML and validated.

The seeds do not print the Cali LowBall paytables; they are configuration. A paytable's
``status`` says where it came from (``seed``: verbatim from the game's rules; ``example``: made
up for development, never for live play; ``approved``: approved, with its reference).
"""

from __future__ import annotations

import tomllib
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from controller.core.games.cali_lowball import LOWDOWN_BONUS_CLASSES, XTRA_BONUS_CLASSES
from controller.core.money import Odds
from controller.core.rankings import ace_to_five, three_card
from controller.settings.validation import InputError, OddsText, validate


class _Paytable(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    status: Literal["seed", "example", "approved"]
    description: str = ""
    approval: str | None = None
    #: The house edge recorded with the approval ("p/q" or a decimal fraction, e.g.
    #: "0.0096"): ``lowball-table math check`` warns when the paytable's exact one differs.
    approved_house_edge: str | None = None

    @field_validator("approved_house_edge")
    @classmethod
    def _fraction(cls, text: str | None) -> str | None:
        if text is None:
            return text
        if len(text) > 40:
            raise ValueError("write the house edge as a fraction 'p/q' or a decimal, "
                             "at most 40 characters")
        try:
            value = Fraction(text)
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"{text!r} is not a fraction 'p/q' or a decimal") from None
        if not -1 <= value <= 1:
            raise ValueError(f"{text!r} is not a house edge between -1 and 1")
        return text

    @model_validator(mode="after")
    def _approval_named(self) -> Self:
        if self.status == "approved" and not self.approval:
            raise ValueError("an approved paytable must give its approval reference in 'approval'")
        return self


def _check_lines(table: dict[str, Odds], required: tuple[str, ...],
                 known: tuple[str, ...]) -> dict[str, Odds]:
    unknown = [name for name in table if name not in known]
    if unknown:
        raise ValueError(f"unknown hand class {unknown[0]!r}; hand classes are: {', '.join(known)}")
    missing = [name for name in required if name not in table]
    if missing:
        raise ValueError(f"missing a line for {', '.join(repr(m) for m in missing)}")
    extra = [name for name in table if name not in required]
    if extra:
        raise ValueError(f"{extra[0]!r} cannot be paid by this wager; it pays only on "
                         f"{', '.join(required)}")
    return table


class CaliPaytable(_Paytable):
    """The X-Tra Bonus and Lowdown Bonus odds of one Cali LowBall paytable."""

    xtra_bonus: dict[str, OddsText]
    lowdown_bonus: dict[str, OddsText]

    @field_validator("xtra_bonus")
    @classmethod
    def _xtra_lines(cls, table: dict[str, Odds]) -> dict[str, Odds]:
        return _check_lines(table, XTRA_BONUS_CLASSES, ace_to_five.HAND_CLASSES)

    @field_validator("lowdown_bonus")
    @classmethod
    def _lowdown_lines(cls, table: dict[str, Odds]) -> dict[str, Odds]:
        return _check_lines(table, LOWDOWN_BONUS_CLASSES, ace_to_five.HAND_CLASSES)


class ThreeCardPaytable(_Paytable):
    """The Bonus odds of one Three Card Lowball paytable; unlisted winning hands push."""

    bonus: dict[str, OddsText]

    @field_validator("bonus")
    @classmethod
    def _bonus_lines(cls, table: dict[str, Odds]) -> dict[str, Odds]:
        return _check_lines(table, tuple(table), three_card.HAND_CLASSES)


class Paytables(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    cali_lowball: dict[str, CaliPaytable] = {}
    three_card_lowball: dict[str, ThreeCardPaytable] = {}

    def for_game(self, game: str) -> dict[str, CaliPaytable] | dict[str, ThreeCardPaytable]:
        return self.cali_lowball if game == "cali_lowball" else self.three_card_lowball


def read_toml(path: Path) -> dict[str, Any]:
    """Read a TOML file, turning every failure into an :class:`InputError` naming the file."""
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise InputError(str(path), ["file not found"]) from None
    except tomllib.TOMLDecodeError as error:
        raise InputError(str(path), [f"not valid TOML: {error}"]) from None
    except UnicodeDecodeError as error:
        raise InputError(str(path), [f"not valid TOML: byte {error.start} is not UTF-8 "
                                     f"(TOML files are UTF-8 text)"]) from None
    except OSError as error:
        raise InputError(str(path), [f"cannot be read: {error.strerror}"]) from None


def load_paytables(path: Path) -> Paytables:
    return validate(Paytables, read_toml(path), str(path))

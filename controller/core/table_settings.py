"""The game settings a table runs under, as frozen core objects: the game, its paytable's odds,
the variant rules, the progressive, the limits and the number of spots.

Their one source is the *settings document*: plain JSON data (odds written ``"10:1"``, rates
``"20%"``), journaled with every ``config_applied``. The settings layer
(:mod:`controller.settings.table_config`) validates the operator's TOML and writes the
document; :meth:`GameSettings.from_document` builds these objects from it. A replay rebuilds
them from the journaled document alone, so the table runs under exactly what it journaled.

The document was validated before it was first journaled; reading it again checks every
value's type and bounds all the same and names the key of the first one that is wrong.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import Any, Final

from controller.core.money import MoneyError, Odds, parse_rate
from controller.core.vocabulary import Game
from controller.core.canonical_json import canonical_json
from controller.errors import LowballError

#: The betting spots of a table, numbered from the dealer's left.
MAX_SPOTS: Final = 7
#: The games a table runs (as named in config files, scenarios and events).
GAMES: tuple[str, ...] = tuple(Game)
#: How several jackpot winners of one hand are paid (see :class:`Rules`).
JACKPOT_SPLITS: tuple[str, ...] = ("equal", "full_each")
#: Settings regulations forbid changing while a hand is in play (document keys).
REGULATED = ("game", "paytable", "paytable_lines", "progressive")
#: The document keys of a paytable that describe it rather than pay anything.
PAYTABLE_NOTES = ("status", "description", "approval")
_NO_ODDS: Mapping[str, Odds] = MappingProxyType({})


class SettingsError(LowballError, ValueError):
    """A settings document that cannot be read; the message names the key."""


@dataclass(frozen=True)
class Rules:
    """The variant switches where the game's rules allow two readings (docs/configuration.md)."""

    #: Cali LowBall: a J-high-or-worse X-Tra Bonus loses when the player loses the hand.
    xtra_bonus_loses_on_loss: bool
    #: Cali LowBall: the Lowdown Bonus is settled on a folded hand instead of forfeited.
    lowdown_bonus_survives_fold: bool
    #: Cali LowBall: one burn card leaves the shoe before the flop (read, journaled, unused).
    burn_before_flop: bool
    #: Three Card Lowball: several jackpot winners split the meter ("equal", the odd cent
    #: stays on the meter) or are each paid the whole meter ("full_each").
    jackpot_split: str


@dataclass(frozen=True)
class ProgressiveAwards:
    """Fixed progressive awards in cents, paid by the house."""

    pat_one_color: int
    pat_two_color: int
    four_high: int
    five_high: int


def meter_contribution(wager: int, rate: Fraction) -> int:
    """Cents one progressive wager of ``wager`` cents adds to the meter at ``rate``: the rule
    the settings (:mod:`controller.settings`) check a configuration with, and the table
    applies. :class:`ValueError` when ``wager x rate`` is not whole cents."""
    cents = wager * rate
    if cents.denominator != 1:
        raise ValueError(f"contribution_rate x wager = {float(cents):.4f} cents")
    return int(cents)


@dataclass(frozen=True)
class Progressive:
    """The Three Card Lowball progressive: wager amount, meter seed and contribution."""

    wager: int
    seed: int
    contribution_rate: Fraction
    awards: ProgressiveAwards
    #: The linked pool whose meter this table shows and pays (``[progressive.link] pool``);
    #: None: the table keeps its own meter.
    pool: str | None = None
    #: Cents added to the meter by one progressive wager (whole: :func:`meter_contribution`
    #: refuses it otherwise). Set once here rather than cached on first use: a compiled class
    #: has no ``__dict__`` to cache in.
    contribution: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "contribution",
                           meter_contribution(self.wager, self.contribution_rate))


@dataclass(frozen=True)
class Paytable:
    """One named paytable: its status (``seed``, ``example``, ``approved``) and, per wager it
    pays (``xtra_bonus``, ``lowdown_bonus``, ``bonus``), hand class -> odds."""

    status: str
    odds: Mapping[str, Mapping[str, Odds]]

    def for_wager(self, wager: str) -> Mapping[str, Odds]:
        """Hand class -> odds of ``wager`` (empty if this paytable does not pay it)."""
        return self.odds.get(wager, _NO_ODDS)


@dataclass(frozen=True)
class GameSetup:
    """What a hand needs from configuration: the game, its paytable, rules and progressive."""

    game: str
    paytable_name: str
    paytable: Paytable
    rules: Rules
    progressive: Progressive


@dataclass(frozen=True)
class Limits:
    """The table limits in cents, and the spots one player may wager on at once."""

    min_ante: int
    max_ante: int
    max_lowdown_bonus: int
    max_spots_per_player: int


@dataclass(frozen=True)
class GameSettings:
    """Everything a hand's outcome depends on, with the document it was read from."""

    setup: GameSetup
    spots: int
    limits: Limits
    #: the document as canonical JSON (sorted keys, no spaces): what ``config_applied`` carries
    text: str
    #: SHA-256 (hex) of the document's canonical UTF-8 JSON
    fingerprint: str = field(compare=False)

    @property
    def game(self) -> str:
        return self.setup.game

    @classmethod
    def from_document(cls, document: object) -> GameSettings:
        """Read a settings document; :class:`SettingsError` names the first bad key."""
        data = _mapping(document, "settings")
        game = _text(data, "game", "settings")
        if game not in GAMES:
            raise SettingsError(f"game: {game!r} is not one of {', '.join(GAMES)}")
        setup = GameSetup(game, _text(data, "paytable", "settings"),
                          paytable_from(data.get("paytable_lines")),
                          rules_from(data.get("rules")), progressive_from(data.get("progressive")))
        spots = _whole(data, "spots", "settings", 1, MAX_SPOTS)
        text = canonical_json(data)
        return cls(setup, spots, limits_from(data.get("limits")), text.decode(),
                   hashlib.sha256(text).hexdigest())

    def document(self) -> dict[str, Any]:
        document: dict[str, Any] = json.loads(self.text)  # the object from_document read
        return document


def settings_changed(before: GameSettings, after: GameSettings) -> tuple[str, ...]:
    """The dotted keys whose value differs (``progressive.contribution_rate``); a paytable's
    lines count as one key."""
    return _changed(before.document(), after.document())


def _changed(before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[str, ...]:
    changed: list[str] = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if isinstance(old, dict) and isinstance(new, dict) and key != "paytable_lines":
            changed += [f"{key}.{inner}" for inner in _changed(old, new)]
        elif old != new:
            changed.append(key)
    return tuple(changed)


# -- reading the document's parts --------------------------------------------------------------

#: The largest amount of money a document may name (as every parsed amount: 10^12 cents).
_MAX_CENTS = 10**12


def rules_from(document: object) -> Rules:
    data = _mapping(document, "rules")
    split = _text(data, "jackpot_split", "rules")
    if split not in JACKPOT_SPLITS:
        raise SettingsError(f"rules.jackpot_split: {split!r} is not one of "
                            f"{', '.join(JACKPOT_SPLITS)}")
    return Rules(_flag(data, "xtra_bonus_loses_on_loss"), _flag(data, "lowdown_bonus_survives_fold"),
                 _flag(data, "burn_before_flop"), split)


def progressive_from(document: object) -> Progressive:
    data = _mapping(document, "progressive")
    awards = _mapping(data.get("awards"), "progressive.awards")
    try:
        rate = parse_rate(data.get("contribution_rate"))
    except MoneyError as error:
        raise SettingsError(f"progressive.contribution_rate: {error}") from None
    wager = _whole(data, "wager", "progressive", 1, _MAX_CENTS)
    seed = _whole(data, "seed", "progressive", 0, _MAX_CENTS)
    prizes = ProgressiveAwards(*(_whole(awards, key, "progressive.awards", 0, _MAX_CENTS)
                                 for key in ("pat-4-2-A-one-color", "pat-4-2-A-two-color",
                                             "4-high", "5-high")))
    pool = data.get("pool")
    if pool is not None and (
            not isinstance(pool, str) or not 0 < len(pool) <= 32 or not pool.isascii()
            or not pool.replace("-", "").replace("_", "").isalnum()):
        raise SettingsError(f"progressive.pool: {pool!r} is not a pool id (1 to 32 "
                            "letters, digits, - and _)")
    try:
        meter_contribution(wager, rate)
    except ValueError:
        raise SettingsError(f"progressive.contribution_rate: {data['contribution_rate']} of "
                            f"{wager} cents is not whole cents") from None
    return Progressive(wager, seed, rate, prizes, pool)


def paytable_from(document: object) -> Paytable:
    data = _mapping(document, "paytable_lines")
    odds: dict[str, Mapping[str, Odds]] = {}
    for wager, lines in data.items():
        if wager in PAYTABLE_NOTES:
            continue
        where = f"paytable_lines.{wager}"
        table: dict[str, Odds] = {}
        for hand_class, text in _mapping(lines, where).items():
            try:
                table[hand_class] = Odds.parse(text)
            except MoneyError as error:
                raise SettingsError(f"{where}.{hand_class}: {error}") from None
        odds[wager] = MappingProxyType(table)
    return Paytable(_text(data, "status", "paytable_lines"), MappingProxyType(odds))


def limits_from(document: object) -> Limits:
    data = _mapping(document, "limits")
    return Limits(_whole(data, "min_ante", "limits", 1, _MAX_CENTS),
                  _whole(data, "max_ante", "limits", 1, _MAX_CENTS),
                  _whole(data, "max_lowdown_bonus", "limits", 0, _MAX_CENTS),
                  _whole(data, "max_spots_per_player", "limits", 1, MAX_SPOTS))


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        raise SettingsError(f"{where}: a table of named values is needed, "
                            f"not {type(value).__name__}")
    return value


def _text(data: Mapping[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise SettingsError(f"{where}.{key}: text is needed, not {value!r}")
    return value


def _flag(data: Mapping[str, Any], key: str) -> bool:
    value = data.get(key)
    if not isinstance(value, bool):
        raise SettingsError(f"rules.{key}: true or false is needed, not {value!r}")
    return value


def _whole(data: Mapping[str, Any], key: str, where: str, low: int, high: int) -> int:
    value = data.get(key)
    if type(value) is not int or not low <= value <= high:
        raise SettingsError(f"{where}.{key}: a whole number from {low} to {high} is needed, "
                            f"not {value!r}")
    return value

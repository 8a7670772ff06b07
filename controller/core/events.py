"""What a hand yields: typed, immutable events, in the order they happen.

The engines append every event to the hand's history and return the ones each action caused.
The daemon journals and publishes them as they are; the scenario runner prints the settlement
records. :data:`KINDS` names each event type on the wire (``CardDealt`` -> ``card_dealt``).

A card's recipient (``to``) is a seat number (1-7, from the dealer's left), or one of
``"dealer"``, ``"community"`` (the Cali LowBall flop) and ``"burn"``.

Design: events are :class:`Record` classes, which this module's compiled build (setup.py)
makes native mypyc classes. An engine creates about a hundred events a hand, and a compiled
record costs a fifth of a NamedTuple made with ``tuple.__new__``. A record keeps the
NamedTuple API the rest of the code uses: ``_fields``, ``_asdict()``, the same ``repr``,
iteration and unpacking, ``len``, indexing, pickling, defaults, and immutability (setting or
deleting an attribute raises AttributeError). It is not a tuple: it equals (and hashes as)
a record of the same type with equal values only, never a plain tuple, and has no ordering.

- Every field is typed ``Any`` for mypy: a record stores exactly what it is given, as a
  NamedTuple did (compiled code would otherwise check and convert each value: a bool given
  as an int would come back an int). Values of the wrong type are the wire's to refuse.
- The declared field types are ``_hints``, the annotation text a NamedTuple had: the
  compiled build drops class annotations, and the wire schema (controller/stream/wire.py) is
  generated from the field types. :func:`field_hints` resolves them, as
  :func:`typing.get_type_hints` resolves annotations, for records and NamedTuples alike.
- Docstrings are ``__doc__ = ...`` assignments: the compiled build drops class docstrings,
  and the wire schema carries them as descriptions (hence ``misc``, mypy's objection to
  redefining ``__doc__``, is off for this file).
- ``__init__`` sets each field with ``object.__setattr__`` (``__setattr__`` refuses): compiled,
  that is a plain store into the object; pure Python, it is a call per field, the price of
  immutability without a tuple (a pure-Python hand costs about twice what it did).
"""

# mypy: disable-error-code="misc"

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, ClassVar, Final, Union, final, get_args, get_type_hints

from controller.core.cards import Card  # noqa: F401  (the "Card" of the records' _hints)
from controller.core.vocabulary import (  # noqa: F401  (the vocabularies of the records' _hints)
    Phase,
    PlayerDecision,
    ProgressiveAward,
    WagerKey,
    WagerResult,
)

Recipient = Union[int, str]
DEALER: Final = "dealer"
COMMUNITY: Final = "community"
BURN: Final = "burn"


class Record:
    """An immutable record with named fields and the API of a NamedTuple (see the module's
    docstring). A subclass is ``@final`` and declares ``__slots__`` and ``_fields`` (the field
    names, in order), ``_hints`` (their types, as annotation text), each field as an ``Any``
    attribute, and an ``__init__`` setting every field with ``object.__setattr__``."""

    __slots__ = ()
    #: A class attribute (not, as mypy has it, an instance one), kept by the compiled build.
    __doc__: ClassVar[str | None]
    _fields: ClassVar[tuple[str, ...]] = ()
    _hints: ClassVar[dict[str, str]] = {}

    def __setattr__(self, name: str, value: object) -> None:
        if name in self._fields:
            raise AttributeError("can't set attribute")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __delattr__(self, name: str) -> None:
        if name in self._fields:
            raise AttributeError("can't delete attribute")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _astuple(self) -> tuple[Any, ...]:
        """The values, in field order."""
        return tuple([getattr(self, name) for name in self._fields])

    def _asdict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._fields}

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._astuple() == other._astuple()

    def __hash__(self) -> int:
        return hash((type(self), self._astuple()))

    def __repr__(self) -> str:
        values = ", ".join([f"{name}={getattr(self, name)!r}" for name in self._fields])
        return f"{type(self).__name__}({values})"

    def __iter__(self) -> Iterator[Any]:
        return iter(self._astuple())

    def __len__(self) -> int:
        return len(self._fields)

    def __getitem__(self, index: Any) -> Any:  # an int or a slice, as for a tuple
        return self._astuple()[index]

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), self._astuple()


def is_record_type(hint: object) -> bool:
    """Whether ``hint`` is a record class: a :class:`Record`, or a NamedTuple (the table's own
    events, :mod:`controller.core.table_events`, are NamedTuples)."""
    return isinstance(hint, type) and (
        issubclass(hint, Record) or (issubclass(hint, tuple) and hasattr(hint, "_fields")))


def field_hints(cls: type) -> dict[str, Any]:
    """The type of each field of a record class, in field order: a :class:`Record`'s
    ``_hints`` resolved exactly as :func:`typing.get_type_hints` resolves a NamedTuple's
    annotations (in the class's module)."""
    name, module = cls.__name__, cls.__module__
    if issubclass(cls, Record):
        holder = type(name, (), {"__annotations__": dict(cls._hints), "__module__": module})
        return get_type_hints(holder)
    return get_type_hints(cls)


@final
class Wager(Record):
    __doc__ = (
        """One locked wager: seat, wager key (``ante``, ``xtra_bonus``, ...), amount in cents,
    and ``player``, the id of who plays the seat as the dealer gave it ("" when none was).""")

    __slots__ = ("seat", "wager", "amount", "player")
    _fields = ("seat", "wager", "amount", "player")
    _hints = {"seat": "int", "wager": "WagerKey", "amount": "int", "player": "str"}
    seat: Any
    wager: Any
    amount: Any
    player: Any

    def __init__(self, seat: Any, wager: Any, amount: Any, player: Any = "") -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "wager", wager)
        object.__setattr__(self, "amount", amount)
        object.__setattr__(self, "player", player)


@final
class WagersLocked(Record):
    __doc__ = (
        """The hand has begun: these wagers are locked and will each be settled exactly once.""")

    __slots__ = ("game", "paytable", "wagers")
    _fields = ("game", "paytable", "wagers")
    _hints = {"game": "str", "paytable": "str", "wagers": "tuple[Wager, ...]"}
    game: Any
    paytable: Any
    wagers: Any

    def __init__(self, game: Any, paytable: Any, wagers: Any) -> None:
        object.__setattr__(self, "game", game)
        object.__setattr__(self, "paytable", paytable)
        object.__setattr__(self, "wagers", wagers)


@final
class MeterContributed(Record):
    __doc__ = """Progressive wagers locked: their contribution is added to the jackpot meter."""

    __slots__ = ("before", "contribution", "after")
    _fields = ("before", "contribution", "after")
    _hints = {"before": "int", "contribution": "int", "after": "int"}
    before: Any
    contribution: Any
    after: Any

    def __init__(self, before: Any, contribution: Any, after: Any) -> None:
        object.__setattr__(self, "before", before)
        object.__setattr__(self, "contribution", contribution)
        object.__setattr__(self, "after", after)


@final
class PhaseStarted(Record):
    __slots__ = ("phase",)
    _fields = ("phase",)
    _hints = {"phase": "Phase"}
    phase: Any

    def __init__(self, phase: Any) -> None:
        object.__setattr__(self, "phase", phase)


@final
class CardDealt(Record):
    __doc__ = """A card from the shoe, assigned to its recipient by the deal order."""

    __slots__ = ("card", "to", "phase")
    _fields = ("card", "to", "phase")
    _hints = {"card": "Card", "to": "Recipient", "phase": "Phase"}
    card: Any
    to: Any
    phase: Any

    def __init__(self, card: Any, to: Any, phase: Any) -> None:
        object.__setattr__(self, "card", card)
        object.__setattr__(self, "to", to)
        object.__setattr__(self, "phase", phase)


@final
class DecisionsDue(Record):
    __doc__ = """These seats must now act, choosing one of ``options``."""

    __slots__ = ("phase", "seats", "options")
    _fields = ("phase", "seats", "options")
    _hints = {"phase": "Phase", "seats": "tuple[int, ...]",
              "options": "tuple[PlayerDecision, ...]"}
    phase: Any
    seats: Any
    options: Any

    def __init__(self, phase: Any, seats: Any, options: Any) -> None:
        object.__setattr__(self, "phase", phase)
        object.__setattr__(self, "seats", seats)
        object.__setattr__(self, "options", options)


@final
class DecisionMade(Record):
    __doc__ = """A player's decision, keyed in by the dealer. ``raised`` is the Raise wager it adds;
    ``cards`` are the cards a Three Card Lowball player discards."""

    __slots__ = ("seat", "decision", "raised", "cards")
    _fields = ("seat", "decision", "raised", "cards")
    _hints = {"seat": "int", "decision": "PlayerDecision", "raised": "int",
              "cards": "tuple[Card, ...]"}
    seat: Any
    decision: Any
    raised: Any
    cards: Any

    def __init__(self, seat: Any, decision: Any, raised: Any = 0, cards: Any = ()) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "decision", decision)
        object.__setattr__(self, "raised", raised)
        object.__setattr__(self, "cards", cards)


@final
class HouseWay(Record):
    __doc__ = """The Three Card Lowball dealer's draw, computed by the controller and shown to the
    dealer: the cards to discard from ``hand`` and the house-way rule that chose them."""

    __slots__ = ("hand", "discard", "rule")
    _fields = ("hand", "discard", "rule")
    _hints = {"hand": "tuple[Card, ...]", "discard": "tuple[Card, ...]", "rule": "str"}
    hand: Any
    discard: Any
    rule: Any

    def __init__(self, hand: Any, discard: Any, rule: Any) -> None:
        object.__setattr__(self, "hand", hand)
        object.__setattr__(self, "discard", discard)
        object.__setattr__(self, "rule", rule)


@final
class HandShown(Record):
    __doc__ = """A final hand at the showdown (folded hands too, with ``folded`` set)."""

    __slots__ = ("to", "cards", "hand_class", "folded")
    _fields = ("to", "cards", "hand_class", "folded")
    _hints = {"to": "Recipient", "cards": "tuple[Card, ...]", "hand_class": "str", "folded": "bool"}
    to: Any
    cards: Any
    hand_class: Any
    folded: Any

    def __init__(self, to: Any, cards: Any, hand_class: Any, folded: Any = False) -> None:
        object.__setattr__(self, "to", to)
        object.__setattr__(self, "cards", cards)
        object.__setattr__(self, "hand_class", hand_class)
        object.__setattr__(self, "folded", folded)


@final
class WagerSettled(Record):
    __doc__ = """One wager settled. ``net`` is what the player gains (+) or loses (-); a push is 0.
    ``result`` is ``win``, ``lose``, ``push`` or ``forfeit`` (lost to a fold). ``player``: the
    seat's player id ("" when none was given)."""

    __slots__ = ("seat", "wager", "amount", "result", "net", "player")
    _fields = ("seat", "wager", "amount", "result", "net", "player")
    _hints = {"seat": "int", "wager": "WagerKey", "amount": "int", "result": "WagerResult",
              "net": "int", "player": "str"}
    seat: Any
    wager: Any
    amount: Any
    result: Any
    net: Any
    player: Any

    def __init__(self, seat: Any, wager: Any, amount: Any, result: Any, net: Any,
                 player: Any = "") -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "wager", wager)
        object.__setattr__(self, "amount", amount)
        object.__setattr__(self, "result", result)
        object.__setattr__(self, "net", net)
        object.__setattr__(self, "player", player)


@final
class ProgressiveAwarded(Record):
    __doc__ = (
        """A progressive award: ``jackpot`` (from the meter) or a fixed award (from the house).
    ``player``: the seat's player id ("" when none was given), whom the dealer pays.""")

    __slots__ = ("seat", "award", "amount", "player")
    _fields = ("seat", "award", "amount", "player")
    _hints = {"seat": "int", "award": "ProgressiveAward", "amount": "int", "player": "str"}
    seat: Any
    award: Any
    amount: Any
    player: Any

    def __init__(self, seat: Any, award: Any, amount: Any, player: Any = "") -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "award", award)
        object.__setattr__(self, "amount", amount)
        object.__setattr__(self, "player", player)


@final
class MeterSettled(Record):
    __doc__ = """The meter over the hand: ``after = before + contributions - awards + reseed``.
    ``awards`` is the jackpot paid from the meter; ``reseed`` the seed the house puts back
    after a jackpot (applied once a supervisor has verified the hand-pay)."""

    __slots__ = ("before", "contributions", "awards", "reseed", "after")
    _fields = ("before", "contributions", "awards", "reseed", "after")
    _hints = {"before": "int", "contributions": "int", "awards": "int", "reseed": "int",
              "after": "int"}
    before: Any
    contributions: Any
    awards: Any
    reseed: Any
    after: Any

    def __init__(self, before: Any, contributions: Any, awards: Any, reseed: Any,
                 after: Any) -> None:
        object.__setattr__(self, "before", before)
        object.__setattr__(self, "contributions", contributions)
        object.__setattr__(self, "awards", awards)
        object.__setattr__(self, "reseed", reseed)
        object.__setattr__(self, "after", after)


@final
class HandSettled(Record):
    __doc__ = (
        """The hand is over. ``house_result`` is the house's gain: minus the players' total net
    over every wager and award.""")

    __slots__ = ("players_net", "house_result")
    _fields = ("players_net", "house_result")
    _hints = {"players_net": "int", "house_result": "int"}
    players_net: Any
    house_result: Any

    def __init__(self, players_net: Any, house_result: Any) -> None:
        object.__setattr__(self, "players_net", players_net)
        object.__setattr__(self, "house_result", house_result)


Event = Union[WagersLocked, MeterContributed, PhaseStarted, CardDealt, DecisionsDue,
              DecisionMade, HouseWay, HandShown, WagerSettled, ProgressiveAwarded,
              MeterSettled, HandSettled]

def kinds_of(union: object) -> dict[type, str]:
    """Each event type of ``union`` -> its name on the wire (``CardDealt`` -> ``card_dealt``)."""
    return {cls: re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower()
            for cls in get_args(union)}


KINDS: dict[type, str] = kinds_of(Event)

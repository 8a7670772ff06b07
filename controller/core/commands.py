"""What a dealer or a supervisor may ask of the table, as frozen core objects.

The command channel's request models (:mod:`controller.stream.table_commands`) parse and bound
a client's JSON and build these; the table carries them out (``match`` on the class). An
accepted command is journaled by name with its :meth:`Command.arguments`, and
:func:`command_from_record` rebuilds it for a replay.

Who may give a command is a property of its class (``supervisor_only``), never a field: a
client's JSON cannot reach a ClassVar.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from controller.core.canonical_json import canonical_json
from controller.core.vocabulary import Role
from controller.errors import LowballError

DEALER_ROLE, SUPERVISOR_ROLE = Role.DEALER, Role.SUPERVISOR


class RecordError(LowballError, ValueError):
    """A journaled command that does not rebuild; the message says why."""


#: A command class -> its fields' names, in order (found once a class, not at every command).
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(kind: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = tuple(field.name for field in fields(kind))
    return names


@dataclass(frozen=True)
class Command:
    #: the command's name on the wire and in the journal
    command: ClassVar[str]
    #: whether only a supervisor may give it
    supervisor_only: ClassVar[bool] = False

    def arguments(self) -> str:
        """The arguments as canonical JSON (what the journal keeps)."""
        # Every field is a scalar: read as they are, without asdict's deep copy.
        return canonical_json({name: getattr(self, name)
                               for name in _field_names(type(self))}).decode()


@dataclass(frozen=True)
class Open(Command):
    """Open the table for betting (from CLOSED, or after a settled hand)."""

    command: ClassVar[str] = "open"


@dataclass(frozen=True)
class Close(Command):
    """Close the table; refused while a hand is in play."""

    command: ClassVar[str] = "close"


@dataclass(frozen=True)
class Place(Command):
    """Place (or change) one wager on a spot while the table is open. ``player``: who plays
    the spot (spots of one player count against the per-player limit); empty = the spot's
    own player."""

    command: ClassVar[str] = "place"
    spot: int
    wager: str
    amount: int
    player: str = ""


@dataclass(frozen=True)
class SeatPlayer(Command):
    """Name who plays a spot (a player-card number or a name as the dealer gave it; ""
    for an unrated player) between hands. The name stays with the spot, hand after hand,
    until it is changed; a ``place`` naming another player names that one for the hand."""

    command: ClassVar[str] = "seat_player"
    spot: int
    player: str


@dataclass(frozen=True)
class ChangeDealer(Command):
    """The dealer now at the table (a name or a badge number), between hands: each hand
    from the next one on names this dealer (``hand_started``'s ``dealer``)."""

    command: ClassVar[str] = "change_dealer"
    dealer: str


@dataclass(frozen=True)
class Cancel(Command):
    """Take one wager off a spot while the table is open."""

    command: ClassVar[str] = "cancel"
    spot: int
    wager: str


@dataclass(frozen=True)
class Lock(Command):
    """Lock the wagers and start the hand."""

    command: ClassVar[str] = "lock"


@dataclass(frozen=True)
class Decide(Command):
    """A player's decision as the dealer keyed it (``raise``, ``discard:Kh,Qs``...)."""

    command: ClassVar[str] = "decide"
    spot: int
    decision: str


@dataclass(frozen=True)
class Continue(Command):
    """Resume a paused hand after a recoverable device fault was cleared."""

    command: ClassVar[str] = "continue"


@dataclass(frozen=True)
class Void(Command):
    """Void the hand in play: every wager returned, progressive contributions reversed."""

    command: ClassVar[str] = "void"
    supervisor_only: ClassVar[bool] = True
    reason: str


@dataclass(frozen=True)
class Burn(Command):
    """Burn the cards that left the shoe in this hand and were dealt to no one (a misread, an
    extra card, a card the count skipped), and go on with the hand where the card-room rules
    allow it: after the starting hands are complete (Roberts' lowball rules 1 and 9)."""

    command: ClassVar[str] = "burn"
    supervisor_only: ClassVar[bool] = True
    reason: str


@dataclass(frozen=True)
class VerifyJackpot(Command):
    """A supervisor verified the jackpot hand-pay: the meter resets to its seed."""

    command: ClassVar[str] = "verify_jackpot"
    supervisor_only: ClassVar[bool] = True


@dataclass(frozen=True)
class Reload(Command):
    """Re-read the table's config file (the daemon reads it; :meth:`Table.reload` decides)."""

    command: ClassVar[str] = "reload"
    supervisor_only: ClassVar[bool] = True


@dataclass(frozen=True)
class AdjustMeter(Command):
    """A supervisor's correction of the jackpot meter between hands: ``amount`` cents added
    (negative: taken off), with the reason journaled beside it."""

    command: ClassVar[str] = "adjust_meter"
    supervisor_only: ClassVar[bool] = True
    amount: int
    reason: str


@dataclass(frozen=True)
class SignIn(Command):
    """A supervisor signed in (at the console): journaled, changes nothing at the table."""

    command: ClassVar[str] = "sign_in"
    supervisor_only: ClassVar[bool] = True


@dataclass(frozen=True)
class AcknowledgeAlarm(Command):
    """A supervisor acknowledges the alarm journaled at ``seq``: journaled with who it was,
    changes nothing at the table. Which seqs are alarms waiting for it is the daemon's to
    know (it owns the journal): it refuses any other before the table sees the command."""

    command: ClassVar[str] = "acknowledge_alarm"
    supervisor_only: ClassVar[bool] = True
    seq: int


#: Command name -> its class.
COMMANDS: dict[str, type[Command]] = {cls.command: cls for cls in (
    Open, Close, Place, Cancel, Lock, Decide, Continue, Void, Burn, VerifyJackpot, Reload,
    AdjustMeter, SignIn, AcknowledgeAlarm, SeatPlayer, ChangeDealer)}


def command_from_record(name: str, arguments: str) -> Command:
    """Rebuild a journaled command (for a replay after a restart). The journal holds only
    commands that were parsed and accepted; anything else is a :class:`RecordError`."""
    cls = COMMANDS.get(name)
    if cls is None:
        raise RecordError(f"journaled command {name!r} is not a command")
    try:
        data: Any = json.loads(arguments)
        command = cls(**data)
    except (ValueError, TypeError) as error:
        raise RecordError(f"journaled {name} arguments {arguments!r}: {error}") from None
    for field in fields(command):
        kind = _FIELD_TYPES[str(field.type)]
        if type(getattr(command, field.name)) is not kind:
            raise RecordError(f"journaled {name} arguments {arguments!r}: {field.name} is "
                              f"not {kind.__name__}")
    return command


_FIELD_TYPES: dict[str, type] = {"int": int, "str": str}

"""Dealer and supervisor commands: what may be asked of the table, validated before use.

A command arrives as JSON (``{"command": "place", "spot": 3, "wager": "ante", "amount":
1000}``) on the command channel or from ``lowball-table dealer``. Each is a pydantic model that
forbids unknown keys, so a typo is answered with the key path, and builds the core command the
table carries out (:mod:`controller.core.commands`). An accepted command is journaled with its
arguments and can be replayed exactly.

Why each command is declared twice, here and in the core: the two are the two sides of a
boundary. The core's dataclasses are what the table carries out and a replay rebuilds from the
journal, with the standard library only (the core imports no pydantic); these models are what
a client may send, each number and text bounded where it is parsed, refused with pydantic's
key paths. A model names its core command (``core_command``), takes ``supervisor_only`` from
it and builds it; ``tests/stream/test_command_channel.py`` checks that each pair has the same name
and arguments.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
)

from controller.core import commands
from controller.core.canonical_json import canonical_json
from controller.core.commands import DEALER_ROLE as DEALER_ROLE
from controller.core.money import format_cents
from controller.core.commands import SUPERVISOR_ROLE as SUPERVISOR_ROLE
from controller.core.player_key import script_problem
from controller.core.table_settings import MAX_SPOTS
from controller.settings.validation import InputError, PositiveCents, problems_of

Spot = Annotated[int, Field(strict=True, ge=1, le=MAX_SPOTS)]
#: The longest player id, in characters.
MAX_PLAYER_ID = 64
#: A player id: letters (any script, with their marks: accents, vowel signs) and digits, with
#: single spaces and ``. ' # - _`` between
#: them, in Unicode's plain form (NFKC). It reaches every wager, settlement and award record,
#: the logs and the screens, so it holds no control, formatting (bidirectional overrides) or
#: markup character; and one player must not pass for two (the four-spot limit, the floor's
#: ratings): full-width and other compatibility forms and an accent written apart from its
#: letter (not NFKC), the letters that draw nothing (the Hangul fillers) and an id that mixes
#: scripts (Unicode TR39 "highly restrictive": a Cyrillic "а" in "Pаul") are refused. Case and
#: another script's lookalike letters do not make another player: the table compares ids by
#: their key (:func:`controller.core.player_key.player_key`).
_PLAYER_ID = re.compile(r"\w(?:[\w.'#-]| (?! ))*(?<=\w)")
#: Letters (Unicode category Lo) that draw nothing: "P-1" and "P-1\u3164" look the same.
_INVISIBLE_LETTERS = frozenset("\u115f\u1160\u3164\uffa0")
#: Marks that draw nothing of their own (Unicode's default-ignorable marks: the grapheme
#: joiner, the variation selectors, the Khmer inherent vowels, the Mongolian free variation
#: selectors): "P-1" and "P\u034f-1" look the same.
_INVISIBLE_MARKS = frozenset(
    "\u034f\u17b4\u17b5" + "".join(map(chr, (*range(0x180B, 0x1810), *range(0xFE00, 0xFE10),
                                          *range(0xE0100, 0xE01F0)))))


def _without_marks(value: str) -> str | None:
    """``value`` without its combining marks (the vowel signs of Devanagari, Thai or Tamil, an
    accent with no precomposed letter: part of the letter they follow); None if a mark does
    not follow a letter, a digit or another mark."""
    kept: list[str] = []
    after_letter = False
    for char in value:
        if unicodedata.category(char)[0] == "M":
            if not after_letter:
                return None
            continue
        kept.append(char)
        after_letter = char.isalnum()
    return "".join(kept)


def _player_id_problem(value: str) -> str | None:
    if unicodedata.normalize("NFKC", value) != value:
        return "is not in Unicode's plain form (NFKC: no full-width forms or separate accents)"
    if invisible := _INVISIBLE_LETTERS.intersection(value):
        return f"holds U+{ord(min(invisible)):04X}, a letter that draws nothing"
    if invisible := _INVISIBLE_MARKS.intersection(value):
        return f"holds U+{ord(min(invisible)):04X}, a mark that draws nothing"
    letters = _without_marks(value)
    if letters is None:
        return "holds a mark (an accent or vowel sign) that does not follow a letter"
    if not _PLAYER_ID.fullmatch(letters):
        return "holds another character, two spaces in a row, or begins or ends with one"
    return script_problem(value)


def _player_id(value: str) -> str:
    if value and (problem := _player_id_problem(value)) is not None:
        raise ValueError(f"a player id is letters and digits, with single spaces and . ' # - _ "
                         f"between them: this one {problem}")
    return value


PlayerId = Annotated[str, Field(strict=True, max_length=MAX_PLAYER_ID),
                     AfterValidator(_player_id)]
def _said_something(value: str) -> str:
    if not value.strip():
        raise ValueError("a reason says why, in words: this one is only spaces")
    return value


#: A supervisor's reason (a void, a burn, a meter adjustment): journaled and read by
#: surveillance, so it says something: 1 to 200 characters, not only spaces.
Reason = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_said_something)]
#: The largest meter adjustment one command makes, in cents (100 million dollars).
MAX_METER_ADJUSTMENT = 10**10


class _Command(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    #: The core command this request builds (:mod:`controller.core.commands`).
    core_command: ClassVar[type[commands.Command]]
    #: Whether only a supervisor may give the command: a property of the core command's
    #: class, never a field (a client's JSON cannot reach a ClassVar).
    supervisor_only: ClassVar[bool] = False

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls.supervisor_only = cls.core_command.supervisor_only

    def to_core(self) -> commands.Command:
        return self.core_command(**self.model_dump(exclude={"command"}))


class Open(_Command):
    """Open the table for betting (from CLOSED, or after a settled hand)."""

    core_command = commands.Open
    command: Literal["open"]


class Close(_Command):
    """Close the table; refused while a hand is in play."""

    core_command = commands.Close
    command: Literal["close"]


class Place(_Command):
    """Place (or change) one wager on a spot while the table is open."""

    core_command = commands.Place
    command: Literal["place"]
    spot: Spot
    wager: Annotated[str, Field(min_length=1, max_length=32)]
    amount: PositiveCents
    #: Who is playing the spot (a player card, a seat name); spots of one player count
    #: against the four-spot limit. Empty = the spot's own player.
    player: PlayerId = ""


class SeatPlayer(_Command):
    """Name who plays a spot, between hands: a player-card number or a name (a player id),
    or "" for an unrated player. The name stays with the spot until changed."""

    core_command = commands.SeatPlayer
    command: Literal["seat_player"]
    spot: Spot
    player: PlayerId


class ChangeDealer(_Command):
    """The dealer now at the table, by name or badge number (written as a player id is;
    "" when the dealer leaves and none takes the table), between hands."""

    core_command = commands.ChangeDealer
    command: Literal["change_dealer"]
    dealer: PlayerId


class Cancel(_Command):
    core_command = commands.Cancel
    command: Literal["cancel"]
    spot: Spot
    wager: Annotated[str, Field(min_length=1, max_length=32)]


class Lock(_Command):
    """Lock the wagers and start the hand."""

    core_command = commands.Lock
    command: Literal["lock"]


class Decide(_Command):
    """A player's decision: ``raise``, ``check``, ``bet``, ``fold`` (Cali LowBall);
    ``stand`` or ``discard:Kh,Qs`` (Three Card Lowball)."""

    core_command = commands.Decide
    command: Literal["decide"]
    spot: Spot
    decision: Annotated[str, Field(min_length=1, max_length=32)]


class Continue(_Command):
    """Resume a paused hand after a recoverable device fault was cleared."""

    core_command = commands.Continue
    command: Literal["continue"]


class Void(_Command):
    """Void the hand in play: every wager returned, progressive contributions reversed."""

    core_command = commands.Void
    command: Literal["void"]
    reason: Reason


class Burn(_Command):
    """Burn the cards out of the shoe in this hand that went to no one (a misread, an extra
    card, a card the count skipped) and go on with the hand, where the rules allow it."""

    core_command = commands.Burn
    command: Literal["burn"]
    reason: Reason


class VerifyJackpot(_Command):
    """A supervisor verified the jackpot hand-pay: the meter resets to its seed."""

    core_command = commands.VerifyJackpot
    command: Literal["verify_jackpot"]


class Reload(_Command):
    """Re-read the table's config file. The game, paytable and progressive change only
    between hands (regulations); the daemon reads the file, the table decides."""

    core_command = commands.Reload
    command: Literal["reload"]


class AdjustMeter(_Command):
    """A supervisor's correction of the jackpot meter between hands: ``amount`` cents added
    (negative: taken off), with the reason journaled beside it. The meter never goes below 0."""

    core_command = commands.AdjustMeter
    command: Literal["adjust_meter"]
    amount: Annotated[int, Field(strict=True, ge=-MAX_METER_ADJUSTMENT,
                                 le=MAX_METER_ADJUSTMENT)]
    reason: Reason


class SignIn(_Command):
    """A supervisor signed in (at the console): journaled with who it was, changes nothing
    at the table. A wrong credential is refused and counted like any other."""

    core_command = commands.SignIn
    command: Literal["sign_in"]


class AcknowledgeAlarm(_Command):
    """A supervisor acknowledges the alarm journaled at ``seq``; the daemon refuses a seq
    that is no alarm, or one already acknowledged."""

    core_command = commands.AcknowledgeAlarm
    command: Literal["acknowledge_alarm"]
    seq: Annotated[int, Field(strict=True, ge=1, le=2**63 - 1)]


Command = Annotated[Open | Close | Place | Cancel | Lock | Decide | Continue | Void | Burn
                    | VerifyJackpot | Reload | AdjustMeter | SignIn | AcknowledgeAlarm
                    | SeatPlayer | ChangeDealer,
                    Field(discriminator="command")]
COMMAND_CLASSES: tuple[type[_Command], ...] = get_args(get_args(Command)[0])
#: Command name -> its class.
COMMANDS: dict[str, type[_Command]] = {
    get_args(cls.model_fields["command"].annotation)[0]: cls for cls in COMMAND_CLASSES}
COMMAND_NAMES = tuple(COMMANDS)
_ADAPTER = TypeAdapter(Command)
#: A command name worth repeating in an error or a journal record (anything else a client
#: sends as a name is described by its length only: it could be anything, a secret included).
_NAME_LIKE = re.compile(r"[a-z_]{1,32}")


#: The id a client gives a request (``request_id``), so that it can withdraw the request if
#: no answer comes (:class:`Withdraw`): 8 to 64 letters, digits, ``-`` or ``_``
#: (``CommandClient`` sends a random UUID's 32 hex digits).
RequestId = Annotated[str, Field(strict=True, pattern=r"^[A-Za-z0-9_-]{8,64}$")]
#: The most requests one ``withdraw`` names.
MAX_WITHDRAWN = 64


class Withdraw(BaseModel):
    """Withdraw requests whose answer did not come in time, named by their ``request_id``:
    each is answered as carried out (with its record's seq) or withdrawn (never carried out:
    the table refuses it if it arrives later). The daemon answers it, nothing is journaled."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    command: Literal["withdraw"]
    requests: Annotated[list[RequestId], Field(min_length=1, max_length=MAX_WITHDRAWN)]


_REQUEST_ID: TypeAdapter[str] = TypeAdapter(RequestId)


def parse_request_id(value: Any) -> str:
    """A request's ``request_id``; :class:`InputError` when it is not one."""
    try:
        return _REQUEST_ID.validate_python(value)
    except ValidationError:
        raise InputError("command", ["request_id: 8 to 64 letters, digits, '-' or '_'"]) \
            from None


def parse_withdraw(data: Any) -> Withdraw:
    """A ``withdraw`` request; :class:`InputError` names each bad key."""
    try:
        return Withdraw.model_validate(data)
    except ValidationError as error:
        raise InputError("command", problems_of(error)) from None


def name_of(data: Any) -> str:
    """The command's name as a refusal may record it: a known name, or ``?``."""
    name = data.get("command") if isinstance(data, dict) else None
    return name if isinstance(name, str) and name in COMMANDS else "?"


def refused_arguments(data: dict[str, Any]) -> str:
    """What the journal keeps of a command refused before it could be parsed: the values of
    the command's own fields (cut short), and the *names* only of any other key. A value
    under an unknown key (``"Credential"``, ``"secret"``) is never repeated, since the
    journal is published, to the CMS too."""
    cls = COMMANDS.get(name_of(data))
    fields = set(cls.model_fields) - {"command"} if cls is not None else set()
    shown: dict[str, Any] = {key: _short(value) for key, value in data.items()
                             if key in fields}
    unknown = sorted(_short(str(key), 32) for key in data if key not in fields
                     and key != "command")
    if unknown:
        shown["unknown_keys"] = unknown[:10] + ([f"... {len(unknown) - 10} more"]
                                                if len(unknown) > 10 else [])
    return canonical_json(shown).decode()


def _short(value: Any, length: int = 64) -> Any:
    """A value small enough for a refusal record: short text, a bounded integer, or a
    description of anything else."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if abs(value) <= 2**63 - 1 else f"(an integer of {len(str(value))} digits)"
    if isinstance(value, str):
        return value if len(value) <= length else value[:length] + "..."
    return f"(a JSON {'array' if isinstance(value, list) else type(value).__name__})"


def _said(name: Any) -> str:
    """An unknown command name as an error may repeat it."""
    if isinstance(name, str):
        return repr(name) if _NAME_LIKE.fullmatch(name) else f"(text of {len(name)} characters)"
    return f"(not text: {type(name).__name__})"


def parse_command(data: Any, source: str = "command") -> commands.Command:
    """The core command a client's decoded JSON asks for; :class:`InputError` names each bad
    key."""
    if isinstance(data, dict) and "command" in data and data["command"] not in COMMAND_NAMES:
        raise InputError(source, [f"command: unknown command {_said(data['command'])} "
                                  f"(commands: {', '.join(COMMAND_NAMES)})"])
    try:
        return _ADAPTER.validate_python(data).to_core()
    except ValidationError as error:
        problems = [_in_cents(problem.replace(f"{data.get('command')}.", "", 1))
                    if isinstance(data, dict) else problem for problem in problems_of(error)]
        raise InputError(source, problems) from None


#: pydantic's words for a bound, with the bound
_BOUND = re.compile(r"^amount: Input should be (greater than|less than or equal to|greater than "
                    r"or equal to) (-?\d+)$")


def _in_cents(problem: str) -> str:
    """A refused ``amount`` in the wire's unit, named (integer cents), with the bound also in
    dollars: whoever reads the refusal sees which unit the number is in."""
    if problem == "amount: Input should be a valid integer":
        return "amount (in cents): a whole number of cents (2500 cents is $25.00), never text or a fraction"
    match = _BOUND.match(problem)
    if match is None:
        return problem
    bound = int(match[2])
    words = {"greater than": "more than", "less than or equal to": "at most",
             "greater than or equal to": "at least"}[match[1]]
    return f"amount (in cents): {words} {bound} cents ({format_cents(bound)})"

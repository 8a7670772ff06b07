"""What a browser may send the console over the WebSocket: hostile until parsed.

One message is one JSON object of at most :data:`MAX_MESSAGE_BYTES`, checked by a pydantic
model that forbids unknown keys and bounds every field. A dealer's screen may send only the
dealer's commands (the command models of :mod:`controller.stream.table_commands`, which bound
spots, amounts and text); a supervisor's command is not a dealer message at all, whatever it
says. Each command carries an ``id`` chosen by the browser: the console answers a repeated id
with the first answer and does not send the command again (see :class:`Deduplicator`).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from controller.errors import LowballError
from controller.stream.table_commands import (
    Burn,
    Cancel,
    ChangeDealer,
    Close,
    Continue,
    Decide,
    Lock,
    Open,
    Place,
    Reload,
    SeatPlayer,
    VerifyJackpot,
    Void,
)
from controller.settings.pins import MAX_DIGITS, MIN_DIGITS, is_pin
from controller.settings.validation import problems_of

MAX_MESSAGE_BYTES = 4096
#: Answers remembered for repeated ids (per console).
REMEMBERED = 1024

SUPERVISOR_NAMES = ("void", "burn", "verify_jackpot", "reload")
DealerCommand = Annotated[Open | Close | Place | Cancel | Lock | Decide | Continue
                          | SeatPlayer | ChangeDealer, Field(discriminator="command")]
AnyCommand = Annotated[Open | Close | Place | Cancel | Lock | Decide | Continue
                       | SeatPlayer | ChangeDealer
                       | Void | Burn | VerifyJackpot | Reload, Field(discriminator="command")]
CommandId = Annotated[str, Field(pattern=r"^[A-Za-z0-9-]{8,64}$")]


class CommandMessage(BaseModel):
    """``{"type": "command", "id": "...", "command": {"command": "lock"}}``"""

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["command"]
    id: CommandId
    command: DealerCommand


class SupervisorMessage(CommandMessage):
    """A message from a screen a supervisor has signed in on: the supervisor's commands too."""

    command: AnyCommand  # type: ignore[assignment]


def _credential_or_pin(value: str) -> str:
    if len(value) < 8 and not is_pin(value):
        raise ValueError(f"a credential is 8 to 256 characters, a PIN {MIN_DIGITS} to "
                         f"{MAX_DIGITS} digits")
    return value


class SignIn(BaseModel):
    """The body of ``POST /api/sign-in``: a name, and its credential or (a supervisor's) PIN."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,31}$")]
    credential: Annotated[str, Field(min_length=MIN_DIGITS, max_length=256),
                          AfterValidator(_credential_or_pin)]


class RecallRequest(BaseModel):
    """The pit asks for one hand in full: ``{"type": "recall", "hand_id": "TCL-01-000017"}``"""

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["recall"]
    hand_id: Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,32}-[0-9]{6,}$", max_length=48)]


class Acknowledge(BaseModel):
    """A supervisor acknowledges an alarm: ``{"type": "acknowledge", "seq": 812}``"""

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["acknowledge"]
    seq: Annotated[int, Field(strict=True, ge=1, le=2**63 - 1)]


PitMessage = Annotated[RecallRequest | Acknowledge, Field(discriminator="type")]
_PIT: TypeAdapter[RecallRequest | Acknowledge] = TypeAdapter(PitMessage)


def parse_pit_message(text: str | bytes) -> RecallRequest | Acknowledge:
    """What the pit's read-only screen may send: a recall or an acknowledgement, no command."""
    if len(text) > MAX_MESSAGE_BYTES:
        raise BadMessage(f"a message is at most {MAX_MESSAGE_BYTES} bytes")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise BadMessage(f"not valid JSON: {error}") from None
    if isinstance(data, dict) and data.get("type") == "command":
        raise BadMessage("the pit's screen is read-only: it gives no command")
    try:
        return _PIT.validate_python(data)
    except ValidationError as error:
        raise BadMessage("; ".join(problems_of(error)[:5])) from None


_MESSAGE: TypeAdapter[CommandMessage] = TypeAdapter(CommandMessage)
_SUPERVISOR_MESSAGE: TypeAdapter[SupervisorMessage] = TypeAdapter(SupervisorMessage)
_SIGN_IN: TypeAdapter[SignIn] = TypeAdapter(SignIn)


class BadMessage(LowballError, ValueError):
    """A message the console will not act on; the text says why, for the screen."""


def parse_sign_in(body: bytes) -> SignIn:
    if len(body) > MAX_MESSAGE_BYTES:
        raise BadMessage(f"a sign-in is at most {MAX_MESSAGE_BYTES} bytes")
    try:
        return _SIGN_IN.validate_json(body)
    except ValidationError as error:
        # never repeat what was typed: it may be the credential
        raise BadMessage("; ".join(f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}"
                                   for e in error.errors(include_url=False)
                                   if e["type"] != "json_invalid") or "not valid JSON") from None


def parse_message(text: str | bytes, *, supervisor: str | None = None) -> CommandMessage:
    """A screen's message. ``supervisor``: why a supervisor's command is refused (no one is
    signed in on this screen, or the session expired), or None when one is signed in."""
    if len(text) > MAX_MESSAGE_BYTES:
        raise BadMessage(f"a message is at most {MAX_MESSAGE_BYTES} bytes; this one is "
                         f"{len(text)}")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise BadMessage(f"not valid JSON: {error}") from None
    if not isinstance(data, dict):
        raise BadMessage("a message is a JSON object such as {\"type\": \"command\", "
                         "\"id\": \"...\", \"command\": {\"command\": \"lock\"}}")
    command = data.get("command")
    name = command.get("command") if isinstance(command, dict) else None
    if name in SUPERVISOR_NAMES and supervisor is not None:
        raise BadMessage(f"'{name}' is a supervisor's command: {supervisor}")
    try:
        if supervisor is None:
            return _SUPERVISOR_MESSAGE.validate_python(data)
        return _MESSAGE.validate_python(data)
    except ValidationError as error:
        raise BadMessage("; ".join(problems_of(error)[:5])) from None


def request_of(message: CommandMessage, by: str, credential: str | None = None,
               asked_from: str = "") -> dict[str, Any]:
    """The command as the daemon's command channel takes it (a supervisor's with the
    credential the console holds for the supervisor's one command, and the screen that
    asked, which the table journals beside who authorized it)."""
    request = {**message.command.model_dump(), "by": by}
    if credential is not None and message.command.command in SUPERVISOR_NAMES:
        request["credential"] = credential
        if asked_from:
            request["asked_from"] = asked_from
    return request


class Deduplicator:
    """The answers to the last :data:`REMEMBERED` command ids. A browser that sends a command
    again (a reconnect, a double tap, a replayed message) gets the first answer back and the
    table sees the command once. The console keeps them, not the daemon: the command
    channel's commands carry no id (their effect is decided by the table's state, and most
    are refused when repeated), and the console is where a browser's retries arrive."""

    def __init__(self, size: int = REMEMBERED) -> None:
        self.size = size
        self._answers: OrderedDict[str, Any] = OrderedDict()

    def get(self, command_id: str) -> Any:
        return self._answers.get(command_id)

    def remember(self, command_id: str, answer: Any) -> None:
        self._answers[command_id] = answer
        self._answers.move_to_end(command_id)
        while len(self._answers) > self.size:
            self._answers.popitem(last=False)

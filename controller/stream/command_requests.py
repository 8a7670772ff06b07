"""How one request on the command channel is read, before any role is decided: the JSON, the
keys every request may carry (``by``, ``credential``, ``asked_from``, ``request_id``), and
text no command may hold. The command itself is parsed by its model
(:mod:`controller.stream.table_commands`); who may give it is the daemon's to decide
(:mod:`controller.daemon.command_channel`: the transport, the caps and the roles).

Each function refuses with :class:`RequestRefused`, whose fields are what the journal keeps of
the refusal (``command_refused``): the reason, the command's name as far as it is known, the
arguments a refusal may repeat (never a value under a key the table does not know) and who
the client said it was.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from typing import Any

from controller.errors import LowballError
from controller.settings.validation import InputError
from controller.stream.table_commands import (
    COMMANDS,
    name_of,
    parse_request_id,
    refused_arguments,
)

#: The request that withdraws others (answered, not journaled; served before any command).
WITHDRAW = "withdraw"
#: Who gives a command (journaled with it): printable text, as the client names itself.
_BY = re.compile(r"[\x20-\x7e]{1,64}")
#: A console's note of the screen a supervisor's command came from (journaled beside it).
_ASKED_FROM = re.compile(r"[\x20-\x7e]{1,128}")
#: Unicode categories of characters no command text may hold: controls, format characters
#: (bidirectional overrides, zero-width spaces, the BOM), surrogates, private use,
#: unassigned, line and paragraph separators. A console, a log or a C consumer of the stream
#: would otherwise show something other than what was journaled.
_UNREADABLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
#: The keys a command may hold: a refusal names one of these, never a client's own key.
COMMAND_FIELDS = frozenset({"command", "by", "credential"}) | frozenset(
    name for cls in COMMANDS.values() for name in cls.model_fields)


class RequestRefused(LowballError, ValueError):
    """A request refused as it was read; the fields are what a ``command_refused`` keeps."""

    def __init__(self, reason: str, name: str = "?", arguments: str = "", by: str = "?"):
        super().__init__(reason)
        self.reason, self.name, self.arguments, self.by = reason, name, arguments, by


def _not_json(constant: str) -> Any:
    """``NaN`` and ``Infinity`` are not JSON (RFC 8259), whatever Python's parser accepts."""
    raise ValueError(f"{constant} is not a JSON value")


def _json_type(value: Any) -> str:
    names = {list: "an array", str: "a string", int: "a number", float: "a number",
             bool: "true or false", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def decode(payload: bytes) -> dict[str, Any]:
    """The request as a JSON object: UTF-8, no ``NaN``, no lone surrogate, an object."""
    try:
        request = json.loads(payload.decode("utf-8"), parse_constant=_not_json)
        # A lone surrogate escape ("\ud800") decodes to text that no UTF-8 message can carry:
        # refuse it here, before the table acts on a command it could not journal. Only a \u
        # escape makes one (UTF-8 cannot encode a surrogate).
        if b"\\u" in payload:
            json.dumps(request, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise RequestRefused("not valid JSON: a \\u escape names a lone surrogate, not a "
                             "character") from None
    except (ValueError, RecursionError) as error:  # bad UTF-8 or JSON, or nested too deep
        raise RequestRefused(f"not valid JSON: {error}") from None
    if not isinstance(request, dict):
        raise RequestRefused(f"a command is a JSON object such as {{\"command\": \"lock\"}}, "
                             f"not {_json_type(request)}")
    return request


def is_withdrawal(payload: bytes, most: int) -> bool:
    """Whether a request read off the socket (at most ``most`` bytes) is a ``withdraw``
    (answered before any command waiting with it); anything unreadable is not, and is refused
    in its turn."""
    if WITHDRAW.encode() not in payload or len(payload) > most:
        return False
    try:
        request = json.loads(payload.decode("utf-8"), parse_constant=_not_json)
    except (ValueError, RecursionError):
        return False
    return isinstance(request, dict) and request.get("command") == WITHDRAW


def take_by(request: dict[str, Any]) -> str:
    """Who gives the command, as the client names itself (``dealer`` when unsaid); removed
    from ``request``."""
    by = request.pop("by", "dealer")
    if not isinstance(by, str) or not _BY.fullmatch(by):
        raise RequestRefused("by: who gives the command is printable text of 1 to 64 "
                             "characters", name_of(request), refused_arguments(request))
    return by


def take_asked_from(request: dict[str, Any], by: str) -> str:
    """The screen a console gave a supervisor's command for (``""``); removed."""
    asked_from = request.pop("asked_from", "")
    if not isinstance(asked_from, str) or len(asked_from) > 128 or \
            (asked_from and not _ASKED_FROM.fullmatch(asked_from)):
        raise RequestRefused("asked_from: the screen that asked is printable text of at most "
                             "128 characters", name_of(request), refused_arguments(request), by)
    return asked_from


def take_request_id(request: dict[str, Any], by: str) -> str | None:
    """The client's id for the request (None when it gave none); removed."""
    request_id = request.pop("request_id", None)
    if request_id is None:
        return None
    try:
        return parse_request_id(request_id)
    except InputError as error:
        raise RequestRefused("; ".join(error.problems), name_of(request),
                             refused_arguments(request), by) from None


def _request_texts(request: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """Every key and text value of a decoded request, at any depth, each with the top-level
    key it lies under: ``(key, text)`` for what is in that key's value, ``("", key)`` for a
    top-level key itself."""
    for top, value in request.items():
        pending: list[Any] = [value]
        while pending:
            item = pending.pop()
            if isinstance(item, str):
                yield top, item
            elif isinstance(item, dict):
                pending.extend(item.keys())
                pending.extend(item.values())
            elif isinstance(item, list):
                pending.extend(item)
        yield "", top


def unreadable_text(request: dict[str, Any]) -> str | None:
    """Where a decoded command holds a text (a key or a value, at any depth) with a
    character of :data:`_UNREADABLE`: the top-level key if it is a command field, else
    ``a key or value`` (a client's own key is never repeated); None if nowhere."""
    for top, text in _request_texts(request):
        if not text.isprintable() if text.isascii() else \
                any(unicodedata.category(c) in _UNREADABLE for c in text):
            return top if top in COMMAND_FIELDS else "a key or value"
    return None


def texts(request: dict[str, Any]) -> list[str]:
    """Every key and text value of a decoded request, at any depth, but the top-level
    ``credential``'s value."""
    return [text for top, text in _request_texts(request) if top != "credential"]

"""The replies of the command channel: what the table answers to each request.

Every request is answered with one JSON object, exactly one of four shapes
(docs/command-channel.md shows each):

* :class:`Accepted`: the command was carried out and journaled; ``seq`` is its last record,
  ``state`` and ``expecting`` say what the table waits for now.
* :class:`Status`: the answer to ``status`` (it reads, nothing is journaled).
* :class:`Withdrawn`: the answer to ``withdraw``: which of the requests named were carried out
  (each with its ``command_accepted`` record's seq), and which are withdrawn (never carried out).
* :class:`Refused`: nothing was carried out; ``error`` says why. ``seq`` is the refusal's
  journal record when it has one; ``counted`` says that it was only counted (a client refused
  often within a second, docs/event-stream.md section 4.1); a refusal with neither was not
  journaled (the table is held, or the refusal happened before the table was reached).

:meth:`wire` gives the object as it is sent, its keys in a fixed order, so the bytes of a
reply depend on nothing but its fields; :func:`reply_from` reads one back, refusing any
other shape with :class:`ReplyError`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar, TypeGuard, Union

from controller.errors import LowballError


class ReplyError(LowballError):
    """Bytes from the command socket that are not one of the channel's replies."""

    def __init__(self, problem: str) -> None:
        super().__init__(f"not a command channel reply: {problem}")
        self.problem = problem


@dataclass(frozen=True, slots=True)
class Accepted:
    """The command was carried out and journaled."""

    seq: int
    state: str
    expecting: str
    ok: ClassVar[bool] = True

    def wire(self) -> dict[str, Any]:
        return {"ok": True, "seq": self.seq, "state": self.state, "expecting": self.expecting}


@dataclass(frozen=True, slots=True)
class Status:
    """The answer to ``status``: the table's snapshot, the journal's head and the devices."""

    state: dict[str, Any]
    seq: int
    devices: dict[str, Any]
    journal: dict[str, Any]
    ok: ClassVar[bool] = True

    def wire(self) -> dict[str, Any]:
        return {"ok": True, "state": self.state, "seq": self.seq, "devices": self.devices,
                "journal": self.journal}


@dataclass(frozen=True, slots=True)
class Refused:
    """Nothing was carried out: ``error`` says why."""

    error: str
    #: the refusal's journal record, when it was journaled in full
    seq: int | None = None
    #: the refusal was counted, not journaled in full (its client was refused often)
    counted: bool = False
    ok: ClassVar[bool] = False

    def wire(self) -> dict[str, Any]:
        data: dict[str, Any] = {"ok": False, "error": self.error}
        if self.counted:
            data["counted"] = True
        if self.seq is not None:
            data["seq"] = self.seq
        return data


@dataclass(frozen=True, slots=True)
class Withdrawn:
    """The answer to ``withdraw``: every request it named is in exactly one of the two."""

    #: request id -> the seq of its ``command_accepted`` record
    carried_out: dict[str, int]
    #: never carried out: the table refuses each if it arrives later
    withdrawn: list[str]
    ok: ClassVar[bool] = True

    def wire(self) -> dict[str, Any]:
        return {"ok": True, "carried_out": self.carried_out, "withdrawn": self.withdrawn}


Reply = Union[Accepted, Status, Refused, Withdrawn]  # noqa: UP007


def encode(reply: Reply) -> bytes:
    """The reply as the command socket sends it."""
    return json.dumps(reply.wire()).encode()


def reply_from(data: Any) -> Reply:
    """A reply from its decoded JSON; :class:`ReplyError` names what does not fit."""
    if not isinstance(data, dict) or not isinstance(data.get("ok"), bool):
        raise ReplyError("a reply is a JSON object with \"ok\": true or false")
    if not data["ok"]:
        error, seq, counted = data.get("error"), data.get("seq"), data.get("counted", False)
        if not isinstance(error, str) or not (seq is None or _is_int(seq)) \
                or counted is not True and counted is not False:
            raise ReplyError("a refusal holds \"error\" (text), and maybe \"seq\" (an integer) "
                             "or \"counted\": true")
        return Refused(error, seq, counted)
    if "expecting" in data:
        seq, state, expecting = data.get("seq"), data.get("state"), data["expecting"]
        if not _is_int(seq) or not isinstance(state, str) or not isinstance(expecting, str):
            raise ReplyError("an acceptance holds \"seq\" (an integer), \"state\" and "
                             "\"expecting\" (text)")
        return Accepted(seq, state, expecting)
    if "withdrawn" in data:
        done, withdrawn = data.get("carried_out"), data["withdrawn"]
        if not isinstance(done, dict) or not all(_is_int(seq) for seq in done.values()) \
                or not isinstance(withdrawn, list) \
                or not all(isinstance(request, str) for request in withdrawn):
            raise ReplyError("a withdrawal's answer holds \"carried_out\" (request id -> seq) "
                             "and \"withdrawn\" (request ids)")
        return Withdrawn(done, withdrawn)
    state, seq, devices, journal = (data.get(key) for key in ("state", "seq", "devices",
                                                               "journal"))
    if not isinstance(state, dict) or not _is_int(seq) or not isinstance(devices, dict) \
            or not isinstance(journal, dict):
        raise ReplyError("a status holds \"state\", \"devices\" and \"journal\" (objects) and "
                         "\"seq\" (an integer)")
    return Status(state, seq, devices, journal)


def decode(payload: bytes) -> Reply:
    """A reply from the bytes the command socket delivered."""
    try:
        data = json.loads(payload)
    except (ValueError, RecursionError) as error:
        raise ReplyError(f"not JSON ({error})") from None
    return reply_from(data)


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)

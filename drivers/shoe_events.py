"""What a card shoe can tell the table, whatever protocol it speaks.

Every event is a frozen dataclass, so the game core can keep, compare and publish them as they
are. :func:`event_record` gives the one JSON shape used by ``shoe-monitor --json`` and by the
expected-event files beside the recorded sessions in ``tests/data``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from controller.core.cards import Card
from controller.core.vocabulary import ShoeFaultCode


class FaultCode(StrEnum):
    """Faults a shoe reports (``E`` frames, USB report type 2): the table's
    :class:`~controller.core.vocabulary.ShoeFaultCode`, which says what each means, but
    ``CONFLICT``, which the driver raises and a shoe never sends."""

    JAM = ShoeFaultCode.JAM.value
    MISREAD = ShoeFaultCode.MISREAD.value
    DOOR = ShoeFaultCode.DOOR.value
    EMPTY = ShoeFaultCode.EMPTY.value
    TAGUNKNOWN = ShoeFaultCode.TAGUNKNOWN.value
    DUPLICATE = ShoeFaultCode.DUPLICATE.value


class ShoeState(StrEnum):
    """The shoe's own state (``S`` frames, USB report type 3)."""

    READY = "READY"
    BUSY = "BUSY"
    DOOROPEN = "DOOROPEN"
    SHUFFLING = "SHUFFLING"


#: The highest card count a shoe reports (the USB report carries it in two bytes).
MAX_CARD_COUNT = 0xFFFF


@dataclass(frozen=True, slots=True)
class CardRead:
    """A card left the shoe. ``tag`` is its RFID tag id in uppercase hex, if the shoe read it;
    ``count`` is the shoe's card count since its last shuffle or reset (1, 2, 3, ...), by which
    the table detects a card that left the shoe and never arrived."""

    card: Card
    seq: int
    tag: str | None
    count: int


@dataclass(frozen=True, slots=True)
class SequenceConflict:
    """A frame reused the SEQ of the last accepted one with other content: it was refused
    (``N SEQ,CONFLICT``), never taken for a retransmission nor for a new card.
    ``about_cards``: either frame was a card or a fault, so the hand cannot trust the shoe's
    account of its cards (two heartbeats or statuses in conflict are only a bad frame)."""

    seq: int
    detail: str
    about_cards: bool = True


@dataclass(frozen=True, slots=True)
class ShoeFault:
    code: FaultCode
    detail: str = ""


@dataclass(frozen=True, slots=True)
class ShoeStatus:
    state: ShoeState


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """The shoe is alive and idle; ``uptime_s`` is its own count of seconds since power-on."""

    uptime_s: int


@dataclass(frozen=True, slots=True)
class FrameRejected:
    """Bytes from the shoe that were not a usable message; ``reason`` says what was wrong."""

    reason: str
    raw: bytes = b""


@dataclass(frozen=True, slots=True)
class ShoeConnected:
    """The shoe can be heard: its port opened, or it spoke again after going silent."""

    port: str


@dataclass(frozen=True, slots=True)
class ShoeLost:
    """The shoe cannot be heard: its port failed, it was unplugged, or it fell silent."""

    reason: str


ShoeEvent = (CardRead | ShoeFault | ShoeStatus | Heartbeat | FrameRejected | SequenceConflict
             | ShoeConnected | ShoeLost)

#: Events that come from the shoe's own messages, as opposed to the link's health.
DEVICE_EVENTS = (CardRead, ShoeFault, ShoeStatus, Heartbeat, FrameRejected, SequenceConflict)


def event_record(event: ShoeEvent) -> dict[str, Any]:
    """The JSON-ready form of an event: ``{"type": "card", "card": "As", "seq": 12, ...}``."""
    if isinstance(event, CardRead):
        return {"type": "card", "card": str(event.card), "seq": event.seq, "tag": event.tag,
                "count": event.count}
    if isinstance(event, ShoeFault):
        record: dict[str, Any] = {"type": "fault", "code": event.code.value}
        if event.detail:
            record["detail"] = event.detail
        return record
    if isinstance(event, ShoeStatus):
        return {"type": "status", "state": event.state.value}
    if isinstance(event, Heartbeat):
        return {"type": "heartbeat", "uptime_s": event.uptime_s}
    if isinstance(event, FrameRejected):
        return {"type": "rejected", "reason": event.reason, "raw": event.raw.hex()}
    if isinstance(event, SequenceConflict):
        return {"type": "conflict", "seq": event.seq, "detail": event.detail,
                "about_cards": event.about_cards}
    if isinstance(event, ShoeConnected):
        return {"type": "connected", "port": event.port}
    if isinstance(event, ShoeLost):
        return {"type": "lost", "reason": event.reason}
    raise TypeError(f"not a shoe event: {event!r}")


def describe(event: ShoeEvent) -> str:
    """One human line for an event, as ``shoe-monitor`` prints it without ``--json``."""
    if isinstance(event, CardRead):
        tag = f" tag {event.tag}" if event.tag else ""
        return f"card   {event.card}  seq {event.seq:02X}  count {event.count}{tag}"
    if isinstance(event, ShoeFault):
        return f"FAULT  {event.code.value}" + (f" ({event.detail})" if event.detail else "")
    if isinstance(event, ShoeStatus):
        return f"status {event.state.value}"
    if isinstance(event, Heartbeat):
        return f"alive  uptime {event.uptime_s} s"
    if isinstance(event, FrameRejected):
        return f"BAD    {event.reason}: {event.raw.hex(' ')}"
    if isinstance(event, SequenceConflict):
        return f"CONFLICT seq {event.seq:02X} reused: {event.detail}"
    if isinstance(event, ShoeConnected):
        return f"online {event.port}"
    if isinstance(event, ShoeLost):
        return f"LOST   {event.reason}"
    raise TypeError(f"not a shoe event: {event!r}")

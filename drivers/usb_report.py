"""The USB shoe's 8-byte interrupt reports, as a pure codec (docs/protocols.md section 2).

``[0]`` report type, ``[1]`` sequence, ``[2]`` rank or code, ``[3]`` suit, ``[4..7]`` RFID tag
id big-endian (0 = none). The device contract leaves the fault and status code numbers and the
heartbeat layout to the project; they are fixed here and restated in docs/protocols.md.
"""

from __future__ import annotations

from controller.cards import DECK, SUIT_CHARS, Card
from drivers.shoe_events import (
    CardRead,
    FaultCode,
    FrameRejected,
    Heartbeat,
    ShoeEvent,
    ShoeFault,
    ShoeState,
    ShoeStatus,
)

REPORT_SIZE = 8
REPORT_CARD, REPORT_FAULT, REPORT_STATUS, REPORT_HEARTBEAT = 1, 2, 3, 4

#: Vendor control request that acknowledges a report: bmRequestType, bRequest (wValue = seq).
ACK_REQUEST_TYPE = 0x40
ACK_REQUEST = 0x01
#: Interrupt IN endpoint carrying the reports.
REPORT_ENDPOINT = 0x81

FAULT_CODES: dict[int, FaultCode] = {
    1: FaultCode.JAM, 2: FaultCode.MISREAD, 3: FaultCode.DOOR, 4: FaultCode.EMPTY,
    5: FaultCode.TAGUNKNOWN, 6: FaultCode.DUPLICATE,
}
STATUS_CODES: dict[int, ShoeState] = {
    1: ShoeState.READY, 2: ShoeState.BUSY, 3: ShoeState.DOOROPEN, 4: ShoeState.SHUFFLING,
}
_FAULT_NUMBERS = {code: number for number, code in FAULT_CODES.items()}
_STATUS_NUMBERS = {state: number for number, state in STATUS_CODES.items()}


class ReportError(ValueError):
    """A report that cannot be understood; the message names the offending byte."""


def _tag_bytes(tag: str | None) -> bytes:
    value = int(tag, 16) if tag else 0
    if not 0 <= value <= 0xFFFFFFFF:
        raise ValueError(f"USB tag ids are 32 bits, {tag!r} is longer")
    return value.to_bytes(4, "big")


def encode_card(seq: int, card: Card, tag: str | None = None) -> bytes:
    return bytes([REPORT_CARD, seq, card.rank, SUIT_CHARS.index(card.suit)]) + _tag_bytes(tag)


def encode_fault(seq: int, code: FaultCode, tag: str | None = None) -> bytes:
    """A fault report; ``tag`` is carried for TAGUNKNOWN (the tag that was not known)."""
    return bytes([REPORT_FAULT, seq, _FAULT_NUMBERS[code], 0]) + _tag_bytes(tag)


def encode_status(seq: int, state: ShoeState) -> bytes:
    return bytes([REPORT_STATUS, seq, _STATUS_NUMBERS[state], 0, 0, 0, 0, 0])


def encode_heartbeat(seq: int, uptime_s: int) -> bytes:
    return bytes([REPORT_HEARTBEAT, seq, 0, 0]) + (uptime_s & 0xFFFFFFFF).to_bytes(4, "big")


def report_sequence(report: bytes) -> int:
    """The sequence byte, or ReportError if the report is too short to have one."""
    if len(report) != REPORT_SIZE:
        raise ReportError(f"report is {len(report)} bytes, expected {REPORT_SIZE}")
    return report[1]


def decode_report(report: bytes) -> ShoeEvent:
    """The event an 8-byte report carries; :class:`ReportError` says why if none."""
    seq = report_sequence(report)
    kind, code, suit = report[0], report[2], report[3]
    tag_value = int.from_bytes(report[4:8], "big")
    tag = f"{tag_value:08X}" if tag_value else None
    if kind == REPORT_CARD:
        if not 1 <= code <= 13:
            raise ReportError(f"card report: rank byte {code} is not 1-13")
        if not 0 <= suit <= 3:
            raise ReportError(f"card report: suit byte {suit} is not 0-3 (c d h s)")
        return CardRead(DECK[suit * 13 + code - 1], seq, tag)
    if kind == REPORT_FAULT:
        if code not in FAULT_CODES:
            raise ReportError(f"fault report: unknown fault code {code}")
        fault = FAULT_CODES[code]
        return ShoeFault(fault, (tag or "") if fault is FaultCode.TAGUNKNOWN else "")
    if kind == REPORT_STATUS:
        if code not in STATUS_CODES:
            raise ReportError(f"status report: unknown status code {code}")
        return ShoeStatus(STATUS_CODES[code])
    if kind == REPORT_HEARTBEAT:
        return Heartbeat(tag_value)
    raise ReportError(f"unknown report type {kind} (expected 1 card, 2 fault, 3 status, "
                      "4 heartbeat)")


def decode_to_event(report: bytes) -> ShoeEvent:
    """Like :func:`decode_report` but a bad report becomes a :class:`FrameRejected`."""
    try:
        return decode_report(report)
    except ReportError as exc:
        if len(report) == REPORT_SIZE and report[0] == REPORT_CARD:
            # A whole card report with an unreadable card: a card left the shoe, so it is a
            # misread (the hand pauses), never dropped as mere noise.
            return ShoeFault(FaultCode.MISREAD, f"card report {bytes(report).hex()}: {exc}")
        return FrameRejected(str(exc), bytes(report))

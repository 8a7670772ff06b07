"""The USB shoe's interrupt reports, as a pure codec (docs/protocols.md section 2).

``[0]`` report type, ``[1]`` sequence, ``[2]`` rank or code, ``[3]`` suit, ``[4..7]`` RFID tag
id big-endian (0 = none); a card report has two more bytes, ``[8..9]`` the shoe's card count
since its last shuffle or reset, big-endian (10 bytes; every other report is 8). The device
contract leaves the fault and status code numbers, the heartbeat layout and the refusal request
to the project; they are fixed here and restated in docs/protocols.md.
"""

from __future__ import annotations

from controller.core.cards import DECK, SUIT_CHARS, Card
from controller.errors import LowballError
from drivers.shoe_events import (
    MAX_CARD_COUNT,
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
#: A card report: the 8 bytes and the card count.
CARD_REPORT_SIZE = 10
#: The longest report, what one read asks for (the endpoint's wMaxPacketSize).
MAX_REPORT_SIZE = CARD_REPORT_SIZE
REPORT_CARD, REPORT_FAULT, REPORT_STATUS, REPORT_HEARTBEAT = 1, 2, 3, 4

#: Vendor control request that acknowledges a report: bmRequestType, bRequest (wValue = seq).
ACK_REQUEST_TYPE = 0x40
ACK_REQUEST = 0x01
#: Vendor control request that refuses a report (the USB form of LBS1's NAK): wValue = seq,
#: wIndex = why (REFUSE_CONFLICT: the sequence of the last accepted report, other content).
REFUSE_REQUEST = 0x02
REFUSE_CONFLICT = 1
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


class ReportError(LowballError, ValueError):
    """A report that cannot be understood; the message names the offending byte."""


def _tag_bytes(tag: str | None) -> bytes:
    value = int(tag, 16) if tag else 0
    if not 0 <= value <= 0xFFFFFFFF:
        raise ValueError(f"USB tag ids are 32 bits, {tag!r} is longer")
    return value.to_bytes(4, "big")


def encode_card(seq: int, card: Card, tag: str | None, count: int) -> bytes:
    if not 0 <= count <= MAX_CARD_COUNT:
        raise ValueError(f"a USB card count is 0-{MAX_CARD_COUNT}, not {count}")
    return bytes([REPORT_CARD, seq, card.rank, SUIT_CHARS.index(card.suit)]) + \
        _tag_bytes(tag) + count.to_bytes(2, "big")


def encode_fault(seq: int, code: FaultCode, tag: str | None = None) -> bytes:
    """A fault report; ``tag`` is carried for TAGUNKNOWN (the tag that was not known)."""
    return bytes([REPORT_FAULT, seq, _FAULT_NUMBERS[code], 0]) + _tag_bytes(tag)


def encode_status(seq: int, state: ShoeState) -> bytes:
    return bytes([REPORT_STATUS, seq, _STATUS_NUMBERS[state], 0, 0, 0, 0, 0])


def encode_heartbeat(seq: int, uptime_s: int) -> bytes:
    return bytes([REPORT_HEARTBEAT, seq, 0, 0]) + (uptime_s & 0xFFFFFFFF).to_bytes(4, "big")


def expected_size(report: bytes) -> int:
    """How long a report of this type is: 10 bytes for a card, 8 for anything else."""
    return CARD_REPORT_SIZE if report[:1] == bytes([REPORT_CARD]) else REPORT_SIZE


def report_sequence(report: bytes) -> int:
    """The sequence byte, or ReportError if the report is not as long as its type says."""
    if len(report) != expected_size(report):
        kind = "card report" if report[:1] == bytes([REPORT_CARD]) else "report"
        raise ReportError(f"{kind} is {len(report)} bytes, expected {expected_size(report)}")
    return report[1]


def decode_report(report: bytes) -> ShoeEvent:
    """The event a report carries; :class:`ReportError` says why if none."""
    seq = report_sequence(report)
    kind, code, suit = report[0], report[2], report[3]
    tag_value = int.from_bytes(report[4:8], "big")
    tag = f"{tag_value:08X}" if tag_value else None
    if kind == REPORT_CARD:
        if not 1 <= code <= 13:
            raise ReportError(f"card report: rank byte {code} is not 1-13")
        if not 0 <= suit <= 3:
            raise ReportError(f"card report: suit byte {suit} is not 0-3 (c d h s)")
        count = int.from_bytes(report[8:10], "big")
        if count == 0:
            raise ReportError("card report: card count 0 (the first card after a shuffle "
                              "is 1)")
        return CardRead(DECK[suit * 13 + code - 1], seq, tag, count)
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
        if len(report) == CARD_REPORT_SIZE and report[0] == REPORT_CARD:
            # A whole card report with an unreadable card: a card left the shoe, so it is a
            # misread (the hand pauses), never dropped as mere noise.
            return ShoeFault(FaultCode.MISREAD, f"card report {bytes(report).hex()}: {exc}")
        return FrameRejected(str(exc), bytes(report))

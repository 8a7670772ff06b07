"""LBS1, the serial card-shoe framing: a pure bytes-in, frames-out codec with no I/O.

Frame: ``STX SEQ TYPE PAYLOAD ETX CRC`` (see docs/protocols.md section 1). The parser is fed
whatever the port delivered, in any chunking, and returns :class:`Frame` objects for good frames
and :class:`FrameError` objects naming what was wrong with bad ones. It never raises on input:
shoe bytes are untrusted, and one bad frame must never cost the next good one, so on any error
it discards up to the next ``STX`` and starts again there.

Message meaning (card, fault, status, heartbeat) lives in :func:`frame_to_event`, also pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from controller.core.cards import CardError, parse_card
from controller.errors import LowballError
from drivers.crc import crc16_ccitt_false
from drivers.shoe_events import (
    CardRead,
    MAX_CARD_COUNT,
    FaultCode,
    Heartbeat,
    ShoeEvent,
    ShoeFault,
    ShoeState,
    ShoeStatus,
)

STX = 0x02
ETX = 0x03
MAX_PAYLOAD = 64
#: SEQ (2) + TYPE (1) + PAYLOAD (<= 64): the most bytes allowed between STX and ETX.
MAX_BODY = 2 + 1 + MAX_PAYLOAD
#: The longest possible frame on the wire: STX + body + ETX + 4 CRC digits.
MAX_FRAME = 1 + MAX_BODY + 1 + 4

NAK_CRC = "CRC"
NAK_FORMAT = "FORMAT"
#: The frame reuses the SEQ of the last accepted frame with another payload.
NAK_CONFLICT = "CONFLICT"

#: Only uppercase hex digits (or nothing); a regex, as the parser runs on every frame.
_HEX_UPPER = re.compile(rb"[0-9A-F]*")
_TAG_RE = re.compile(r"[0-9A-F]{2,20}")
_COUNT_RE = re.compile(r"[0-9]{1,5}")
#: Only printable ASCII, 0x20-0x7E (or nothing).
_PRINTABLE = re.compile(rb"[\x20-\x7e]*")


def _printable(data: bytes | str) -> bool:
    raw = data.encode("latin-1") if isinstance(data, str) else data
    return _PRINTABLE.fullmatch(raw) is not None


@dataclass(frozen=True, slots=True)
class Frame:
    """One well-formed LBS1 frame, either direction."""

    seq: int
    type: str
    payload: str = ""

    def encode(self) -> bytes:
        return encode_frame(self.seq, self.type, self.payload)


@dataclass(frozen=True, slots=True)
class FrameError:
    """Bytes that were not a good frame.

    ``seq`` is set when the SEQ digits could be read, so the host can NAK that frame
    (``nak_code`` ``CRC`` or ``FORMAT``); bytes with no readable SEQ (noise before an STX)
    have nothing to NAK and carry ``nak_code=None``.
    """

    reason: str
    raw: bytes
    seq: int | None = None
    nak_code: str | None = None


def encode_frame(seq: int, type_: str, payload: str = "", *, crc: int | None = None) -> bytes:
    """The wire bytes of one frame. ``crc`` overrides the check (simulators inject bad CRCs)."""
    if not 0 <= seq <= 0xFF:
        raise ValueError(f"LBS1 SEQ must be 0-255, got {seq}")
    if len(type_) != 1 or not ("A" <= type_.upper() <= "Z"):
        raise ValueError(f"LBS1 TYPE must be one ASCII letter, got {type_!r}")
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"LBS1 payload is {len(payload)} bytes, at most {MAX_PAYLOAD} allowed")
    if not _printable(payload):
        raise ValueError(f"LBS1 payload must be printable ASCII (0x20-0x7E), got {payload!r}")
    body = f"{seq:02X}{type_}{payload}".encode("ascii") + bytes([ETX])
    check = crc16_ccitt_false(body) if crc is None else crc
    return bytes([STX]) + body + f"{check:04X}".encode("ascii")


def encode_overlong(seq: int, length: int = MAX_PAYLOAD + 16) -> bytes:
    """A frame whose payload is too long, with a correct CRC: for fault injection only."""
    body = f"{seq:02X}C".encode("ascii") + b"X" * length + bytes([ETX])
    return bytes([STX]) + body + f"{crc16_ccitt_false(body):04X}".encode("ascii")


class _State(Enum):
    HUNT = "hunt"  # looking for STX; anything else is noise
    BODY = "body"  # after STX, collecting SEQ TYPE PAYLOAD up to ETX
    CRC = "crc"  # after ETX, collecting four CRC digits
    DISCARD = "discard"  # after an over-long frame: drop everything up to the next STX


class FrameParser:
    """Turns shoe bytes into frames and rejections. Pure: no I/O, no clock, never raises.

    Feed it any chunking of the stream; the result does not depend on how the bytes were split,
    except that noise still waiting for an STX is only reported by the next STX or by
    :meth:`flush` (the driver flushes when the line goes idle).
    """

    #: Noise is reported in pieces of at most this many bytes, so memory stays bounded.
    MAX_NOISE = MAX_FRAME

    def __init__(self) -> None:
        self._state = _State.HUNT
        self._frame = bytearray()  # bytes of the current frame from STX on
        self._noise = bytearray()

    def feed(self, data: bytes) -> list[Frame | FrameError]:
        out: list[Frame | FrameError] = []
        position, size = 0, len(data)
        while position < size:
            # Fast path: a whole frame at a frame boundary (the shoe writes one frame at a
            # time, so that is nearly every read) is taken in one slice instead of byte by
            # byte, which costs some 30 us a frame in Python. It ends exactly where the
            # state machine would: see _whole_frame_end.
            if self._state is _State.HUNT and not self._noise and data[position] == STX:
                end = _whole_frame_end(data, position)
                if end is not None:
                    self._frame = bytearray(data[position:end])
                    out.append(self._finish())
                    self._frame = bytearray()
                    position = end
                    continue
            self._step(data[position], out)
            position += 1
        return out

    @property
    def has_noise(self) -> bool:
        """Whether noise waits for an STX (what :meth:`flush` would report)."""
        return bool(self._noise)

    def flush(self) -> list[FrameError]:
        """Report noise still waiting for an STX (call when the line goes quiet)."""
        out: list[Frame | FrameError] = []
        self._flush_noise(out)
        return [item for item in out if isinstance(item, FrameError)]

    # -- the state machine -------------------------------------------------------------

    def _step(self, byte: int, out: list[Frame | FrameError]) -> None:
        if byte == STX:
            if self._state in (_State.BODY, _State.CRC):
                out.append(self._error(f"frame cut short by a new STX after {len(self._frame)}"
                                       " bytes", NAK_FORMAT))
            self._flush_noise(out)
            self._state = _State.BODY
            self._frame = bytearray([STX])
            return
        if self._state is _State.HUNT:
            self._noise.append(byte)
            if len(self._noise) >= self.MAX_NOISE:
                self._flush_noise(out)
            return
        if self._state is _State.DISCARD:
            return
        self._frame.append(byte)
        if self._state is _State.BODY:
            if byte == ETX:
                self._state = _State.CRC
            elif len(self._frame) - 1 > MAX_BODY:
                out.append(self._error(
                    f"over-long frame: more than {MAX_BODY} bytes between STX and ETX",
                    NAK_FORMAT))
                self._state = _State.DISCARD
                self._frame = bytearray()
            return
        # CRC state
        if len(self._frame) == self._crc_end():
            out.append(self._finish())
            self._state = _State.HUNT
            self._frame = bytearray()

    def _crc_end(self) -> int:
        return self._frame.index(ETX) + 5

    def _flush_noise(self, out: list[Frame | FrameError]) -> None:
        if self._noise:
            out.append(FrameError(f"{len(self._noise)} byte(s) of noise outside any frame",
                                  bytes(self._noise)))
            self._noise = bytearray()

    def _seq(self) -> int | None:
        digits = bytes(self._frame[1:3])
        if len(digits) == 2 and _HEX_UPPER.fullmatch(digits):
            return int(digits, 16)
        return None

    def _error(self, reason: str, nak_code: str) -> FrameError:
        seq = self._seq()
        return FrameError(reason, bytes(self._frame), seq, nak_code if seq is not None else None)

    def _finish(self) -> Frame | FrameError:
        frame = bytes(self._frame)
        etx = frame.index(ETX)
        body, check = frame[1:etx], frame[etx + 1:]
        if not _HEX_UPPER.fullmatch(check):
            return self._error(f"CRC field {check!r} is not four uppercase hex digits",
                               NAK_FORMAT)
        computed = crc16_ccitt_false(frame[1:etx + 1])
        if int(check, 16) != computed:
            return self._error(f"bad CRC: frame says {check.decode()}, computed {computed:04X}",
                               NAK_CRC)
        if len(body) < 3:
            return self._error(f"frame too short: {len(body)} byte(s) between STX and ETX,"
                               " need SEQ and TYPE", NAK_FORMAT)
        seq = self._seq()
        if seq is None:
            return self._error(f"SEQ {body[:2]!r} is not two uppercase hex digits", NAK_FORMAT)
        type_ = chr(body[2])
        if not type_.isascii() or not type_.isalpha():
            return self._error(f"TYPE {body[2:3]!r} is not an ASCII letter", NAK_FORMAT)
        payload = body[3:]
        if not _printable(payload):
            return self._error(f"payload {payload!r} has bytes outside printable ASCII",
                               NAK_FORMAT)
        return Frame(seq, type_, payload.decode("ascii"))


def _whole_frame_end(data: bytes, start: int) -> int | None:
    """Where the frame whose STX is ``data[start]`` ends, if all of it is in ``data`` and the
    state machine would read it straight through to :meth:`FrameParser._finish`: an ETX within
    the first ``MAX_BODY + 1`` bytes after the STX (a later one makes the frame over-long),
    four more bytes, and no STX after the first (one would cut the frame short). None
    otherwise: the bytes then go through the state machine one at a time."""
    etx = data.find(ETX, start + 1, start + 2 + MAX_BODY)
    if etx < 0:
        return None
    end = etx + 5
    if end > len(data) or data.find(STX, start + 1, end) >= 0:
        return None
    return end


class FrameContentError(LowballError, ValueError):
    """A frame arrived intact but its content means nothing (unknown code, bad card...)."""


def frame_to_event(frame: Frame) -> ShoeEvent:
    """What a shoe-to-host frame reports; :class:`FrameContentError` says why if nothing."""
    kind, payload = frame.type, frame.payload
    if kind == "C":
        # An intact card frame whose card cannot be read still means a card left the shoe:
        # it is reported as a misread (the hand pauses), never dropped as mere noise.
        fields = payload.split(",")
        if len(fields) != 3:
            return ShoeFault(FaultCode.MISREAD, f"card frame {payload!r}: expected card,tag,"
                                                f"count (tag may be empty: AS,,17)")
        card_text, tag, count_text = fields
        try:
            card = parse_card(card_text)
        except CardError as exc:
            return ShoeFault(FaultCode.MISREAD, f"card frame {payload!r} unreadable: {exc}")
        if tag and not _TAG_RE.fullmatch(tag.upper()):
            return ShoeFault(FaultCode.MISREAD, f"card frame {payload!r}: RFID tag {tag!r} "
                                                f"is not 2-20 hex digits")
        if not _COUNT_RE.fullmatch(count_text) or not 1 <= int(count_text) <= MAX_CARD_COUNT:
            return ShoeFault(FaultCode.MISREAD, f"card frame {payload!r}: card count "
                                                f"{count_text!r} is not 1-{MAX_CARD_COUNT}")
        return CardRead(card, frame.seq, tag.upper() or None, int(count_text))
    if kind == "E":
        code, _, detail = payload.partition(",")
        try:
            return ShoeFault(FaultCode(code), detail)
        except ValueError:
            raise FrameContentError(
                f"fault frame: unknown fault code {code!r}, expected one of "
                f"{' '.join(c.value for c in FaultCode)}") from None
    if kind == "S":
        try:
            return ShoeStatus(ShoeState(payload))
        except ValueError:
            raise FrameContentError(
                f"status frame: unknown status {payload!r}, expected one of "
                f"{' '.join(s.value for s in ShoeState)}") from None
    if kind == "H":
        if not payload.isdigit() or not payload.isascii():
            raise FrameContentError(f"heartbeat frame: uptime {payload!r} is not whole seconds")
        return Heartbeat(int(payload))
    raise FrameContentError(f"unexpected frame type {kind!r} from a shoe (expected C E S H)")


def card_payload(card_text: str, tag: str | None, count: int) -> str:
    """The ``C`` payload for a card as a shoe writes it: ``AS,04A1B2C3,17`` or ``AS,,17``."""
    return f"{card_text.upper()},{tag or ''},{count}"

"""Alpha Sign Communications Protocol, the subset a progressive meter needs: pure codec.

Write TEXT file: ``NUL x5, SOH, type code, address, STX, 'A' (write text), file label, text,
ETX, checksum (4 uppercase hex digits: 16-bit sum of the bytes STX..ETX), EOT``.
"""

from __future__ import annotations

from dataclasses import dataclass

NUL, SOH, STX, ETX, EOT = 0x00, 0x01, 0x02, 0x03, 0x04
WRITE_TEXT = ord("A")
#: Longest text the meter writes; far inside any Alpha sign's default TEXT file.
MAX_TEXT = 125


def checksum(data: bytes) -> int:
    """The Alpha checksum: the 16-bit sum of ``data``."""
    return sum(data) & 0xFFFF


def _check_field(name: str, value: str, length: int) -> bytes:
    raw = value.encode("ascii", "replace")
    if len(raw) != length or not all(0x20 < b < 0x7F for b in raw):
        raise ValueError(f"Alpha {name} must be {length} printable ASCII character(s), "
                         f"got {value!r}")
    return raw


def write_text_packet(text: str, *, type_code: str = "Z", address: str = "00",
                      file_label: str = "A") -> bytes:
    """The bytes that write ``text`` into TEXT file ``file_label`` of the addressed signs."""
    raw = text.encode("ascii", "replace")
    if not all(0x20 <= b <= 0x7E for b in raw) or raw.decode("ascii") != text:
        raise ValueError(f"meter text must be printable 7-bit ASCII, got {text!r}")
    if len(raw) > MAX_TEXT:
        raise ValueError(f"meter text is {len(raw)} characters, at most {MAX_TEXT}")
    body = (bytes([STX, WRITE_TEXT]) + _check_field("file label", file_label, 1) + raw
            + bytes([ETX]))
    return (bytes([NUL] * 5 + [SOH]) + _check_field("type code", type_code, 1)
            + _check_field("address", address, 2) + body
            + f"{checksum(body):04X}".encode("ascii") + bytes([EOT]))


@dataclass(frozen=True, slots=True)
class TextWrite:
    """One decoded Write TEXT packet."""

    type_code: str
    address: str
    file_label: str
    text: str


@dataclass(frozen=True, slots=True)
class PacketError:
    reason: str
    raw: bytes


class PacketParser:
    """Bytes in, :class:`TextWrite` / :class:`PacketError` out: what a sign does (the meter
    simulator uses it). Packets run from SOH to EOT; NULs between packets are sync padding.
    """

    MAX_PACKET = 16 + MAX_TEXT

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._in_packet = False

    def feed(self, data: bytes) -> list[TextWrite | PacketError]:
        out: list[TextWrite | PacketError] = []
        for byte in data:
            if not self._in_packet:
                if byte == SOH:
                    self._in_packet = True
                    self._buffer = bytearray([SOH])
                elif byte != NUL:
                    out.append(PacketError(f"byte 0x{byte:02X} outside a packet", bytes([byte])))
                continue
            self._buffer.append(byte)
            if byte == EOT:
                out.append(decode_packet(bytes(self._buffer)))
                self._in_packet = False
            elif len(self._buffer) > self.MAX_PACKET:
                out.append(PacketError("packet too long", bytes(self._buffer)))
                self._in_packet = False
        return out


def decode_packet(packet: bytes) -> TextWrite | PacketError:
    """Decode ``SOH .. EOT`` (leading NULs already stripped)."""
    try:
        stx = packet.index(STX)
        etx = packet.rindex(ETX)
    except ValueError:
        return PacketError("packet has no STX..ETX", packet)
    header, body, tail = packet[1:stx], packet[stx:etx + 1], packet[etx + 1:]
    if len(header) != 3:
        return PacketError(f"header {header!r} is not type code + 2-digit address", packet)
    if len(tail) != 5 or tail[-1] != EOT:
        return PacketError("checksum must be 4 hex digits then EOT", packet)
    try:
        claimed = int(tail[:4], 16)
    except ValueError:
        return PacketError(f"checksum {tail[:4]!r} is not hex", packet)
    if claimed != checksum(body):
        return PacketError(f"bad checksum: packet says {claimed:04X}, computed "
                           f"{checksum(body):04X}", packet)
    if len(body) < 4 or body[1] != WRITE_TEXT:
        return PacketError("not a Write TEXT command", packet)
    return TextWrite(chr(header[0]), header[1:3].decode("ascii", "replace"), chr(body[2]),
                     body[3:-1].decode("ascii", "replace"))

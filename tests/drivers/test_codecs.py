"""Pure codecs: CRC, LBS1 framing and messages, USB reports, sequence rules."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.core.cards import Card, DECK, parse_card
from drivers.crc import crc16_ccitt_false
from drivers.lbs1 import (
    ETX,
    MAX_PAYLOAD,
    STX,
    Frame,
    FrameContentError,
    FrameError,
    FrameParser,
    encode_frame,
    encode_overlong,
    frame_to_event,
)
from drivers.shoe import Garbled, Message, SequenceGate, ShoeReceiver
from drivers.shoe_events import (
    CardRead,
    FaultCode,
    FrameRejected,
    Heartbeat,
    SequenceConflict,
    ShoeFault,
    ShoeState,
    ShoeStatus,
    event_record,
)
from drivers.tags import TagRegistry, deck_tag
from drivers.usb_report import (
    ReportError,
    decode_report,
    decode_to_event,
    encode_card,
    encode_fault,
    encode_heartbeat,
    encode_status,
)

GOOD = encode_frame(0x12, "C", "AS,04A1B2C3D4,17")


def test_crc_check_value() -> None:
    assert crc16_ccitt_false(b"123456789") == 0x29B1
    assert crc16_ccitt_false(b"") == 0xFFFF


def test_encode_frame_layout() -> None:
    body = b"12CAS,04A1B2C3D4,17\x03"
    assert GOOD == b"\x02" + body + f"{crc16_ccitt_false(body):04X}".encode()


@pytest.mark.parametrize("args, message", [
    ((256, "C", ""), "SEQ must be 0-255"),
    ((1, "CC", ""), "one ASCII letter"),
    ((1, "1", ""), "one ASCII letter"),
    ((1, "C", "x" * 65), "at most 64"),
    ((1, "C", "a\x01"), "printable ASCII"),
])
def test_encode_frame_rejects(args: tuple[Any, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        encode_frame(*args)


def test_parser_byte_by_byte() -> None:
    parser = FrameParser()
    out = [item for byte in GOOD for item in parser.feed(bytes([byte]))]
    assert out == [Frame(0x12, "C", "AS,04A1B2C3D4,17")]


def test_noise_reported_then_frame_kept() -> None:
    out = FrameParser().feed(b"\xff\x00junk" + GOOD)
    assert isinstance(out[0], FrameError) and out[0].raw == b"\xff\x00junk"
    assert out[0].nak_code is None and "noise" in out[0].reason
    assert out[1] == Frame(0x12, "C", "AS,04A1B2C3D4,17")


def test_trailing_noise_reported_on_flush() -> None:
    parser = FrameParser()
    assert parser.feed(b"zz") == []
    [error] = parser.flush()
    assert error.raw == b"zz"
    assert parser.flush() == []


def test_bad_crc_is_naked_as_crc() -> None:
    bad = GOOD[:-4] + b"0000"
    [error, good] = FrameParser().feed(bad + GOOD)
    assert isinstance(error, FrameError)
    assert (error.seq, error.nak_code) == (0x12, "CRC")
    assert "bad CRC" in error.reason and error.raw == bad
    assert good == Frame(0x12, "C", "AS,04A1B2C3D4,17")


def test_overlong_frame_rejected_and_next_frame_kept() -> None:
    out = FrameParser().feed(encode_overlong(5) + GOOD)
    assert isinstance(out[0], FrameError)
    assert "over-long" in out[0].reason and (out[0].seq, out[0].nak_code) == (5, "FORMAT")
    assert out[1:] == [Frame(0x12, "C", "AS,04A1B2C3D4,17")]


def test_longest_legal_payload_accepted() -> None:
    frame = encode_frame(1, "E", "J" * MAX_PAYLOAD)
    assert FrameParser().feed(frame) == [Frame(1, "E", "J" * MAX_PAYLOAD)]


def test_frame_cut_short_by_stx() -> None:
    out = FrameParser().feed(GOOD[:7] + GOOD)
    assert isinstance(out[0], FrameError)
    assert "cut short" in out[0].reason and out[0].nak_code == "FORMAT"
    assert out[1] == Frame(0x12, "C", "AS,04A1B2C3D4,17")


def test_stx_inside_crc_field() -> None:
    out = FrameParser().feed(GOOD[:-2] + GOOD)
    assert isinstance(out[0], FrameError) and out[1] == Frame(0x12, "C", "AS,04A1B2C3D4,17")


@pytest.mark.parametrize("body, reason", [
    (b"1", "too short"),
    (b"zzC", "SEQ"),
    (b"12#", "TYPE"),
    (b"12C\x7f", "printable"),
])
def test_format_errors(body: bytes, reason: str) -> None:
    framed = bytes([STX]) + body + bytes([ETX])
    framed += f"{crc16_ccitt_false(framed[1:]):04X}".encode()
    [error] = FrameParser().feed(framed)
    assert isinstance(error, FrameError) and reason in error.reason


def test_lowercase_crc_digits_rejected() -> None:
    [error] = FrameParser().feed(GOOD[:-4] + GOOD[-4:].lower())
    assert isinstance(error, FrameError)


@given(st.binary(max_size=200), st.integers(0, 255), st.sampled_from(DECK))
def test_garbage_never_costs_the_next_good_frame(garbage: bytes, seq: int, card: Card) -> None:
    frame = encode_frame(seq, "C", f"{str(card).upper()},,1")
    parser = FrameParser()
    out = parser.feed(garbage) + parser.feed(frame)
    assert out[-1] == Frame(seq, "C", f"{str(card).upper()},,1")


@given(st.lists(st.integers(1, 20), max_size=30))
def test_chunking_does_not_change_the_result(cuts: list[int]) -> None:
    stream = b"noise" + GOOD + GOOD[:-1] + b"X" + encode_overlong(3) + GOOD + b"\x02\x03"
    expected = FrameParser().feed(stream)
    parser, out, pos = FrameParser(), [], 0
    for cut in cuts:
        out += parser.feed(stream[pos:pos + cut])
        pos += cut
    out += parser.feed(stream[pos:])
    assert out == expected


_PIECES = st.one_of(
    st.builds(lambda seq, card: encode_frame(seq, "C", f"{str(card).upper()},,1"),
              st.integers(0, 255), st.sampled_from(DECK)),
    st.builds(lambda frame, cut: frame[:cut], st.just(GOOD), st.integers(0, len(GOOD))),
    st.sampled_from([encode_overlong(7), encode_overlong(8, MAX_PAYLOAD + 1)]),
    st.just(encode_frame(1, "E", "J" * MAX_PAYLOAD)),
    st.sampled_from([bytes([STX]), bytes([ETX]), b"\x02\x03", b"12C", b"FFFF"]),
    st.binary(max_size=12),
)


@given(st.lists(_PIECES, max_size=12))
def test_whole_frames_at_once_read_as_byte_by_byte(pieces: list[bytes]) -> None:
    """The parser's whole-frame fast path gives what the byte-at-a-time state machine gives,
    state left behind included."""
    stream = b"".join(pieces)
    whole, single = FrameParser(), FrameParser()
    expected = [item for byte in stream for item in single.feed(bytes([byte]))]
    assert whole.feed(stream) == expected
    assert whole.flush() == single.flush()
    assert whole.feed(GOOD) == single.feed(GOOD)


def test_crc_is_the_table_driven_one() -> None:
    from drivers.crc import crc16_table

    for data in (b"", b"123456789", bytes(range(256)), GOOD):
        for start in (0, 0xFFFF, 0x1D0F):
            assert crc16_ccitt_false(data, start) == crc16_table(data, start)


# -- message meaning ---------------------------------------------------------------------

def test_card_frames() -> None:
    assert frame_to_event(Frame(7, "C", "AS,,1")) == CardRead(parse_card("As"), 7, None, 1)
    assert frame_to_event(Frame(7, "C", "TD,04a1b2c3d4,17")) == \
        CardRead(parse_card("Td"), 7, "04A1B2C3D4", 17)
    ten = frame_to_event(Frame(7, "C", "10H,,65535"))
    assert isinstance(ten, CardRead) and ten.card == parse_card("Th")


@pytest.mark.parametrize("code", list(FaultCode))
def test_every_fault_code_maps(code: FaultCode) -> None:
    assert frame_to_event(Frame(1, "E", code.value)) == ShoeFault(code)
    assert frame_to_event(Frame(1, "E", f"{code.value},left side")) == \
        ShoeFault(code, "left side")


@pytest.mark.parametrize("state", list(ShoeState))
def test_every_status_maps(state: ShoeState) -> None:
    assert frame_to_event(Frame(1, "S", state.value)) == ShoeStatus(state)


def test_heartbeat() -> None:
    assert frame_to_event(Frame(1, "H", "3600")) == Heartbeat(3600)


@pytest.mark.parametrize("frame, reason", [
    (Frame(1, "C", "ZZ,,1"), "rank"),
    (Frame(1, "C", "AX,,1"), "suit"),
    (Frame(1, "C", ",,1"), "empty card"),
    (Frame(1, "C", "AS,XYZ,1"), "RFID tag"),
    (Frame(1, "C", "AS,04A1B2C3D4"), "expected card,tag,count"),
    (Frame(1, "C", "AS"), "expected card,tag,count"),
    (Frame(1, "C", "AS,,1,2"), "expected card,tag,count"),
    (Frame(1, "C", "AS,,0"), "card count '0' is not 1-65535"),
    (Frame(1, "C", "AS,,65536"), "card count '65536'"),
    (Frame(1, "C", "AS,,-3"), "card count '-3'"),
    (Frame(1, "C", "AS,,"), "card count ''"),
    (Frame(1, "C", "AS,,999999999999"), "card count"),
])
def test_an_unreadable_card_frame_is_a_misread(frame: Frame, reason: str) -> None:
    """A card left the shoe even if its frame cannot be read: the hand must pause."""
    event = frame_to_event(frame)
    assert isinstance(event, ShoeFault) and event.code is FaultCode.MISREAD
    assert reason in event.detail


@pytest.mark.parametrize("frame, reason", [
    (Frame(1, "E", "FIRE"), "unknown fault code 'FIRE'"),
    (Frame(1, "S", "NAPPING"), "unknown status 'NAPPING'"),
    (Frame(1, "H", "-1"), "uptime"),
    (Frame(1, "A", "01"), "unexpected frame type 'A'"),
])
def test_meaningless_frames_say_why(frame: Frame, reason: str) -> None:
    with pytest.raises(FrameContentError, match=reason):
        frame_to_event(frame)


def test_event_records() -> None:
    assert event_record(CardRead(parse_card("As"), 12, "04A1B2C3D4", 17)) == \
        {"type": "card", "card": "As", "seq": 12, "tag": "04A1B2C3D4", "count": 17}
    assert event_record(SequenceConflict(3, "why")) == \
        {"type": "conflict", "seq": 3, "detail": "why", "about_cards": True}
    assert event_record(ShoeFault(FaultCode.JAM)) == {"type": "fault", "code": "JAM"}
    assert event_record(FrameRejected("bad", b"\x02")) == \
        {"type": "rejected", "reason": "bad", "raw": "02"}


# -- USB reports --------------------------------------------------------------------------

@pytest.mark.parametrize("card", [DECK[0], DECK[12], DECK[13], DECK[51]])
def test_usb_card_report_round_trip(card: Card) -> None:
    report = encode_card(9, card, deck_tag(card), 300)
    assert len(report) == 10 and report[2] == card.rank and report[8:] == b"\x01\x2c"
    assert decode_report(report) == CardRead(card, 9, deck_tag(card), 300)
    untagged = decode_report(encode_card(9, card, None, 1))
    assert isinstance(untagged, CardRead) and untagged.tag is None


@pytest.mark.parametrize("code", list(FaultCode))
def test_usb_every_fault_code(code: FaultCode) -> None:
    event = decode_report(encode_fault(3, code, "0BADBEEF"))
    assert isinstance(event, ShoeFault) and event.code is code


@pytest.mark.parametrize("state", list(ShoeState))
def test_usb_every_status(state: ShoeState) -> None:
    assert decode_report(encode_status(3, state)) == ShoeStatus(state)


def test_usb_heartbeat() -> None:
    assert decode_report(encode_heartbeat(3, 70000)) == Heartbeat(70000)


@pytest.mark.parametrize("report, reason", [
    (b"\x01\x00\x0e\x00\x00\x00\x00\x00\x00\x01", "rank byte 14"),
    (b"\x01\x00\x01\x04\x00\x00\x00\x00\x00\x01", "suit byte 4"),
    (b"\x01\x00\x01\x00\x00\x00\x00\x00\x00\x00", "card count 0"),
    (b"\x01\x00\x01\x00\x00\x00\x00\x00", "card report is 8 bytes, expected 10"),
    (b"\x02\x00\x01\x00\x00\x00\x00\x00\x00\x00", "report is 10 bytes, expected 8"),
    (b"\x02\x00\x09\x00\x00\x00\x00\x00", "unknown fault code 9"),
    (b"\x03\x00\x09\x00\x00\x00\x00\x00", "unknown status code 9"),
    (b"\x07\x00\x00\x00\x00\x00\x00\x00", "unknown report type 7"),
    (b"\x01\x00", "2 bytes, expected 10"),
    (b"\x04", "1 bytes, expected 8"),
])
def test_usb_bad_reports(report: bytes, reason: str) -> None:
    with pytest.raises(ReportError, match=reason):
        decode_report(report)
    event = decode_to_event(report)
    if len(report) == 10 and report[0] == 1:
        # A whole card report with an unreadable card: a misread, and the hand pauses.
        assert isinstance(event, ShoeFault) and event.code is FaultCode.MISREAD
        assert reason in event.detail
    else:
        assert isinstance(event, FrameRejected)


# -- the sequence rules ---------------------------------------------------------------------

def test_sequence_gate() -> None:
    gate = SequenceGate()
    new, again, conflict = SequenceGate.NEW, SequenceGate.RETRANSMISSION, SequenceGate.CONFLICT
    assert [gate.admit(s, c) for s, c in ((0xFE, "H1"), (0xFF, "CAS,,1"), (0xFF, "CAS,,1"),
                                          (0xFF, "C2D,,2"), (0xFF, "CAS,,1"), (0x00, "H2"),
                                          (0x00, "H2"), (0x01, "H3"))] == \
        [new, new, again, conflict, again, new, again, new]


def test_receiver_acks_retransmission_but_counts_once() -> None:
    receiver = ShoeReceiver()
    card = CardRead(parse_card("As"), 4, None, 1)
    first = receiver.receive(Message(4, card, "CAS,,1"))
    again = receiver.receive(Message(4, card, "CAS,,1"))
    assert (first.events, first.ack) == ([card], 4)
    assert (again.events, again.ack, again.retransmission) == ([], 4, True)


def test_receiver_refuses_the_last_seq_with_other_content_and_reports_it_once() -> None:
    receiver = ShoeReceiver()
    receiver.receive(Message(4, CardRead(parse_card("As"), 4, None, 1), "CAS,,1"))
    other = CardRead(parse_card("Kd"), 4, None, 2)
    refused = receiver.receive(Message(4, other, "CKD,,2"))
    assert refused.ack is None and refused.nak == (4, "CONFLICT")
    [conflict] = refused.events
    assert conflict == SequenceConflict(4, "SEQ 04 was accepted as 'CAS,,1', now sent as "
                                           "'CKD,,2': refused")
    again = receiver.receive(Message(4, other, "CKD,,2"))       # sent again: refused again
    assert again.nak == (4, "CONFLICT") and again.events == [] and again.ack is None
    assert receiver.receive(Message(4, CardRead(parse_card("As"), 4, None, 1),
                                    "CAS,,1")).retransmission   # the accepted one still is
    moved = receiver.receive(Message(5, other, "CKD,,2"))        # under a new SEQ: a card
    assert (moved.events, moved.ack) == ([other], 5)


def test_a_conflict_between_heartbeats_is_not_about_cards() -> None:
    receiver = ShoeReceiver()
    receiver.receive(Message(9, Heartbeat(4), "H4"))
    [conflict] = receiver.receive(Message(9, Heartbeat(0), "H0")).events
    assert isinstance(conflict, SequenceConflict) and not conflict.about_cards
    receiver.receive(Message(10, CardRead(parse_card("As"), 10, None, 1), "CAS,,1"))
    [conflict] = receiver.receive(Message(10, Heartbeat(5), "H5")).events
    assert isinstance(conflict, SequenceConflict) and conflict.about_cards


def test_receiver_naks_garbled_only_when_seq_known() -> None:
    receiver = ShoeReceiver()
    rejected = FrameRejected("bad CRC", b"")
    assert receiver.receive(Garbled(rejected, 5, "CRC")).nak == (5, "CRC")
    verdict = receiver.receive(Garbled(rejected))
    assert verdict.nak is None and verdict.events == [rejected] and verdict.ack is None


def test_tag_registry() -> None:
    registry = TagRegistry.simulated_deck()
    assert len(registry) == 52
    assert registry.card_for(deck_tag(parse_card("Kh")).lower()) == parse_card("Kh")
    assert "0BADBEEF" not in registry
    with pytest.raises(ValueError, match="already registered"):
        registry.register(deck_tag(parse_card("Kh")), parse_card("As"))


def test_protocol_document_matches_the_code() -> None:
    """docs/protocols.md is the hardware makers' copy: its examples and tables must hold."""
    from pathlib import Path

    from drivers.alpha import write_text_packet
    from drivers.usb_report import FAULT_CODES, STATUS_CODES

    doc = (Path(__file__).resolve().parents[2] / "docs" / "protocols.md").read_text()
    assert f"'{GOOD[-4:].decode()}'" in doc  # the LBS1 example frame's CRC
    assert f"'{write_text_packet('$12,345.67')[-5:-1].decode()}'" in doc  # the Alpha example
    assert f"CCITT-FALSE of `123456789` is `{crc16_ccitt_false(b'123456789'):04X}`" in doc
    faults = ", ".join(f"{n} `{c.value}`" for n, c in FAULT_CODES.items())
    states = ", ".join(f"{n} `{s.value}`" for n, s in STATUS_CODES.items())
    assert f"Fault codes: {faults}." in doc
    assert f"Status codes: {states}." in doc

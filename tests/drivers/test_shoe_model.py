"""The simulated shoe as a pure byte machine, stepped with an explicit clock."""

from __future__ import annotations

from controller.core.cards import DECK, parse_cards
from drivers.lbs1 import Frame, FrameError, FrameParser, encode_frame
from drivers.shoe_events import CardRead, FaultCode, ShoeFault
from drivers.usb_report import decode_report
from simulators.clock import ManualClock
from simulators.shoe import Lbs1ShoeModel, UsbShoeModel, card_order


def frames(data: bytes) -> list[Frame]:
    return [item for item in FrameParser().feed(data) if isinstance(item, Frame)]


def ack(seq: int) -> bytes:
    return encode_frame(0, "A", f"{seq:02X}")


def test_deals_the_given_order_with_tags() -> None:
    model = Lbs1ShoeModel("As 7d")
    model.deal(2)
    first = frames(model.poll(0.0))
    assert first == [Frame(0, "C", "AS,04A1B227,1")]
    model.receive(ack(0), 0.0)
    assert frames(model.poll(0.01)) == [Frame(1, "C", "7D,04A1B213,2")]


def test_the_card_count_starts_again_after_a_shuffle_or_a_reset() -> None:
    model = Lbs1ShoeModel("As 7d 2c", heartbeat_every_s=100, tags=False)
    model.deal(2)
    assert model.count == 2
    model.load("Kh Qs")
    model.deal()
    model.host_reset()
    model.deal()
    got, now = [], 0.0
    for _ in range(8):
        for frame in frames(model.poll(now)):
            got.append(frame.payload)
            model.receive(ack(frame.seq), now)
        now += 0.01
    assert [p for p in got if "," in p] == ["AS,,1", "7D,,2", "KH,,1", "QS,,1"]


def test_seeded_shuffle_is_a_repeatable_permutation() -> None:
    assert card_order(seed=7) == card_order(seed=7) != card_order(seed=8)
    assert sorted(card_order(seed=7), key=lambda c: c.index) == list(DECK)
    assert card_order() == list(DECK)


def test_retransmits_three_times_after_200_ms_then_once_a_second_until_acknowledged() -> None:
    clock = ManualClock()
    model = Lbs1ShoeModel("As 7d", heartbeat_every_s=100)
    model.deal(2)
    card = [Frame(0, "C", "AS,04A1B227,1")]
    assert frames(model.poll(clock())) == card
    assert model.poll(clock.advance(0.19)) == b""
    for _ in range(3):
        assert frames(model.poll(clock.advance(0.01))) == card
        clock.advance(0.19)
    assert model.halted
    for _ in range(5):                               # well past the old 0.8 s window
        assert model.poll(clock.advance(0.8)) == b""  # nothing else goes out meanwhile
        assert frames(model.poll(clock.advance(0.2))) == card
    assert model.history.count(("retransmit", 0)) == 8 and ("halted", 0) in model.history
    model.receive(ack(0), clock())
    assert not model.halted
    assert frames(model.poll(clock.advance(0.01))) == [Frame(1, "C", "7D,04A1B213,2")]


def test_a_conflict_nak_sends_the_message_again_under_a_new_seq() -> None:
    model = Lbs1ShoeModel("As 7d", heartbeat_every_s=100)
    model.deal()
    model.poll(0.0)
    model.receive(ack(0), 0.0)
    model.reuse_seq()
    model.deal()
    assert frames(model.poll(0.01)) == [Frame(0, "C", "7D,04A1B213,2")]
    model.receive(encode_frame(1, "N", "00,CONFLICT"), 0.02)
    assert frames(model.poll(0.02)) == [Frame(1, "C", "7D,04A1B213,2")]
    assert ("conflict", 0) in model.history


def test_cards_lost_inside_the_shoe_skip_the_count() -> None:
    model = Lbs1ShoeModel("As 7d 2c 9h", heartbeat_every_s=100, tags=False)
    model.deal()
    model.lose_cards(2)
    model.deal()
    first = frames(model.poll(0.0))
    model.receive(ack(0), 0.0)
    assert first + frames(model.poll(0.01)) == [Frame(0, "C", "AS,,1"), Frame(1, "C", "9H,,4")]
    assert [str(card) for card in model.dealt] == ["As", "7d", "2c", "9h"]


def test_nak_brings_an_immediate_resend() -> None:
    model = Lbs1ShoeModel("As", heartbeat_every_s=100)
    model.deal()
    model.poll(0.0)
    model.receive(encode_frame(0, "N", "00,CRC"), 0.01)
    assert frames(model.poll(0.01)) == [Frame(0, "C", "AS,04A1B227,1")]
    assert ("nak", 0) in model.history


def test_dropped_ack_forces_retransmission() -> None:
    model = Lbs1ShoeModel("As", heartbeat_every_s=100)
    model.drop_acks(1)
    model.deal()
    model.poll(0.0)
    model.receive(ack(0), 0.0)
    assert len(frames(model.poll(0.2))) == 1
    model.receive(ack(0), 0.2)
    assert model.poll(0.4) == b""
    assert model.history == [("sent", 0), ("ack-dropped", 0), ("retransmit", 0), ("acked", 0)]


def test_heartbeat_every_second_when_idle() -> None:
    model = Lbs1ShoeModel("As")
    assert model.poll(0.0) == b""
    assert model.poll(0.99) == b""
    assert frames(model.poll(1.0)) == [Frame(0, "H", "1")]


def test_bad_crc_then_good_resend() -> None:
    model = Lbs1ShoeModel("As", heartbeat_every_s=100)
    model.corrupt_next_crc()
    model.deal()
    [bad] = FrameParser().feed(model.poll(0.0))
    assert isinstance(bad, FrameError) and "bad CRC" in bad.reason
    model.receive(encode_frame(0, "N", "00,CRC"), 0.0)
    assert frames(model.poll(0.0)) == [Frame(0, "C", "AS,04A1B227,1")]


def test_faults_empty_door_tag_silence() -> None:
    model = Lbs1ShoeModel("As", heartbeat_every_s=100)
    model.open_door()
    model.deal()
    model.close_door()
    model.unknown_tag()
    model.deal()
    model.deal()
    model.jam()
    model.go_silent()
    assert model.poll(0.0) == b""
    model.resume()
    got, now = [], 0.0
    for _ in range(12):
        for frame in frames(model.poll(now)):
            got.append((frame.type, frame.payload))
            model.receive(ack(frame.seq), now)
        now += 0.01
    assert got == [("E", "DOOR"), ("S", "DOOROPEN"), ("E", "DOOR,door is open"),
                   ("S", "READY"), ("E", "TAGUNKNOWN,0BADBEEF"), ("E", "EMPTY"), ("E", "JAM")]


def test_status_query_and_reset() -> None:
    model = Lbs1ShoeModel("As", heartbeat_every_s=100)
    model.receive(encode_frame(0, "Q"), 0.0)
    assert frames(model.poll(0.0)) == [Frame(0, "S", "READY")]
    model.receive(ack(0) + encode_frame(1, "R") + b"\x02junk", 0.0)
    assert frames(model.poll(0.0)) == [Frame(1, "S", "READY")]
    model.receive(b"\x02", 0.0)  # completes the junk frame as an error
    assert model.host_errors


def test_usb_model_reports_and_acks() -> None:
    model = UsbShoeModel(parse_cards("Kc"), heartbeat_every_s=100)
    model.deal()
    model.misread()
    [report] = model.reports(0.0)
    assert len(report) == 10
    read = decode_report(report)
    assert isinstance(read, CardRead)
    assert read.card == parse_cards("Kc")[0]
    assert read.count == 1
    assert not model.control(0xC0, 0x01, 0)
    assert model.control(0x40, 0x01, 0)
    [fault] = model.reports(0.0)
    misread = decode_report(fault)
    assert isinstance(misread, ShoeFault) and misread.code is FaultCode.MISREAD

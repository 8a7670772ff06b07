"""What the table writes where the dealer's side reads it (a fault's text, an alarm) names no
card, no RFID tag and no raw frame; a shoe back in a hand is an alarm (game protection, a
second look: a conflict's fault named both tags, which the table family's ``shoe_card`` lacks
but a dealer could match to their cards once seen; a shoe fault's text carried the shoe's raw
frame; a shoe unplugged mid-hand and plugged back, perhaps another one, dealt on unseen)."""

from __future__ import annotations

from controller.core.cards import parse_card
from controller.core.hidden_cards import CARD_TEXT
from controller.core.table_events import Alarm, Fault
from controller.core.vocabulary import Device, DeviceCondition, FaultCode, ShoeFaultCode

from tests.support.table import Driver, cali_hand


def test_a_shoe_fault_says_the_shoes_code_and_not_its_frame() -> None:
    d = Driver()
    cali_hand(d)
    d.cards("As 9c")
    events = d.table.shoe_fault(ShoeFaultCode.MISREAD, "frame E,MISREAD,04A1B227,CAS")
    fault = next(e for e in events if type(e) is Fault)
    assert fault.detail.endswith("(the shoe reported MISREAD)")
    assert "04A1B227" not in fault.detail and "CAS" not in fault.detail
    assert fault.code == FaultCode.SHOE_MISREAD


def test_a_conflicting_card_is_refused_in_words_naming_no_tag() -> None:
    d = Driver()
    cali_hand(d)
    d.record(d.table.shoe_card(parse_card("As"), 7, "04A1B227", 1))
    events = d.table.shoe_card(parse_card("7d"), 7, "04A1B213", 1)   # count 1 again
    fault = next(e for e in events if type(e) is Fault)
    assert fault.code == FaultCode.SHOE_CONFLICT and not fault.recoverable
    assert "04A1B2" not in fault.detail
    assert "refused" in fault.detail


def test_a_shoe_lost_and_back_during_a_hand_is_an_alarm_naming_the_count() -> None:
    d = Driver()
    cali_hand(d)
    d.cards("As 9c")
    d.record(d.table.device_status(Device.SHOE, DeviceCondition.LOST, "no frame for 3 s"))
    events = d.record(d.table.device_status(Device.SHOE, DeviceCondition.CONNECTED,
                                            "/dev/ttyUSB0"))
    (alarm,) = [e for e in events if type(e) is Alarm]
    assert alarm.code == "shoe_back_in_hand"
    assert "card count 2" in alarm.detail and "surveillance" in alarm.detail


def test_a_shoe_lost_and_back_between_hands_is_no_alarm() -> None:
    d = Driver()
    d.do(command="open")
    d.record(d.table.device_status(Device.SHOE, DeviceCondition.LOST, "unplugged"))
    events = d.record(d.table.device_status(Device.SHOE, DeviceCondition.CONNECTED,
                                            "/dev/ttyUSB0"))
    assert not [e for e in events if type(e) is Alarm]


def test_a_card_in_a_text_is_spelled_as_the_table_writes_it_not_an_english_word() -> None:
    found = [m.group() for m in CARD_TEXT.finditer(
        "As, 10♦, Td and KH; as much as 2c; 10s; a4s; Kc2")]
    assert found == ["As", "10♦", "Td", "KH", "2c", "10s"]

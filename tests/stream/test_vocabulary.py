"""Every vocabulary is an enum, declared once, listed by the wire schema and enforced by the
wire; a device's fault is its own event, and version 1 journals still read."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

import pytest

from controller.core import vocabulary
from controller.core.cards import Card
from controller.core.events import CardDealt, PhaseStarted
from controller.core.table_events import DeviceFault, DeviceStatus, Fault, LampSet, TableState
from controller.core.vocabulary import (
    Device,
    DeviceCondition,
    FaultCode,
    Phase,
    ShoeFaultCode,
    SpotLamp,
)
from controller.stream import event_encoder, wire
from drivers.shoe_events import FaultCode as ShoeProtocolFaultCode
from drivers.spots import LAMPS, OFF

from tests.support.stream import HAND, TABLE, TS

VOCABULARIES: list[type[StrEnum]] = [
    cls for cls in vars(vocabulary).values()
    if isinstance(cls, type) and issubclass(cls, StrEnum) and cls is not StrEnum]


def test_the_schema_lists_every_vocabulary_as_an_enum() -> None:
    definitions = wire.json_schema()["$defs"]
    enums: list[type[StrEnum]] = [*VOCABULARIES, TableState]
    for enum in enums:
        assert definitions[enum.__name__]["enum"] == [member.value for member in enum]
    lamp = definitions["LampSetData"]["properties"]["lamp"]
    assert lamp == {"$ref": "#/$defs/SpotLamp"}
    heartbeat_state = definitions["Heartbeat"]["properties"]["state"]
    assert heartbeat_state == {"$ref": "#/$defs/TableState"}


@pytest.mark.parametrize("event, field", [
    # Values outside their vocabularies, deliberately: what the encoder must refuse.
    (LampSet(3, "blue"), "data.lamp"),
    (PhaseStarted("first_deal"), "data.phase"),
    (Fault("missing_cards", "", Device.SHOE, False), "data.code"),
    (DeviceStatus(Device.SHOE, "fault:JAM", ""), "data.status"),
])
def test_a_value_outside_its_vocabulary_is_refused_naming_the_field(event: Any, field: str) -> None:
    with pytest.raises(wire.WireError) as caught:
        wire.encode(event, table_id=TABLE, seq=1, ts=TS, hand_id=None)
    assert caught.value.problems[0].startswith(f"{field}: Input should be")


def test_a_member_and_its_text_are_the_same_bytes_on_the_fast_path() -> None:
    writer = event_encoder.EnvelopeWriter(wire.EVENT_KINDS, wire.SCHEMA_VERSION)
    ts = event_encoder.timestamp(TS)
    member = writer.encode(PhaseStarted(Phase.PRE_FLOP), table_id=TABLE, seq=1, ts=ts,
                           hand_id=HAND)
    text = writer.encode(PhaseStarted("pre-flop"), table_id=TABLE, seq=1, ts=ts, hand_id=HAND)
    assert member == text == wire.reference_encode(PhaseStarted(Phase.PRE_FLOP), table_id=TABLE,
                                                   seq=1, ts=TS, hand_id=HAND)
    assert b'"phase":"pre-flop"' in member
    decoded = wire.to_event(wire.decode_event(member))
    assert decoded == PhaseStarted("pre-flop") and decoded.phase is Phase.PRE_FLOP


def test_the_fast_path_steps_aside_for_a_value_outside_the_vocabulary() -> None:
    writer = event_encoder.EnvelopeWriter(wire.EVENT_KINDS, wire.SCHEMA_VERSION)
    with pytest.raises(event_encoder.Unfit):
        blue = LampSet(1, "blue")  # deliberately: no such lamp
        writer.encode(blue, table_id=TABLE, seq=1, ts=event_encoder.timestamp(TS), hand_id=None)


V1_FAULT = (b'{"data":{"detail":"card stuck","device":"shoe","status":"fault:JAM"},'
            b'"hand_id":"CALI-01-000017","schema_version":1,"seq":12,"table_id":"CALI-01",'
            b'"ts":"2026-11-21T23:50:00.123456Z","type":"device_status"}')


def test_a_version_1_fault_status_reads_as_the_device_fault_it_stands_for() -> None:
    envelope = wire.decode_event(V1_FAULT)
    assert envelope.type == "device_fault" and envelope.schema_version == 1
    assert (envelope.seq, envelope.hand_id) == (12, HAND)
    assert wire.to_event(envelope) == DeviceFault(Device.SHOE, ShoeFaultCode.JAM, "card stuck")
    assert wire.decode_reply(V1_FAULT).type == "device_fault"  # replayed by an old journal


def test_a_version_1_record_reads_as_it_was_written() -> None:
    v1 = wire.encode(CardDealt(parse("As"), 3, "flop"), table_id=TABLE, seq=5, ts=TS,
                     hand_id=HAND).replace(f'"schema_version":{wire.SCHEMA_VERSION}'.encode(),
                                           b'"schema_version":1')
    envelope = wire.decode_event(v1)
    assert envelope.schema_version == 1 and wire.dumps(envelope) == v1


def test_a_device_fault_is_its_own_event_on_the_wire() -> None:
    message = wire.encode(DeviceFault(Device.SHOE, ShoeFaultCode.CONFLICT, "SEQ 07 named Kd"),
                          table_id=TABLE,
                          seq=3, ts=TS, hand_id=HAND)
    assert json.loads(message)["type"] == "device_fault"
    assert json.loads(message)["data"] == {"device": "shoe", "code": "CONFLICT",
                                           "detail": "SEQ 07 named Kd"}


def test_every_fault_a_shoe_can_report_is_a_device_fault_code() -> None:
    assert {code.value for code in ShoeProtocolFaultCode} < {code.value for code in ShoeFaultCode}


def test_every_lamp_the_table_names_has_a_lamp_on_the_felt_and_off_is_dark() -> None:
    assert set(LAMPS) == set(SpotLamp)
    assert LAMPS[SpotLamp.OFF] is OFF
    assert LAMPS["off"] is OFF  # type: ignore[index]  # the text, deliberately: the same lamp


def test_fault_codes_and_device_statuses_are_declared_once() -> None:
    from controller.core import table_events
    assert not hasattr(table_events, "FAULT_CODES")
    assert "missing_cards" not in {code.value for code in FaultCode}  # never emitted
    assert "fault" not in " ".join(DeviceCondition)


def parse(text: str) -> Card:
    from controller.core.cards import parse_card
    return parse_card(text)

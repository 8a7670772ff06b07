"""A device's fault is its own event: the table journals a ``device_fault`` (not a status
string to parse) and rebuilds from it, and from a version 1 journal's ``fault:<code>``."""

from __future__ import annotations

from datetime import UTC, datetime

from controller.core.table import Table
from controller.core.table_events import DeviceFault, DeviceStatus, Fault
from controller.core.vocabulary import Device, DeviceCondition, FaultCode, ShoeFaultCode
from controller.daemon.device_hub import shoe_report, spots_report
from controller.stream import wire
from drivers.shoe_events import FaultCode as ShoeProtocolFaultCode
from drivers.shoe_events import SequenceConflict, ShoeFault
from drivers.spots import LineRejected

from tests.support.table import Driver, cali_hand

TS = datetime(2026, 11, 25, 4, 0, tzinfo=UTC)


def test_a_shoe_fault_is_a_device_fault_then_a_fault_that_pauses() -> None:
    d = Driver()
    cali_hand(d)
    d.cards("As 9c")
    events = d.table.shoe_fault(ShoeFaultCode.JAM, "card stuck")
    assert events[:2] == [DeviceFault(Device.SHOE, ShoeFaultCode.JAM, "card stuck"),
                          Fault(FaultCode.SHOE_JAM, "the shoe is jammed (the shoe reported JAM)", Device.SHOE,
                                True)]
    assert d.table.state == "PAUSED"
    assert not any(type(event) is DeviceStatus for event in events)


def test_the_table_rebuilds_from_a_device_fault_and_from_a_version_1_fault_status() -> None:
    d = Driver()
    cali_hand(d)
    d.cards("As 9c")
    d.record(d.table.shoe_fault(ShoeFaultCode.JAM, "card stuck"))
    messages = [wire.encode(event, table_id="T", seq=seq, ts=TS, hand_id=None)
                for seq, event in enumerate(d.events, 1)]
    now = f'"schema_version":{wire.SCHEMA_VERSION}'.encode()
    v1 = [message.replace(now, b'"schema_version":1') for message in messages]
    fault = messages.index(next(m for m in messages if b'"device_fault"' in m))
    v1[fault] = v1[fault].replace(b'"code":"JAM"', b'"status":"fault:JAM"').replace(
        b'"device_fault"', b'"device_status"')
    for journal in (messages, v1):
        table = Table(d.table.table_id, d.table.settings)
        table.replay([wire.to_event(wire.decode_event(message)) for message in journal])
        assert table.snapshot() == d.table.snapshot()
        assert table.fault is not None
        assert table.state == "PAUSED" and table.fault.code == FaultCode.SHOE_JAM


def test_the_device_hub_reports_in_the_vocabularies() -> None:
    jam = shoe_report(ShoeFault(ShoeProtocolFaultCode.JAM, "stuck"))
    assert jam is not None and jam.args == (ShoeFaultCode.JAM, "stuck")
    conflict = shoe_report(SequenceConflict(7, "SEQ 07 named Kd", about_cards=True))
    assert conflict is not None and conflict.args[0] is ShoeFaultCode.CONFLICT
    rejected = spots_report(LineRejected("garbled"))
    assert rejected is not None and rejected.args[:2] == (
        Device.SPOTS, DeviceCondition.LINE_REJECTED)

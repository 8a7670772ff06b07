"""The USB driver through pyusb's real code path, over the simulated device backend."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import usb.core
import usb.util

from controller.core.cards import parse_card
from drivers.config import ShoeConfig
from drivers.shoe_events import (
    CardRead,
    FaultCode,
    FrameRejected,
    SequenceConflict,
    ShoeConnected,
    ShoeFault,
    ShoeLost,
    ShoeState,
    ShoeStatus,
)
from drivers.shoe_usb import UsbShoe
from simulators.shoe import UsbShoeModel
from simulators.usb_backend import SimulatedUsbShoe

from tests.support.drivers import EventWaiter, poll_until


@pytest.fixture
def usb_rig() -> Iterator[tuple[SimulatedUsbShoe, UsbShoe, EventWaiter]]:
    backend = SimulatedUsbShoe(UsbShoeModel("As 7d Kc 2h", heartbeat_every_s=1.0))
    shoe = UsbShoe(ShoeConfig(driver="usb", reconnect_initial_s=0.05, reconnect_max_s=0.2),
                   backend=backend)
    shoe.start()
    waiter = EventWaiter(shoe)
    waiter.next(ShoeConnected)
    yield backend, shoe, waiter
    shoe.stop()


def test_pyusb_sees_the_simulated_device() -> None:
    backend = SimulatedUsbShoe()
    device = usb.core.find(idVendor=0x1209, idProduct=0x4C42, backend=backend)
    assert device is not None
    endpoint = device[0][(0, 0)][0]
    assert endpoint.bEndpointAddress == 0x81
    assert usb.util.endpoint_type(endpoint.bmAttributes) == usb.util.ENDPOINT_TYPE_INTR
    assert usb.core.find(idVendor=0x1209, idProduct=0x0001, backend=backend) is None
    usb.util.dispose_resources(device)


def test_deal_over_usb(usb_rig: Any) -> None:
    backend, shoe, waiter = usb_rig
    backend.device.deal(2)
    cards = waiter.collect(2, CardRead)
    assert [str(c.card) for c in cards] == ["As", "7d"]
    assert cards[0].tag == "04A1B227"
    poll_until(lambda: ("acked", 1) in backend.device.history)


def test_usb_dropped_ack_counted_once(usb_rig: Any) -> None:
    backend, shoe, waiter = usb_rig
    with backend.lock:
        backend.device.drop_acks(1)
        backend.device.deal()
    assert waiter.next(CardRead).card == parse_card("As")
    poll_until(lambda: ("acked", 0) in backend.device.history)
    backend.device.deal()
    assert waiter.next(CardRead).card == parse_card("7d")
    assert shoe.retransmissions >= 1
    assert sum(isinstance(e, CardRead) for e in waiter.seen) == 2


def test_usb_card_reports_carry_the_card_count(usb_rig: Any) -> None:
    backend, shoe, waiter = usb_rig
    with backend.lock:
        backend.device.deal()
        backend.device.lose_cards(1)
        backend.device.deal()
    assert [(str(c.card), c.count) for c in waiter.collect(2, CardRead)] == \
        [("As", 1), ("Kc", 3)]


def test_usb_reused_sequence_is_refused_then_taken_under_its_new_sequence(usb_rig: Any) -> None:
    backend, shoe, waiter = usb_rig
    backend.device.deal()
    first = waiter.next(CardRead)
    poll_until(lambda: ("acked", first.seq) in backend.device.history)
    with backend.lock:
        backend.device.reuse_seq()
        backend.device.deal()
    assert waiter.next(SequenceConflict).seq == first.seq
    card = waiter.next(CardRead)
    assert (str(card.card), card.seq, card.count) == ("7d", first.seq + 1, 2)
    assert ("conflict", first.seq) in backend.device.history
    assert sum(isinstance(e, CardRead) for e in waiter.seen) == 2


def test_usb_shoe_keeps_a_card_while_the_host_is_away(usb_rig: Any) -> None:
    backend, shoe, waiter = usb_rig
    shoe.stop()
    backend.device.deal()


    def sent_to_no_one() -> bool:
        """Step the shoe as the bus would, its reports lost: nobody reads them."""
        with backend.lock:
            backend.model.reports(backend.clock())
            retransmits: int = backend.model.history.count(("retransmit", 0))
            return retransmits >= 4

    poll_until(sent_to_no_one)                       # past the old 0.8 s window
    assert backend.device.halted
    again = UsbShoe(ShoeConfig(driver="usb", reconnect_initial_s=0.05), backend=backend)
    again.start()
    try:
        card = EventWaiter(again).next(CardRead)
        assert (str(card.card), card.count) == ("As", 1)
        poll_until(lambda: ("acked", card.seq) in backend.device.history)
    finally:
        again.stop()


def test_usb_faults_and_status(usb_rig: Any) -> None:
    backend, shoe, waiter = usb_rig
    with backend.lock:
        backend.device.jam()
        backend.device.open_door()
        backend.device.unknown_tag()
        backend.device.deal()
    got = waiter.collect(4, (ShoeFault, ShoeStatus))
    assert got == [ShoeFault(FaultCode.JAM), ShoeFault(FaultCode.DOOR),
                   ShoeStatus(ShoeState.DOOROPEN), ShoeFault(FaultCode.DOOR)]


def test_usb_unknown_tag(usb_rig: Any) -> None:
    backend, shoe, waiter = usb_rig
    with backend.lock:
        backend.device.unknown_tag()
        backend.device.deal()
    assert waiter.next(ShoeFault) == ShoeFault(FaultCode.TAGUNKNOWN, "0BADBEEF")


def test_malformed_reports_rejected_not_fatal(usb_rig: Any) -> None:
    backend, shoe, waiter = usb_rig
    with backend.lock:
        backend.device.inject_report(b"\x01\x07")
        backend.device.inject_report(b"\x09\x70\x00\x00\x00\x00\x00\x00")
        backend.device.deal()
    first, second = waiter.collect(2, FrameRejected)
    assert "expected 10" in first.reason and "unknown report type 9" in second.reason
    assert waiter.next(CardRead).card == parse_card("As")


def test_unplug_and_replug(usb_rig: Any) -> None:
    backend, shoe, waiter = usb_rig
    backend.unplug()
    assert "gone" in waiter.next(ShoeLost).reason
    backend.replug()
    waiter.next(ShoeConnected)
    backend.device.deal()
    assert waiter.next(CardRead).card == parse_card("As")


def test_absent_device_then_plugged_in() -> None:
    backend = SimulatedUsbShoe(UsbShoeModel("Kd"))
    backend.unplug()
    with UsbShoe(ShoeConfig(driver="usb", reconnect_initial_s=0.05, reconnect_max_s=0.1),
                 backend=backend) as shoe:
        waiter = EventWaiter(shoe)
        assert "no USB shoe 1209:4c42" in waiter.next(ShoeLost).reason
        backend.replug()
        waiter.next(ShoeConnected)
        backend.device.deal()
        assert waiter.next(CardRead).card == parse_card("Kd")

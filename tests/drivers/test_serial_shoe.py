"""The LBS1 driver against the simulated shoe over a real pty and over socket://."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from controller.core.cards import parse_card
from drivers.config import ShoeConfig
from drivers.shoe_events import (
    CardRead,
    FaultCode,
    FrameRejected,
    Heartbeat,
    SequenceConflict,
    ShoeConnected,
    ShoeFault,
    ShoeLost,
    ShoeState,
    ShoeStatus,
)
from drivers.shoe_serial import SerialShoe
from drivers.tags import deck_tag

from tests.support.drivers import EventWaiter, ShoeRig, poll_until


def test_clean_deal_in_order_with_tags(shoe_rig: ShoeRig) -> None:
    sim, shoe, waiter = shoe_rig()
    sim.device.deal(4)
    cards = waiter.collect(4, CardRead)
    assert [str(c.card) for c in cards] == ["As", "7d", "Kc", "2h"]
    assert [c.seq for c in cards] == [0, 1, 2, 3]
    assert cards[0].tag == deck_tag(parse_card("As"))
    poll_until(lambda: ("acked", 3) in sim.device.history)
    assert not any(isinstance(e, FrameRejected) for e in waiter.seen)


def test_dropped_ack_retransmission_is_acked_again_and_counted_once(shoe_rig: ShoeRig) -> None:
    sim, shoe, waiter = shoe_rig()
    with sim.lock:
        sim.device.drop_acks(1)
        sim.device.deal()
    assert waiter.next(CardRead).card == parse_card("As")
    poll_until(lambda: ("acked", 0) in sim.device.history)
    history = sim.device.history
    assert ("ack-dropped", 0) in history and ("retransmit", 0) in history
    sim.device.deal()
    assert waiter.next(CardRead).card == parse_card("7d")  # not As a second time
    assert shoe.retransmissions >= 1
    assert sum(isinstance(e, CardRead) for e in waiter.seen) == 2


def test_bad_crc_is_naked_and_the_resend_counted_once(shoe_rig: ShoeRig) -> None:
    sim, shoe, waiter = shoe_rig()
    with sim.lock:
        sim.device.corrupt_next_crc()
        sim.device.deal()
    rejected = waiter.next(FrameRejected)
    assert "bad CRC" in rejected.reason
    assert waiter.next(CardRead).card == parse_card("As")
    poll_until(lambda: ("nak", 0) in sim.device.history)
    sim.device.deal()
    assert waiter.next(CardRead).card == parse_card("7d")


def test_noise_overlong_and_cut_frames_do_not_lose_good_frames(shoe_rig: ShoeRig) -> None:
    sim, shoe, waiter = shoe_rig()
    with sim.lock:
        sim.device.inject_noise(b"\xff\xfe garbage \r\n")
        sim.device.send_overlong()
        sim.device.inject_noise(b"\x0203CAS,")
        sim.device.deal(2)
    cards = waiter.collect(2, CardRead)
    assert [str(c.card) for c in cards] == ["As", "7d"]
    reasons = [e.reason for e in waiter.seen if isinstance(e, FrameRejected)]
    assert any("noise" in r for r in reasons)
    assert any("over-long" in r for r in reasons)
    assert any("cut short" in r for r in reasons)


@pytest.mark.parametrize("inject, expected", [
    (lambda m: m.jam(), [ShoeFault(FaultCode.JAM)]),
    (lambda m: m.misread(), [ShoeFault(FaultCode.MISREAD)]),
    (lambda m: (m.unknown_tag(), m.deal()), [ShoeFault(FaultCode.TAGUNKNOWN, "0BADBEEF")]),
    (lambda m: m.report_duplicate("As"), [ShoeFault(FaultCode.DUPLICATE, "AS")]),
    (lambda m: (m.open_door(), m.close_door()),
     [ShoeFault(FaultCode.DOOR), ShoeStatus(ShoeState.DOOROPEN), ShoeStatus(ShoeState.READY)]),
])
def test_every_fault_reaches_the_table(shoe_rig: ShoeRig, inject: Callable[[Any], object],
                                       expected: list[Any]) -> None:
    sim, shoe, waiter = shoe_rig()
    with sim.lock:
        inject(sim.model)
    sim.wake()
    got = waiter.collect(len(expected), (ShoeFault, ShoeStatus))
    assert got == expected


def test_empty_shoe(shoe_rig: ShoeRig) -> None:
    sim, shoe, waiter = shoe_rig("As")
    sim.device.deal(2)
    assert waiter.next(CardRead).card == parse_card("As")
    assert waiter.next(ShoeFault) == ShoeFault(FaultCode.EMPTY)


def test_silence_means_lost_and_speech_means_found(shoe_rig: ShoeRig) -> None:
    sim, shoe, waiter = shoe_rig(heartbeat_every_s=0.1, lost_after_s=0.4)
    waiter.next(Heartbeat)
    sim.device.go_silent()
    assert "no frame" in waiter.next(ShoeLost).reason
    sim.device.resume()
    waiter.next(ShoeConnected)
    waiter.next(Heartbeat)


def test_disconnect_and_reconnect(shoe_rig: ShoeRig) -> None:
    sim, shoe, waiter = shoe_rig()
    sim.device.deal()
    waiter.next(CardRead)
    sim.disconnect()
    lost = waiter.next(ShoeLost)
    assert sim.url in lost.reason
    sim.reconnect()
    waiter.next(ShoeConnected)
    sim.device.deal()
    assert waiter.next(CardRead).card == parse_card("7d")


def test_status_query(shoe_rig: ShoeRig) -> None:
    sim, shoe, waiter = shoe_rig()
    shoe.request_status()
    assert waiter.next(ShoeStatus) == ShoeStatus(ShoeState.READY)
    with sim.lock:
        sim.device.open_door()
    waiter.next(lambda e: e == ShoeStatus(ShoeState.DOOROPEN))
    shoe.reset()
    assert waiter.next(ShoeStatus) == ShoeStatus(ShoeState.READY)


def test_missing_port_is_reported_not_raised(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-tty")
    with SerialShoe(ShoeConfig(port=missing, reconnect_initial_s=0.05)) as shoe:
        lost = EventWaiter(shoe).next(ShoeLost)
        assert missing in lost.reason
        assert not shoe.connected


def test_a_failing_listener_does_not_stop_the_driver(shoe_rig: ShoeRig,
                                                     transport_kind: str) -> None:
    from simulators.shoe import Lbs1ShoeModel

    from tests.support.drivers import make_transport

    calls: list[Any] = []

    def listener(event: Any) -> None:
        calls.append(event)
        raise RuntimeError("listener bug")

    with make_transport(transport_kind, Lbs1ShoeModel("As 7d")) as sim:
        with SerialShoe(ShoeConfig(port=sim.url), listener=listener):
            poll_until(lambda: any(isinstance(e, ShoeConnected) for e in calls))
            sim.device.deal(2)
            poll_until(lambda: sum(isinstance(e, CardRead) for e in calls) == 2)
    assert [str(e.card) for e in calls if isinstance(e, CardRead)] == ["As", "7d"]


def test_a_driver_with_a_listener_keeps_no_backlog_of_its_events(transport_kind: str) -> None:
    """The daemon's drivers have listeners and never call get_event(): an event kept for it
    as well would stay for the life of the process (every card, every heartbeat)."""
    from simulators.shoe import Lbs1ShoeModel

    from tests.support.drivers import make_transport

    heard: list[Any] = []
    with make_transport(transport_kind, Lbs1ShoeModel("As 7d 2c")) as sim:
        with SerialShoe(ShoeConfig(port=sim.url), listener=heard.append) as shoe:
            poll_until(lambda: any(isinstance(e, ShoeConnected) for e in heard))
            sim.device.deal(3)
            poll_until(lambda: sum(isinstance(e, CardRead) for e in heard) == 3)
            assert shoe.get_event(timeout=0) is None


def test_a_card_dealt_while_no_host_listens_is_offered_until_one_acknowledges_it(
        shoe_rig: ShoeRig) -> None:
    """The shoe never gives a card up: past its three quick retransmissions (the old 0.8 s
    window) it halts and offers the card once a second until a host acknowledges it."""
    sim, shoe, waiter = shoe_rig()
    sim.device.deal()
    first = waiter.next(CardRead)
    poll_until(lambda: ("acked", first.seq) in sim.device.history)
    shoe.stop()                                          # the controller is gone
    sim.device.deal()
    poll_until(lambda: sim.device.history.count(("retransmit", first.seq + 1)) >= 4)
    assert sim.device.halted
    again = SerialShoe(ShoeConfig(port=sim.url, reconnect_initial_s=0.05))
    again.start()
    try:
        card = EventWaiter(again).next(CardRead)
        assert (str(card.card), card.seq, card.count) == ("7d", first.seq + 1, 2)
        poll_until(lambda: ("acked", card.seq) in sim.device.history)
        assert not sim.device.halted
    finally:
        again.stop()


def test_a_reused_seq_with_another_card_is_refused_then_taken_under_its_new_seq(
        shoe_rig: ShoeRig) -> None:
    sim, shoe, waiter = shoe_rig(heartbeat_every_s=100)
    sim.device.deal()
    first = waiter.next(CardRead)
    poll_until(lambda: ("acked", first.seq) in sim.device.history)
    with sim.lock:
        sim.device.reuse_seq()
        sim.device.deal()
    conflict = waiter.next(SequenceConflict)
    assert conflict.seq == first.seq and "refused" in conflict.detail
    card = waiter.next(CardRead)                  # sent again under the next SEQ
    assert (str(card.card), card.seq, card.count) == ("7d", first.seq + 1, 2)
    assert ("conflict", first.seq) in sim.device.history
    assert sum(isinstance(e, CardRead) for e in waiter.seen) == 2
    assert sum(isinstance(e, SequenceConflict) for e in waiter.seen) == 1

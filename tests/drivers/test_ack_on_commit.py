"""A card is acknowledged to the shoe only after the table has journaled it.

Until :meth:`ShoeDriver.card_committed`, the shoe has no acknowledgement, so after a power
cut it sends the card again instead of counting it delivered."""

from __future__ import annotations

from drivers.config import ShoeConfig
from drivers.shoe_events import CardRead, ShoeConnected
from drivers.shoe_serial import SerialShoe
from simulators.pty_transport import PtyTransport
from simulators.shoe import Lbs1ShoeModel

from tests.support.drivers import EventWaiter, poll_until


def test_card_acknowledged_only_once_committed() -> None:
    sim = PtyTransport(Lbs1ShoeModel("As 7d"), name="shoe").start()
    shoe = SerialShoe(ShoeConfig(port=sim.url, reconnect_initial_s=0.05),
                      ack_cards_on_commit=True)
    shoe.start()
    try:
        waiter = EventWaiter(shoe)
        waiter.next(ShoeConnected)
        sim.device.deal(1)
        card = waiter.next(CardRead)
        # Not acknowledged: the shoe resends it, and the driver neither acknowledges the
        # retransmission nor reports the card a second time.
        poll_until(lambda: ("retransmit", card.seq) in sim.device.history)
        assert ("acked", card.seq) not in sim.device.history
        shoe.card_committed(card.seq)
        poll_until(lambda: ("acked", card.seq) in sim.device.history)
        sim.device.deal(1)
        second = waiter.next(CardRead)
        assert str(second.card) == "7d"
        assert [str(e.card) for e in waiter.seen if isinstance(e, CardRead)] == ["As", "7d"]
        shoe.card_committed(second.seq)
        poll_until(lambda: ("acked", second.seq) in sim.device.history)
    finally:
        shoe.stop()
        sim.stop()

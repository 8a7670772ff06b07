"""A card dealt while the controller is down reaches its seat, however long the restart takes.

The real daemon runs as its own process over the simulated LBS1 shoe, spot controller and meter
(the power-loss rig of :mod:`bench.power_loss`). One spot of Cali LowBall: the deal order is
spot 1, dealer, spot 1, dealer. Two cards are dealt, the daemon is SIGKILLed, the third card is
dealt while it is down, and the daemon stays down past the 0.8 s after which the earlier shoe
protocol gave a card up. After the restart and ``continue`` the fourth card is dealt: spot 1
must hold the first and the third card, the dealer the second and the fourth, and every card
that left the shoe must be in the journal once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.power_loss import PowerLossRig, received_cards, shoe_has_card_in_flight, wait_for

HAND = "CALI-01-000001"
SHOE = ["As", "7d", "Kc", "2h", "3s", "4c", "5d"]


def ask_ok(rig: PowerLossRig, **request: Any) -> dict[str, Any]:
    reply = rig.ask(request)
    assert reply["ok"], (request, reply)
    return reply


def deal_and_wait(rig: PowerLossRig, cards_before: int) -> None:
    rig.shoe.device.deal(1)
    wait_for(lambda: len(received_cards(rig, HAND)) > cards_before,
             "the card to reach the journal", alive=rig.alive)


def test_a_card_dealt_while_the_daemon_is_down_reaches_its_seat(tmp_path: Path) -> None:
    rig = PowerLossRig(tmp_path, "cali_lowball")
    model = rig.shoe.model
    try:
        rig.start_daemon()
        ask_ok(rig, command="open")
        ask_ok(rig, command="place", spot=1, wager="ante", amount=1000)
        ask_ok(rig, command="place", spot=1, wager="xtra_bonus", amount=1000)
        rig.shoe.device.load(SHOE)
        ask_ok(rig, command="lock")
        deal_and_wait(rig, 0)
        deal_and_wait(rig, 1)
        wait_for(lambda: not shoe_has_card_in_flight(rig), "the second card's acknowledgement")

        rig.kill()
        with rig.shoe.lock:
            history_before = len(model.history)
        rig.shoe.device.deal(1)                              # Kc, while nobody listens

        def offered_past_the_old_window_or_given_up() -> bool:
            with rig.shoe.lock:
                history = model.history[history_before:]
            sent = [seq for kind, seq in history if kind == "sent"]
            if not sent:
                return False
            return history.count(("retransmit", sent[0])) > 3 or \
                not shoe_has_card_in_flight(rig)

        wait_for(offered_past_the_old_window_or_given_up,
                 "the shoe to offer the card past 0.8 s (or give it up)")
        rig.start_daemon()
        state = rig.status()
        assert state["state"] == "PAUSED" and state["fault"]["code"] == "controller_restart"
        ask_ok(rig, command="continue")
        rig.shoe.device.deal(1)                              # 2h
        wait_for(lambda: "2h" in received_cards(rig, HAND), "the fourth card in the journal",
                 alive=rig.alive)

        cards = rig.status()["hand"]["cards"]       # face down to the dealer's side
        assert cards == {"1": [None, None], "dealer": [None, None]}
        assert received_cards(rig, HAND) == ["As", "7d", "Kc", "2h"]
        dealt = [(data["card"], data["to"]) for data in rig.journal.data(HAND, "card_dealt")]
        assert dealt == [("As", 1), ("7d", "dealer"), ("Kc", 1), ("2h", "dealer")]
        marked = {data["card"]: data["during_pause"]
                  for data in rig.journal.data(HAND, "shoe_card")}
        assert marked["2h"] is False and marked["As"] is False
        lost = [str(card) for card in model.dealt if str(card) not in received_cards(rig, HAND)]
        assert lost == []
    finally:
        rig.close()


"""A shoe that contradicts itself or loses a card, through the whole daemon (simulated LBS1 shoe
on a pty, the daemon in a thread): the hand pauses as a misdeal, the fault names what happened,
and every card that reached the controller is journaled and published."""

from __future__ import annotations

from tests.support.rig import Rig, RigFactory
from tests.support.waits import wait_for


def lock_one_spot(rig: Rig) -> None:
    assert rig.ask({"command": "open"})["ok"]
    rig.shoe.device.load("As 7d Kc 2h 3s 4c 5d")
    for wager in ("ante", "xtra_bonus"):
        assert rig.ask({"command": "place", "spot": 1, "wager": wager, "amount": 1000})["ok"]
    assert rig.ask({"command": "lock"})["ok"]


def test_a_frame_reusing_the_last_seq_with_another_card_is_refused_and_pauses_the_hand(
        rig_factory: RigFactory) -> None:  # noqa: F811
    rig = rig_factory("cali_lowball")
    lock_one_spot(rig)
    rig.deal_one()
    model = rig.shoe.model
    wait_for(lambda: model._outstanding is None, "the first card's acknowledgement")
    with rig.shoe.lock:
        model.reuse_seq()
        model.deal(1)                                     # 7d under the SEQ of As
    wait_for(lambda: rig.events("fault"), "the conflict fault")
    fault = rig.events("fault")[0].data
    assert fault.code == "shoe_conflict" and not fault.recoverable
    assert fault.detail == "the shoe named two cards for one (the shoe reported CONFLICT)"   # no tag nor raw frame in a fault's text
    refused = [e.data for e in rig.events("device_fault") if e.data.code == "CONFLICT"]
    assert len(refused) == 1 and "refused" in refused[0].detail   # surveillance's record
    assert any(kind == "conflict" for kind, _ in model.history)   # N SEQ,CONFLICT reached it
    # The shoe sends 7d again under its next SEQ: journaled, marked, not dealt.
    wait_for(lambda: len(rig.events("shoe_card")) == 2, "7d under its new SEQ")
    second = rig.events("shoe_card")[1].data
    assert str(second.card) == "7d" and second.count == 2 and second.during_pause
    state = rig.status()
    assert state["state"] == "PAUSED" and state["fault"]["code"] == "shoe_conflict"
    assert state["hand"]["cards"] == {"1": [None]}     # one card, face down: As
    assert not rig.ask({"command": "continue"})["ok"]


def test_a_card_lost_inside_the_shoe_pauses_the_hand_naming_its_count(rig_factory: RigFactory) -> None:  # noqa: F811
    rig = rig_factory("cali_lowball")
    lock_one_spot(rig)
    rig.deal_one()
    with rig.shoe.lock:
        rig.shoe.model.lose_cards(1)                      # 7d leaves the shoe unreported
        rig.shoe.model.deal(1)
    wait_for(lambda: rig.events("fault"), "the missing-card fault")
    fault = rig.events("fault")[0].data
    assert fault.code == "card_missing" and not fault.recoverable
    assert fault.detail.startswith("card count 2 left the shoe and never arrived")
    assert [e.data.count for e in rig.events("shoe_card")] == [1, 3]
    state = rig.status()
    assert state["state"] == "PAUSED" and state["hand"]["cards"] == {"1": [None]}


def test_the_daemon_takes_a_conflict_about_cards_as_a_shoe_fault_and_the_count_with_a_card(
        ) -> None:
    from controller.core.cards import parse_card
    from controller.daemon.device_hub import Report, shoe_report
    from drivers.shoe_events import CardRead, SequenceConflict

    assert shoe_report(SequenceConflict(1, "why")) == Report("shoe_fault", ("CONFLICT", "why"))
    assert shoe_report(SequenceConflict(1, "why", about_cards=False)) == \
        Report("device", ("shoe", "frame_rejected", "why"))
    assert shoe_report(CardRead(parse_card("As"), 4, None, 17)) == \
        Report("card", (parse_card("As"), 4, "", 17))

"""Surveillance's ``watch`` says who dealt each hand (``hand_started``'s ``dealer``), and says
nothing of a dealer for a hand no dealer signed in for (an older record reads as ``""``)."""

from __future__ import annotations

from controller.cli.watch import describe

STARTED = {"hand_id": "TCL-01-000007", "number": 7, "game": "three_card_lowball",
           "paytable": "paytable-1"}


def test_watch_names_the_dealer_of_a_hand() -> None:
    assert describe("hand_started", {**STARTED, "dealer": "Dana 0412"}) == \
        "HAND TCL-01-000007 started (#7, three_card_lowball, paytable-1), dealer Dana 0412"


def test_a_hand_with_no_dealer_signed_in_names_none() -> None:
    assert describe("hand_started", {**STARTED, "dealer": ""}) == \
        "HAND TCL-01-000007 started (#7, three_card_lowball, paytable-1)"

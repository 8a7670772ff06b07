"""The insider suite: a dealer alone at the table (no supervisor's credential), with the
simulated shoe and ``lowball-table dealer``, tries what the game-protection review found
(docs/security.md, "Tests that guard it"); each attempt is refused or caught, and only a
supervisor's burn or void moves the hand on.

Findings 2, 6, 7 and 8 here; 1, 4 and 5 in tests/console (the screen in Chromium), 3 in
tests/stream/test_stream_security.py (CURVE allow-lists).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from controller.core.card_faces import printed_card
from tests.support.rig import CREDENTIAL, Rig, RigFactory
from tests.support.waits import wait_for

ROOT = Path(__file__).resolve().parents[2]
#: Cali LowBall, spots 1 and 2: (1, 2, dealer) x 2, then the flop.
CALI = ["As", "7d", "Kc", "2h", "9s", "3c", "4d", "Jh", "5s", "8h"]
#: Three Card Lowball, spots 1 and 2: (1, 2, dealer) x 3, then the draws.
TCL = ["8c", "2d", "Kd", "3s", "4h", "Qd", "5c", "6h", "7d", "Ad", "9h", "Th"]


def dealer(rig: Rig, *words: str, credential: str | None = None) -> subprocess.CompletedProcess[str]:
    """``lowball-table dealer WORDS`` against the rig's table, as the dealer types it."""
    argv = [sys.executable, "-m", "controller.cli.main", "dealer", "--connect",
            rig.stream.commands]
    if credential is not None:
        path = rig.tmp_path / "supervisor.credential"
        path.write_text(credential)
        argv += ["--credential-file", str(path)]
    return subprocess.run([*argv, *words], cwd=ROOT, capture_output=True, text=True,
                          timeout=30)


def locked(rig: Rig, deck: list[str], second: str) -> None:
    rig.shoe.device.load(deck)
    assert dealer(rig, "open").returncode == 0
    for spot in ("1", "2"):
        for wager in ("ante", second):
            assert dealer(rig, "place", spot, wager, "10").returncode == 0
    assert dealer(rig, "lock").returncode == 0


@pytest.mark.slow
def test_dealer_status_names_no_hidden_card(rig_factory: RigFactory) -> None:
    """Finding 2: ``dealer status`` returned every hidden card, with no credential (TCL
    during the draws: ``dealer: Ad 2h 4s``)."""
    rig = rig_factory("three_card_lowball")
    locked(rig, TCL, "bonus")
    for _ in range(9):
        rig.deal_one()
    shown = dealer(rig, "status").stdout
    assert "spot 1: 8\u2663 3\u2660 5\u2663" in shown  # the spot to draw, its cards as printed
    assert "spot 2: 3 face down" in shown and "dealer: 3 face down" in shown
    for hidden in ("2d", "4h", "6h", "Kd", "Qd", "7d"):
        assert hidden not in shown and printed_card(hidden) not in shown
    assert dealer(rig, "decide", "1", "stand").returncode == 0
    shown = dealer(rig, "status").stdout
    assert "spot 1: 3 face down" in shown and "spot 2: 2\u2666 4\u2665 6\u2665" in shown


@pytest.mark.slow
def test_a_stacked_deck_loaded_behind_the_door_is_never_dealt(rig_factory: RigFactory) -> None:
    """Finding 6: door open, ``load Ah 2h 7s 6s``, door close, ``dealer continue``, and spot 1
    drew ``Ah 2h``. Now the count going back pauses the hand for a supervisor's void, with an
    alarm naming the door and the counts; the dealer's continue and decisions are refused."""
    rig = rig_factory("three_card_lowball")
    locked(rig, TCL, "bonus")
    for _ in range(9):
        rig.deal_one()
    assert dealer(rig, "decide", "1", "discard:8c").returncode == 0
    rig.shoe.device.open_door()
    wait_for(lambda: rig.status()["state"] == "PAUSED", "the door to pause the hand")
    rig.shoe.device.load(["Ah", "2h", "7s", "6s"])
    rig.shoe.device.close_door()
    assert dealer(rig, "continue").returncode == 0
    rig.deal_one()
    state = rig.status()
    assert state["state"] == "PAUSED" and state["fault"]["code"] == "count_went_back"
    assert len(state["hand"]["cards"]["1"]) == 3      # nothing new reached spot 1
    alarms = [e.data for e in rig.events("alarm")]
    assert [a.code for a in alarms] == ["shoe_door_in_hand", "shoe_count_back"]
    assert "went back from 9 to 1" in alarms[1].detail and "DOOR" in alarms[1].detail
    assert dealer(rig, "continue").returncode == 1
    assert "void" in dealer(rig, "burn", "it is fine", credential=CREDENTIAL).stdout
    assert dealer(rig, "void", "shoe reloaded mid-hand", credential=CREDENTIAL).returncode == 0
    assert rig.events("hand_voided")


@pytest.mark.slow
def test_a_misread_is_a_supervisors_to_burn_not_the_dealers_to_skip(
        rig_factory: RigFactory) -> None:
    """Finding 7: ``misread`` during spot 3's draw, ``dealer continue``, and the next card
    went to spot 3: the misread card belonged to no one."""
    rig = rig_factory("three_card_lowball")
    locked(rig, TCL, "bonus")
    for _ in range(9):
        rig.deal_one()
    assert dealer(rig, "decide", "1", "discard:8c").returncode == 0
    rig.shoe.device.misread()                        # Ad leaves the shoe, unread
    wait_for(lambda: rig.status()["state"] == "PAUSED", "the misread to pause the hand")
    refused = dealer(rig, "continue")
    assert refused.returncode == 1 and "only a supervisor can burn it" in refused.stdout
    assert dealer(rig, "burn", "misread on the draw", credential=CREDENTIAL).returncode == 0
    (burned,) = [e.data for e in rig.events("cards_burned")]
    assert (burned.cards, burned.counts) == (("??",), (10,))
    rig.deal_one()                                   # 9h: spot 1's replacement
    assert rig.status()["hand"]["next"]["seats"] == [2]


@pytest.mark.slow
def test_an_extra_card_no_longer_forces_a_void(rig_factory: RigFactory) -> None:
    """Finding 8: one extra card pushed out during a decision gave ``unexpected_card``;
    ``continue`` and ``decide`` were refused and only a void remained. The supervisor may
    now burn it and the hand goes on from the decision."""
    rig = rig_factory("cali_lowball")
    locked(rig, CALI, "xtra_bonus")
    for _ in range(6):
        rig.deal_one()
    rig.deal_one()                                   # 4d, pushed out during the decisions
    state = rig.status()
    assert state["fault"]["code"] == "unexpected_card" and state["fault"]["burnable"]
    assert dealer(rig, "decide", "1", "raise").returncode == 1
    assert dealer(rig, "burn", "card pushed out early", credential=CREDENTIAL).returncode == 0
    assert dealer(rig, "decide", "1", "raise").returncode == 0
    assert dealer(rig, "decide", "2", "raise").returncode == 0
    for _ in range(3):
        rig.deal_one()
    wait_for(lambda: rig.events("hand_settled"), "the settlement")
    community = [str(e.data.card) for e in rig.events("card_dealt") if e.data.to == "community"]
    assert community == ["Jh", "5s", "8h"]           # the burned 4d is out of play

"""A supervisor's PIN at the table: it signs as her own credential does, for the supervisor the
command names, and five wrong ones lock it (not her credential). Before PINs, a supervisor
signing in on a touch screen had to type a 43-character credential; a PIN with no bound
would let the dealer's own command line try every PIN."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.pins import PIN, SUPERVISORS, PinRig

@pytest.fixture
def rig(tmp_path: Path) -> Iterator[PinRig]:
    made = PinRig(tmp_path, "three_card_lowball", {"Sam Reyes": PIN}, supervisors=SUPERVISORS)
    yield made
    made.close()


def test_a_supervisors_pin_signs_as_her_and_is_journaled_as_a_pin(rig: PinRig) -> None:
    # whatever case and spacing the name is typed in, the journal names her as configured
    reply = rig.ask({"command": "sign_in", "by": "sam  reyes", "credential": PIN})
    assert reply["ok"], reply
    accepted = [e.data for e in rig.events("command_accepted") if e.data.command == "sign_in"]
    assert [(a.by, a.role, a.credential) for a in accepted] == [
        ("Sam Reyes", "supervisor", "pin")]


def test_a_pin_signs_only_for_the_supervisor_it_belongs_to(rig: PinRig) -> None:
    assert not rig.ask({"command": "sign_in", "by": "dealer", "credential": PIN})["ok"]
    assert not rig.ask({"command": "sign_in", "by": "Sam Reyes", "credential": "482914"})["ok"]


def test_five_wrong_pins_lock_her_pin_not_her_credential(rig: PinRig) -> None:
    """An attack: the dealer's command line trying every PIN of a supervisor."""
    for guess in ("000001", "000002", "000003", "000004", "000005"):
        reply = rig.ask({"command": "sign_in", "by": "Sam Reyes", "credential": guess})
        assert reply["error"] == "the supervisor credential is not valid"
    locked = rig.ask({"command": "sign_in", "by": "Sam Reyes", "credential": PIN})
    assert not locked["ok"] and "PIN is locked for" in locked["error"]
    assert rig.ask({"command": "sign_in", "by": "Sam Reyes",
                    "credential": SUPERVISORS["Sam Reyes"]})["ok"]
    alarms = [e.data.code for e in rig.events("alarm")]
    assert "credential_failures" in alarms

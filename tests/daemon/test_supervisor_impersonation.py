"""Who gave a supervisor command is journaled for the audit. With a per-supervisor credential
the journal names its holder, whatever ``by`` says; with the table's shared credential ``by`` is
only what the client wrote, so it may not name a configured supervisor, and the record says
which kind of credential signed it (and which client sent it)."""

from __future__ import annotations

import json

import pytest

from tests.support.rig import CREDENTIAL
from tests.support.rig import RigFactory
from tests.support.waits import wait_for


def test_the_shared_credential_cannot_sign_as_a_named_supervisor(rig_factory: RigFactory) -> None:  # noqa: F811
    rig = rig_factory("three-card-lowball", supervisors={"alice": "alice-own-credential"})
    own = rig.ask({"command": "sign_in", "credential": "alice-own-credential"})
    forged = [rig.ask({"command": "sign_in", "by": by, "credential": CREDENTIAL})
              for by in ("alice", " ALICE ")]
    shared = rig.ask({"command": "sign_in", "by": "pit boss", "credential": CREDENTIAL})
    assert own["ok"] and shared["ok"]
    assert [reply["ok"] for reply in forged] == [False, False]
    assert "shared credential cannot sign as her" in forged[0]["error"]
    wait_for(lambda: len(rig.events("command_accepted")) >= 2, "both sign-ins on the stream")
    first, second = [(e.data.by, e.data.role, e.data.credential)
                     for e in rig.events("command_accepted")]
    assert first == ("alice", "supervisor", "own")
    assert second == ("pit boss", "supervisor", "shared")

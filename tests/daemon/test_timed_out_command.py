"""A command whose client timed out is withdrawn, and a withdrawn command is never carried out
later (docs/command-channel.md, section 6): the giver may then give it again without doubling
it.

The daemon here is not away but slow for a moment (a long fsync, a checkpoint, a paused VM):
its ZeroMQ I/O thread has already taken the request off the wire when the client gives up.
The slow moment is made with the daemon's own observer hook, which runs on the loop's thread
after a journaled input, exactly where a slow disk would hold it."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from controller.stream import wire
from controller.stream.command_client import CommandClient, CommandTimeout
from controller.stream.command_replies import Status, Withdrawn

from tests.support.rig import CREDENTIAL
from tests.support.rig import Rig, RigFactory
from tests.support.waits import DEADLINE_S

def _adjustments(rig: Rig, kind: str) -> list[Any]:
    """The adjust_meter records of ``kind`` in the journal."""
    records: list[Any] = [wire.decode_event(record.message) for record in rig.daemon.journal.records()]
    return [r for r in records if r.type == kind and r.data.command == "adjust_meter"]


def test_a_timed_out_adjustment_is_never_carried_out_later(rig_factory: RigFactory) -> None:  # noqa: F811
    rig = rig_factory("cali-lowball")
    slow, stalled = threading.Event(), threading.Event()

    def slow_disk(records: list[Any], events: list[Any]) -> None:
        if records[0].type == "command_accepted" and b'"sign_in"' in records[0].message:
            stalled.set()
            slow.wait(DEADLINE_S)
    rig.daemon.observers.append(slow_disk)
    console = CommandClient(rig.stream.commands, context=rig.context, credential=CREDENTIAL)
    supervisor = CommandClient(rig.stream.commands, context=rig.context, by="pit boss",
                               credential=CREDENTIAL)
    try:
        console.send({"command": "sign_in"}, supervisor=True)
        assert stalled.wait(DEADLINE_S)
        with pytest.raises(CommandTimeout) as raised:
            supervisor.ask({"command": "adjust_meter", "amount": 50_000, "reason": "fill"},
                           supervisor=True, timeout_s=0.3)
        # The daemon did not answer the withdrawal either (it is still held): unknown yet.
        timeout = raised.value
        assert timeout.carried_out is None and not timeout.withdrawn
        assert timeout.request_id is not None
        looked = supervisor.send({"command": "status"})
        slow.set()
        status = supervisor.reply_to(looked, DEADLINE_S)
        assert isinstance(status, Status)
        # The documented recovery: withdraw it again until answered; then it is settled.
        settled = supervisor.withdraw([timeout.request_id], DEADLINE_S)
        assert settled == Withdrawn({}, [timeout.request_id])
        # The adjustment arrived before the status (one socket, in order), so it has been
        # read and refused by now: it was never carried out, and never will be.
        stale = _adjustments(rig, "command_accepted")
        assert not stale, (
            f"the timed-out adjust_meter was journaled at seq {stale[0].seq}; the status the "
            f"client asked after the timeout showed seq {status.seq}")
        refused = _adjustments(rig, "command_refused")
        assert [e.data.reason.split(";")[0] for e in refused] == [
            "request_id: withdrawn by its client before the table read it"]
        assert refused[0].seq <= status.seq
    finally:
        console.close()
        supervisor.close()

"""A command whose client timed out must never reach the table later (docs/command-channel.md,
section 6): the giver was told "no answer", asks status, and may give it again.

The daemon here is not away but slow for a moment (a long fsync, a checkpoint, a paused VM):
its ZeroMQ I/O thread has already taken the request off the wire when the client gives up.
The slow moment is made with the daemon's own observer hook, which runs on the loop's thread
after a journaled input, exactly where a slow disk would hold it."""

from __future__ import annotations

import threading
import time

import pytest

from controller.stream.command_client import CommandClient, CommandTimeout
from controller.stream.command_replies import Status
from tests.test_daemon import CREDENTIAL, DEADLINE_S, rig_factory  # noqa: F401 (fixture)

#: How long a fixed daemon is watched for the stale command before the test concludes it never
#: came (when the hole is open it comes within one loop turn, milliseconds).
QUIET_S = 3.0


def _adjustments(rig) -> list:
    return [e for e in rig.events("command_accepted") if e.data.command == "adjust_meter"]


@pytest.mark.xfail(strict=True, reason="a command that timed out at the client (socket reset) "
                                       "is carried out once a slow daemon catches up, at times "
                                       "after the status the client asked said it was not")
def test_a_timed_out_adjustment_is_never_carried_out_later(rig_factory):  # noqa: F811
    rig = rig_factory("cali-lowball")
    slow, stalled = threading.Event(), threading.Event()

    def slow_disk(records, events):
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
        with pytest.raises(CommandTimeout):
            supervisor.ask({"command": "adjust_meter", "amount": 50_000, "reason": "fill"},
                           supervisor=True, timeout_s=0.3)
        # The documented recovery: ask status and look.
        looked = supervisor.send({"command": "status"})
        slow.set()
        status = supervisor.reply_to(looked, DEADLINE_S)
        assert isinstance(status, Status)
        deadline = time.monotonic() + QUIET_S
        while time.monotonic() < deadline and not _adjustments(rig):
            time.sleep(0.01)  # polling interval: the deadline decides
        stale = _adjustments(rig)
        # The client gave up and was told the command may not have happened; the daemon then
        # carries it out anyway. In about half the runs it does so *after* answering the
        # status the client looked at (which then said the meter had not moved): a second
        # adjustment by the supervisor doubles it.
        assert not stale, (
            f"the timed-out adjust_meter was journaled at seq {stale[0].seq}; the status the "
            f"client asked after the timeout showed seq {status.seq}")
    finally:
        console.close()
        supervisor.close()

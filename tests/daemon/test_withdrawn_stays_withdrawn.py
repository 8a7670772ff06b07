"""A withdrawn command stays withdrawn, whatever other clients withdraw.

Red team 7: what the sixth round's fixes left open.

Each test states the behaviour the project promises; each was an open hole (xfail strict)
until its fix landed."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import zmq

from controller.stream import wire
from controller.stream.table_commands import MAX_WITHDRAWN

from tests.support.rig import Rig, RigFactory
from tests.support.waits import DEADLINE_S


def _adjustments(rig: Rig) -> list[Any]:
    """The adjust_meter commands the table carried out, from the journal."""
    events: list[Any] = [wire.decode_event(record.message)
                         for record in rig.daemon.journal.records()]
    return [e for e in events if e.type == "command_accepted"
            and e.data.command == "adjust_meter"]


def _ask(socket: zmq.Socket[bytes], request: dict[str, Any]) -> dict[str, Any]:
    socket.send(json.dumps(request).encode())
    assert socket.poll(int(DEADLINE_S * 1000)), f"no answer to {request['command']}"
    reply: dict[str, Any] = json.loads(socket.recv())
    return reply


def test_a_withdrawn_adjustment_stays_withdrawn_whatever_other_clients_withdraw(
        rig_factory: RigFactory) -> None:  # noqa: F811
    rig = rig_factory("cali-lowball")
    victim = "adjust-meter-0001"
    # The supervisor's console: its adjust_meter timed out, so it withdrew it, and was told
    # it will never be carried out (the command itself is still on its way: a slow network,
    # the daemon's I/O thread, a paused VM).
    told = rig.ask({"command": "withdraw", "requests": [victim]})
    assert told == {"ok": True, "carried_out": {}, "withdrawn": [victim]}
    # Anyone who can reach the command socket (no credential: withdraw needs none).
    guest = rig.context.socket(zmq.REQ)
    guest.setsockopt(zmq.LINGER, 0)
    guest.connect(rig.stream.commands)
    try:
        for _ in range(10_000 // MAX_WITHDRAWN + 1):
            made_up = [secrets.token_hex(4) for _ in range(MAX_WITHDRAWN)]
            # (answered: withdrawn, or refused once the guest's share is full; here the guest
            # is this process, as the supervisor's console is: the daemon cannot tell them
            # apart, and refuses the withdrawal rather than forget the console's)
            assert "ok" in _ask(guest, {"command": "withdraw", "requests": made_up})
    finally:
        guest.close(0)
    late = rig.ask({"command": "adjust_meter", "amount": 50_000, "reason": "fill",
                    "request_id": victim}, supervisor=True)
    # The supervisor, told it was withdrawn, gives it again: the meter must move once.
    again = rig.ask({"command": "adjust_meter", "amount": 50_000, "reason": "fill",
                     "request_id": "adjust-meter-0002"}, supervisor=True)
    assert again["ok"]
    carried = _adjustments(rig)
    assert not late["ok"] and "withdrawn by its client" in late["error"], (
        f"the withdrawn adjustment was carried out at seq {late.get('seq')}: the meter moved "
        f"{len(carried)} times for one fill")


def test_a_flood_of_withdrawals_is_served_within_the_turn_budget(tmp_path: Path) -> None:
    from controller.daemon.command_channel import MAX_COMMANDS_PER_TURN, MAX_WAITING
    from tests.support.daemon import run_config
    from tests.support.daemon import Daemon

    context = zmq.Context()
    table = Daemon(tmp_path, run_config(tmp_path), context)
    table.daemon.start()
    channel = table.daemon.channel
    # The daemon's socket, on an in-process endpoint: what a client sends is on the socket
    # when its send returns (no I/O thread between), so the turn meets the whole flood.
    router, flood = context.socket(zmq.ROUTER), context.socket(zmq.DEALER)
    for socket in (router, flood):
        socket.setsockopt(zmq.LINGER, 0)
        socket.setsockopt(zmq.SNDHWM, 0)
        socket.setsockopt(zmq.RCVHWM, 0)
    router.bind("inproc://commands")
    flood.connect("inproc://commands")
    real, channel.socket = channel.socket, router
    sent = 4 * (MAX_WAITING + MAX_COMMANDS_PER_TURN)
    try:
        for _ in range(sent):
            made_up = [secrets.token_hex(4) for _ in range(MAX_WITHDRAWN)]
            flood.send_multipart([b"", json.dumps(
                {"command": "withdraw", "requests": made_up}).encode()])
        channel.serve_turn()
        answered = 0
        while flood.poll(0):
            flood.recv_multipart()
            answered += 1
        assert answered <= MAX_WAITING + MAX_COMMANDS_PER_TURN, (
            f"one turn answered {answered} of {sent} withdrawals before going back to the "
            f"devices")
    finally:
        channel.socket = real
        router.close(0)
        flood.close(0)
        table.daemon.close()
        context.term()

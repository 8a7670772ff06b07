"""Red team 7: what the sixth round's fixes left open.

Each test states the behaviour the project promises; each was an open hole (xfail strict)
until its fix landed."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import pytest
import zmq

from controller.stream import wire
from controller.stream.table_commands import MAX_WITHDRAWN
from tests.test_daemon import CREDENTIAL, DEADLINE_S, rig_factory  # noqa: F401 (fixture)
from tests.test_daemon import Rig, RigFactory


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


# --- the console's sign-in spacing ------------------------------------------------------------

def _guesser_against(sessions: Any, now: list[float], minutes: float,
                     supervisor_every_s: float) -> int:
    """A guesser with twenty addresses takes every sign-in slot the spacing opens (the app's
    order: a sign-in is refused while :meth:`locked_for` says wait, else checked; a wrong one
    counts as failed). A supervisor (the right credential) tries every ``supervisor_every_s``
    from her own machine. The number of her tries that were checked."""
    from controller.console.sessions import SPACING_S

    checked, next_try, step = 0, 60.0, 0.05   # she comes a minute into the attack
    guesses, last_from = 0, [-100.0] * 20
    while now[0] < minutes * 60:
        # The guesser fires as soon as the console would check a sign-in (it polls cheaply:
        # a refusal while spaced is counted against nothing), from whichever of its addresses
        # has not failed in the last 15 s (at most 4 a minute each: none is ever locked out).
        for machine, last in enumerate(last_from):
            address = f"10.6.6.{machine}"
            if now[0] - last > 15.0 and sessions.locked_for(address) == 0:
                sessions.failed(address)
                guesses, last_from[machine] = guesses + 1, now[0]
                break
        if now[0] >= next_try:
            if sessions.locked_for("10.0.0.7") == 0:
                checked += 1
            next_try += supervisor_every_s
        now[0] += step
    # every turn the spacing opened was taken, by the guesser or by her
    assert guesses + checked >= minutes * 60 / (SPACING_S + step) - 2, \
        "the guesser did not keep up"
    return checked


def test_a_guesser_cannot_keep_the_real_supervisor_from_signing_in() -> None:
    from controller.console.sessions import Sessions

    now = [0.0]
    sessions = Sessions(15, {}, clock=lambda: now[0])
    # Ten minutes of a guesser; the supervisor retries every 2 s all along.
    checked = _guesser_against(sessions, now, minutes=10, supervisor_every_s=2.0)
    assert checked > 0, "the supervisor was refused at every try for ten minutes"


# --- the held mark's write side -----------------------------------------------------------------

def test_a_swapped_journal_stays_held_after_a_restart_whatever_sits_at_the_marks_partial_name(
        tmp_path: Path) -> None:
    from controller.daemon import held_mark
    from tests.redteam.test_journal_file_swapped import swap_in_a_copy
    from tests.reliability.test_startup_trust import run_config
    from tests.test_reload import Daemon

    context = zmq.Context()
    state = tmp_path / "state"
    table = Daemon(tmp_path, run_config(tmp_path), context)
    table.daemon.start()
    try:
        assert table.ask(command="open")["ok"]
        # Whoever swaps the journal first puts a folder where the mark is written.
        Path(f"{held_mark.mark_path(state)}.partial").mkdir()
        swap_in_a_copy(state)
        assert table.ask(command="place", spot=1, wager="ante", amount=500)["ok"]
        table.daemon.check_chain()
        assert table.daemon.journal_broken is not None  # held while it runs
    finally:
        table.daemon.close()
    table = Daemon(tmp_path, run_config(tmp_path), context)
    table.daemon.start()
    try:
        assert table.daemon.journal_broken is not None, \
            "restarted on the swapped-in journal as verified: the break was not written down"
    finally:
        table.daemon.close()
        context.term()


def test_writing_the_mark_never_writes_through_a_link_at_its_partial_name(
        tmp_path: Path) -> None:
    from controller.daemon import held_mark
    from controller.stream.journal import JournalBroken

    evidence = tmp_path / "quarantine" / "journal-20261125T110000Z.sqlite3"
    evidence.parent.mkdir()
    evidence.write_bytes(b"SQLite format 3\x00 the journal a supervisor archived")
    Path(f"{held_mark.mark_path(tmp_path)}.partial").symlink_to(evidence)
    try:
        held_mark.write(tmp_path, JournalBroken(3, "found while the table ran"),
                        daemon_seq=2, daemon_hash="ab" * 32)
    except OSError:
        pass  # refusing to write through the link is fine; the evidence must stay
    assert evidence.read_bytes().startswith(b"SQLite format 3"), \
        "the archived journal was overwritten by the mark"


def test_writing_the_mark_never_opens_a_fifo_at_its_partial_name(tmp_path: Path) -> None:
    import os
    import threading

    from controller.daemon import held_mark
    from controller.stream.journal import JournalBroken

    os.mkfifo(f"{held_mark.mark_path(tmp_path)}.partial")
    failed: list[BaseException] = []

    def write() -> None:
        try:
            held_mark.write(tmp_path, JournalBroken(3, "found while the table ran"),
                            daemon_seq=2, daemon_hash="ab" * 32)
        except BaseException as error:  # noqa: BLE001 - reported by the test's thread
            failed.append(error)

    # A regression would block in open() for ever: in a thread, so the test fails instead.
    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    writer.join(DEADLINE_S)
    if writer.is_alive():
        # Unblock the writer (a reader at the other end) before failing.
        os.close(os.open(f"{held_mark.mark_path(tmp_path)}.partial", os.O_RDONLY | os.O_NONBLOCK))
        pytest.fail("writing the mark hung on a FIFO at its partial name")
    assert not failed, failed
    broken = held_mark.read(tmp_path)
    assert broken is not None and broken.seq == 3
    assert sorted(path.name for path in tmp_path.iterdir()) == \
        [held_mark.MARK_FILE, f"{held_mark.MARK_FILE}.partial"]   # no file of its own left


# --- the command channel's turn budget --------------------------------------------------------

def test_a_flood_of_withdrawals_is_served_within_the_turn_budget(tmp_path: Path) -> None:
    from controller.daemon.command_channel import MAX_COMMANDS_PER_TURN, MAX_WAITING
    from tests.reliability.test_startup_trust import run_config
    from tests.test_reload import Daemon

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


# --- a held table's replay ----------------------------------------------------------------------

def _served(table: Any, dealer: zmq.Socket[bytes], request: dict[str, Any]) -> list[Any]:
    """What the daemon's replay socket answers ``request`` with, through ``replay_end``."""
    import time

    publisher = table.daemon.publisher
    dealer.send(json.dumps(request).encode())
    served: list[Any] = []
    deadline = time.monotonic() + DEADLINE_S
    while not served or not isinstance(served[-1], (wire.ReplayEnd, wire.SnapshotReply)):
        assert time.monotonic() < deadline, f"no answer to {request}"
        publisher.handle_replay()
        while dealer.poll(10):
            served.append(wire.decode_reply(dealer.recv()))
    return served


def _heartbeat(table: Any, sub: zmq.Socket[bytes]) -> wire.Heartbeat:
    """The heartbeat the daemon sends at its next tick."""
    import time

    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        table.daemon._next_heartbeat = 0.0
        table.daemon._tick()
        while sub.poll(20):
            message = wire.decode(sub.recv_multipart()[-1])
            if isinstance(message, wire.Heartbeat):
                return message
    raise AssertionError("no heartbeat")


def test_a_held_table_never_serves_the_records_past_its_break(tmp_path: Path) -> None:
    from tests.redteam.test_chain_append import append_forged
    from tests.reliability.test_startup_trust import run_config
    from tests.test_reload import Daemon

    context = zmq.Context()
    dealer, sub = context.socket(zmq.DEALER), context.socket(zmq.SUB)
    for socket in (dealer, sub):
        socket.setsockopt(zmq.LINGER, 0)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    dealer.connect(f"ipc://{tmp_path}/r")
    sub.connect(f"ipc://{tmp_path}/e")
    try:
        table = Daemon(tmp_path, run_config(tmp_path), context)
        table.daemon.start()
        try:
            assert table.ask(command="open")["ok"]
            written, head = table.daemon.journal.last_seq, table.daemon.journal.last_hash
            forged = append_forged(tmp_path / "state", table.daemon.table_id)
            # Before the running check reads it, and after: the daemon's own records only.
            for check in (False, True):
                if check:
                    table.daemon.check_chain()
                    assert table.daemon.journal_broken is not None
                    assert table.daemon.journal_broken.seq == forged
                served = _served(table, dealer, {"request": "replay", "after": written - 1})
                assert [m.seq for m in served[:-1]] == [written], f"served {served}"
                assert served[-1] == wire.ReplayEnd(type="replay_end", last=written)
                beat = _heartbeat(table, sub)
                assert (beat.seq, beat.hash) == (written, head), \
                    f"the heartbeat names seq {beat.seq} (the daemon wrote up to {written})"
        finally:
            table.daemon.close()
        table = Daemon(tmp_path, run_config(tmp_path), context)
        table.daemon.start()
        try:
            broken = table.daemon.journal_broken
            assert broken is not None and broken.seq == forged      # held, as the mark says
            served = _served(table, dealer, {"request": "replay", "after": written})
            past = [m.seq for m in served if not isinstance(m, wire.ReplayEnd)
                    and m.seq >= broken.seq]
            assert not past, (f"the held table served seq {past} (the journal broke at seq "
                              f"{broken.seq}; the daemon wrote up to {written}) as its history")
            beat = _heartbeat(table, sub)
            assert (beat.seq, beat.hash, beat.journal_broken_at) == (written, head, forged)
            snapshot = _served(table, dealer, {"request": "snapshot"})[-1]
            assert snapshot.seq == written
            # Kept on disk as evidence all the same.
            assert table.daemon.journal.stored_end() == forged
        finally:
            table.daemon.close()
    finally:
        dealer.close(0)
        sub.close(0)
        context.term()

"""The red team's attacks on the command channel and the replay sockets (issue 14).

Each test is an attack that worked on the table before its fix:

* a field a client sends (``supervisor_only``) waived the supervisor's role, and the journaled
  void then stopped the table from rebuilding;
* an integer past int64 in a replay request ended the daemon;
* a flood of junk commands starved the shoe, the heartbeat and the watchdog, and wrote a
  journal record for each;
* a refusal repeated an unknown key's value (a credential under ``"Credential"``) into the
  journal and onto both stream families;
* a command over 4,096 bytes got no answer at all; ``place`` took 10**30 cents.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import zmq
from hypothesis import HealthCheck, given, settings, strategies as st

from bench import fuzz
from controller.core.table_events import CommandAccepted
from controller.daemon.loop import TableDaemon
from controller.settings.table_config import build_table
from controller.stream import wire
from controller.stream.publisher import MAX_REQUEST_BYTES
from controller.stream.table_commands import COMMAND_NAMES, COMMANDS

from tests.support.commands import a_hand_locked
from tests.support.rig import Rig, RigFactory
from tests.support.waits import DEADLINE_S, wait_for


SECRET = "s3cr3t-never-journaled"


#: Keys named like the table's internals, and spellings of the credential's key.
INTERNAL_KEYS = ("supervisor_only", "role", "Role", "_role", "authorized", "supervisor",
                 "Credential", "CREDENTIAL", "credential ", "credentials", "by_role",
                 "__class__", "model_config", "__dict__", "arguments", "unknown_keys")


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2**80, 2**80) | st.text(max_size=20)
    | st.floats(allow_nan=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=3),
    max_leaves=6)


def _journal_bytes(daemon: TableDaemon) -> bytes:
    return b"\n".join(record.message for record in daemon.journal.records())


def _hand_in_play() -> Iterator[TableDaemon]:
    with a_hand_locked() as daemon:
        yield daemon


#: Refused commands only: the hand stays locked for the module.
hand_in_play = pytest.fixture(scope="module")(_hand_in_play)


#: Commands that may be accepted (a supervisor's void): a table of its own.
any_table = pytest.fixture(scope="module")(_hand_in_play)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from((*COMMAND_NAMES, "status")),
       extra=st.dictionaries(st.sampled_from(INTERNAL_KEYS) | st.text(min_size=1, max_size=12),
                             JSON_VALUES, min_size=1, max_size=4),
       fields=st.fixed_dictionaries({}, optional={
           "spot": st.integers(1, 7), "wager": st.sampled_from(("ante", "bonus")),
           "amount": st.integers(1, 10**6),
           # (a reason the text rules accept: a refused text is answered before the role)
           "reason": st.text(st.characters(categories=("L", "N", "P")), min_size=1, max_size=20),
           "decision": st.sampled_from(("stand", "discard:As"))}))
def test_no_field_a_client_sends_grants_a_role(hand_in_play: TableDaemon, name: str,
                                               extra: dict[str, Any], fields: dict[str, Any]
                                               ) -> None:
    """Every command, with any extra keys named like internals and any JSON values, and no
    credential: refused, journaled with the dealer's role, the table unchanged, and not one
    of the extra values in the journal."""
    daemon = hand_in_play
    extra = {key: value for key, value in extra.items() if key not in ("by", "credential")}
    if not extra:
        return
    marked = {key: SECRET for key in extra}
    before, seq = daemon.table.snapshot(), daemon.journal.last_seq
    for values in (extra, marked):
        request = {"command": name, **fields, **values}
        reply = daemon.command(json.dumps(request).encode())
        assert reply["ok"] is False, (request, reply)
        assert daemon.table.snapshot() == before
    records: list[Any] = [wire.decode_event(record.message)     # Any: each kind's own data
                          for record in daemon.journal.records(after_seq=seq)]
    assert all(record.data.role == "dealer" for record in records
               if record.type == "command_refused"), records
    assert not any(record.type == "command_accepted" for record in records)
    assert SECRET.encode() not in _journal_bytes(daemon)


def test_the_supervisor_only_field_is_refused_by_name(hand_in_play: TableDaemon) -> None:
    reply = hand_in_play.command(json.dumps(
        {"command": "void", "reason": "x", "supervisor_only": False}).encode())
    assert reply["ok"] is False and "supervisor_only: unknown key" in reply["error"]
    assert hand_in_play.table.hand is not None
    supervisors = ("void", "burn", "verify_jackpot", "reload", "adjust_meter", "sign_in",
                   "acknowledge_alarm")
    assert all(cls.supervisor_only is (name in supervisors) for name, cls in COMMANDS.items())


def test_a_journal_that_accepted_a_command_always_rebuilds(hand_in_play: TableDaemon) -> None:
    """A void journaled with the dealer's role (as the escalation left it in journals written
    before the fix) rebuilds the voided table instead of stopping the daemon's start."""
    daemon = hand_in_play
    events = [wire.to_event(wire.decode_event(record.message))
              for record in daemon.journal.records()]
    events.append(CommandAccepted("void", json.dumps({"reason": "x"}), "mallory", "dealer"))
    table = build_table(daemon.loaded)
    table.replay(events)
    assert table.hand is None and table.state == "OPEN"


@pytest.mark.parametrize("payload", [
    {"command": "reload", "Credential": SECRET},
    {"command": "void", "reason": "x", "credential ": SECRET},
    {"command": "place", "spot": 1, "wager": "ante", "amount": 500, "note": [SECRET]},
    {"command": SECRET},
    {"command": "lock", "by": "dealer", "x": {"credential": SECRET}},
    SECRET,
    [SECRET],
])
def test_a_refusal_never_repeats_a_secret(payload: Any) -> None:
    with fuzz.command_daemon() as daemon:
        reply = daemon.command(json.dumps(payload).encode())
        assert reply["ok"] is False and SECRET not in reply["error"]
        assert SECRET.encode() not in _journal_bytes(daemon)


@pytest.mark.parametrize("payload", [
    b'{"command": "void", "credential": "' + SECRET.encode() + b'"',         # cut short
    b'{"command": "void", "credential": "' + SECRET.encode() + b'", }',      # trailing comma
    b'\xff{"credential": "' + SECRET.encode() + b'"}',                      # not UTF-8
    b'{"command": "void", "credential": "' + SECRET.encode() + b'"}' + b" " * 5000,  # long
])
def test_a_broken_request_is_never_echoed(payload: bytes) -> None:
    with fuzz.command_daemon() as daemon:
        reply = daemon.command(payload)
        assert reply["ok"] is False and SECRET not in reply["error"]
        assert SECRET.encode() not in _journal_bytes(daemon)


def test_five_failed_credentials_in_a_minute_raise_one_alarm() -> None:
    with fuzz.command_daemon() as daemon:
        for attempt in range(7):
            reply = daemon.command(json.dumps({"command": "reload",
                                               "credential": f"{SECRET}{attempt}"}).encode())
            assert reply["error"] == "the supervisor credential is not valid"
        records: list[Any] = [wire.decode_event(record.message)
                              for record in daemon.journal.records()]
        alarms = [record.data for record in records if record.type == "alarm"]
        assert [alarm.code for alarm in alarms] == ["credential_failures"]
        refused = [record.data for record in records if record.type == "command_refused"]
        assert refused and all(record.arguments == "" for record in refused)
        assert SECRET.encode() not in _journal_bytes(daemon)


def test_repeated_refusals_are_journaled_in_bounded_form() -> None:
    """Every refusal is answered; past the first few in a window a client's refusals are
    counted, and the count is journaled once the window closes."""
    clock = [1000.0]
    with fuzz.command_daemon() as daemon:
        daemon.clock = lambda: clock[0]
        seq = daemon.journal.last_seq
        replies = [daemon.command(b'{"command": "fly"}', client="203.0.113.9")
                   for _ in range(500)]
        assert all(reply["ok"] is False and "unknown command 'fly'" in reply["error"]
                   for reply in replies)
        journaled = [reply for reply in replies if "seq" in reply]
        assert len(journaled) == 3 and all(r.get("counted") for r in replies[3:])
        clock[0] += 1.5
        daemon._tick()
        records: list[Any] = [wire.decode_event(r.message)
                              for r in daemon.journal.records(after_seq=seq)]
        assert [r.type for r in records] == ["command_refused"] * 3 + ["refusals_counted"]
        count = records[-1].data
        assert (count.client, count.count, count.last_command) == ("203.0.113.9", 497, "?")
        # another client is not held back by the first one's window
        assert "seq" in daemon.command(b'{"command": "fly"}', client="198.51.100.7")


def test_an_unexpected_error_answers_its_request_and_the_table_goes_on(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with fuzz.command_daemon() as daemon:
        def broken(*args: Any) -> Any:
            raise ZeroDivisionError("a bug")

        monkeypatch.setattr(daemon.table, "command", broken)
        reply = daemon.command(b'{"command": "open"}')
        assert reply["ok"] is False and "could not serve" in reply["error"]
        monkeypatch.undo()
        assert daemon.command(b'{"command": "open"}')["ok"]


def test_a_turn_serves_a_bounded_number_of_commands() -> None:
    """A queue of commands is served a turn's budget at a time, so the loop gets back to the
    shoe, the heartbeat and the watchdog between turns."""
    from controller.daemon.loop import MAX_COMMANDS_PER_TURN

    with fuzz.command_daemon() as daemon:
        # A stopped clock: the turn's time budget never runs out, however loaded the
        # machine, so the count alone ends the turn.
        daemon.clock = lambda: 0.0
        client = daemon.context.socket(zmq.DEALER)
        client.setsockopt(zmq.LINGER, 0)
        client.connect(daemon.loaded.config.stream.commands)
        try:
            for _ in range(100):
                client.send_multipart([b"", b'{"command": "fly"}'])
            turns: list[int] = []
            while sum(turns) < 100:
                # (requests read off the socket but not yet served wait in the channel)
                wait_for(lambda: daemon.channel.pending
                         or daemon.commands.get(zmq.EVENTS) & zmq.POLLIN, "commands")
                daemon.handle_commands()
                served = 0
                while client.poll(100):
                    client.recv_multipart()
                    served += 1
                turns.append(served)
            assert max(turns) == MAX_COMMANDS_PER_TURN and sum(turns) == 100, turns
            assert len(turns) >= 100 // MAX_COMMANDS_PER_TURN + 1
        finally:
            client.close(0)


def _dealer(rig: Rig, endpoint: str | None) -> zmq.Socket[bytes]:
    assert endpoint is not None
    socket: zmq.Socket[bytes] = rig.context.socket(zmq.DEALER)
    socket.setsockopt(zmq.LINGER, 0)
    socket.connect(endpoint)
    return socket


def _ask(socket: zmq.Socket[bytes], payload: bytes) -> list[bytes]:
    """Send one request; the replies up to the one that ends it."""
    socket.send(payload)
    replies = []
    while True:
        assert socket.poll(int(DEADLINE_S * 1000)), f"no answer to {payload[:80]!r}"
        reply = socket.recv()
        replies.append(reply)
        if json.loads(reply).get("type") in ("error", "replay_end", "snapshot"):
            return replies


BAD_REPLAY_REQUESTS = [
    ({"request": "replay", "after": 2**63}, "after: Input should be less than or equal to"),
    ({"request": "replay", "after": 2**64 + 1}, "after: Input should be less than or equal"),
    ({"request": "replay", "after": 0, "limit": 2**63}, "limit: Input should be less than"),
    ({"request": "replay", "after": 0, "limit": 10**400}, "limit:"),
    ({"request": "replay", "after": -1}, "after: Input should be greater than or equal to 0"),
    ({"request": "replay", "after": 1.5}, "after: Input should be a valid integer"),
    ({"request": "replay", "after": "1"}, "after: Input should be a valid integer"),
    ({"request": "replay", "after": None}, "after:"),
    ({"request": "replay", "after": [1]}, "after:"),
    ({"request": "replay", "after": {"$gt": 0}}, "after:"),
    ({"request": "replay", "after": True}, "after:"),
    ({"request": "snapshot", "after": 0}, "after: unknown key"),
    ({"request": ["replay"]}, "request:"),
    ([], "bad request"),
    ("replay", "bad request"),
    (None, "bad request"),
]


@pytest.mark.parametrize("family", ["surveillance", "cms"])
def test_replay_sockets_refuse_every_bad_request_and_the_table_goes_on(rig_factory: RigFactory,
                                                                        family: str) -> None:
    rig = rig_factory("three_card_lowball")
    endpoint = rig.stream.replay if family == "surveillance" else rig.stream.cms_replay
    socket = _dealer(rig, endpoint)
    try:
        for request, says in BAD_REPLAY_REQUESTS:
            (reply,) = _ask(socket, json.dumps(request).encode())
            assert json.loads(reply)["type"] == "error" and says in json.loads(reply)["reason"]
        for payload in (b"[" * 60_000, b"{" + b'"a":{' * 12_000, b"\xff\xfe", b"",
                        json.dumps({"request": "replay", "after": 10**4000}).encode(),
                        b'{"request": "replay", "after": 0, "pad": "' + b"x" * 60_000 + b'"}'):
            (reply,) = _ask(socket, payload)
            assert json.loads(reply)["type"] == "error"
        replies = _ask(socket, json.dumps({"request": "replay", "after": 0}).encode())
        assert json.loads(replies[-1])["type"] == "replay_end"
    finally:
        socket.close(0)
    # Past the transport's cap the connection is closed unanswered (nothing is read into
    # the table's memory); the table goes on, and serves that client's next connection.
    socket = _dealer(rig, endpoint)
    try:
        socket.send(b"[" * (MAX_REQUEST_BYTES + 1))
        replies = _ask(socket, json.dumps({"request": "snapshot"}).encode())
        assert json.loads(replies[-1])["type"] == "snapshot"
    finally:
        socket.close(0)
    assert rig.ask({"command": "status"})["ok"]
    refused = wait_for(lambda: rig.events("request_refused"), "the refusals on the stream")
    assert {event.data.family for event in refused} == {family}


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(request=JSON_VALUES | st.fixed_dictionaries({
    "request": st.sampled_from(("replay", "snapshot")) | JSON_VALUES,
    "after": JSON_VALUES, "limit": JSON_VALUES}))
def test_replay_sockets_answer_any_json(replay_rig: ReplayRig, request: Any) -> None:
    (reply,) = _ask(replay_rig.socket, json.dumps(request).encode())[-1:]
    assert json.loads(reply)["type"] in ("error", "replay_end", "snapshot")


class ReplayRig(Rig):
    """A rig with a DEALER socket on its CMS replay endpoint."""

    socket: zmq.Socket[bytes]


@pytest.fixture(scope="module")
def replay_rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReplayRig]:
    rig = ReplayRig(tmp_path_factory.mktemp("replay"), "cali_lowball", durability="batched")
    rig.socket = _dealer(rig, rig.stream.cms_replay)
    yield rig
    rig.socket.close(0)
    rig.close()


def test_an_oversize_command_is_answered_and_journaled(rig_factory: RigFactory) -> None:
    rig = rig_factory("cali_lowball")
    payload = json.dumps({"command": "void", "reason": "x" * 5000}).encode()
    reply = rig.ask(payload)
    assert reply["ok"] is False
    assert reply["error"] == f"a command is at most 4096 bytes; this one is {len(payload)}"
    refused = wait_for(lambda: rig.events("command_refused"), "the refusal on the stream")
    assert refused[-1].data.reason == reply["error"] and refused[-1].data.arguments == ""
    assert rig.ask({"command": "status"})["ok"]


def test_a_flood_of_junk_is_answered_in_full_and_journaled_in_bounded_form(
        rig_factory: RigFactory) -> None:
    """One client pipelines thousands of junk commands while the dealer deals: every junk
    command is answered, every one is accounted for in the journal (in full or counted),
    the journal grows by a few records a second, and the card dealt during the flood reaches
    the table."""
    rig = rig_factory("cali_lowball", durability="batched")
    for command in ({"command": "open"},
                    {"command": "place", "spot": 1, "wager": "ante", "amount": 500},
                    {"command": "place", "spot": 1, "wager": "xtra_bonus", "amount": 500},
                    {"command": "lock"}):
        assert rig.ask(command)["ok"]
    rig.shoe.device.load(["As", "2d", "3c", "4h"])
    seq = rig.daemon.journal.last_seq
    flood = _dealer(rig, rig.stream.commands)
    flood.setsockopt(zmq.SNDHWM, 0)
    total = 3000
    answered = 0

    def read_reply() -> None:
        nonlocal answered
        empty, reply = flood.recv_multipart()
        assert json.loads(reply)["ok"] is False
        answered += 1

    try:
        for number in range(total):
            flood.send_multipart([b"", json.dumps({"junk": number}).encode()])
            # The replies are read as they come, as a client does: ZeroMQ queues a
            # thousand each way, and drops what a client that reads nothing leaves past it;
            # so no more than 500 are left unread, however slowly this client is scheduled.
            while flood.poll(0) or number + 1 - answered > 500:
                assert flood.poll(int(DEADLINE_S * 1000)), f"{answered} of {total} answered"
                read_reply()
        rig.deal_one()
        while answered < total:
            assert flood.poll(int(DEADLINE_S * 1000)), f"{answered} of {total} answered"
            read_reply()
    finally:
        flood.close(0)
    rig.daemon.refusals.window_s = 0.0  # close every window now, as the next tick does

    def counted() -> list[Any]:
        return [record for record in rig.daemon.journal.records(after_seq=seq)
                if record.type in ("command_refused", "refusals_counted")]

    def accounted() -> int:
        total_seen = 0
        for record in counted():
            data: Any = wire.decode_event(record.message).data
            total_seen += data.count if record.type == "refusals_counted" else 1
        return total_seen

    wait_for(lambda: accounted() == total, "every junk command accounted for")
    assert len(counted()) < total / 20
    assert len(rig.events("card_dealt")) == 1


HOSTILE_COMMANDS = [
    json.dumps({"command": "place", "spot": 2**63, "wager": "ante", "amount": 500}).encode(),
    json.dumps({"command": "place", "spot": 1, "wager": "ante", "amount": 2**64}).encode(),
    json.dumps({"command": "place", "spot": 1, "wager": "ante", "amount": -2**63}).encode(),
    b'{"command": "place", "spot": 1, "wager": "ante", "amount": ' + b"9" * 4000 + b"}",
    b'{"command": "place", "spot": 1, "wager": "ante", "amount": 1e400}',
    b"[" * 4000, b'{"a":' * 800 + b"1" + b"}" * 800,
    b"null", b"true", b"1", b'"lock"', b"[]", b"{}", b"", b"\x00\xff",
    json.dumps({"command": "lock", "by": {"role": "supervisor"}}).encode(),
    json.dumps({"command": "lock", "by": "x" * 65}).encode(),
    json.dumps({"command": "status", "state": 1}).encode(),
    json.dumps({"command": "void", "reason": "x", "credential": ["a"]}).encode(),
    json.dumps({"command": "void", "reason": "x", "credential": "c" * 100_000})[:4096].encode(),
]


@pytest.mark.parametrize("payload", HOSTILE_COMMANDS, ids=range(len(HOSTILE_COMMANDS)))
def test_the_command_socket_answers_every_hostile_command(replay_rig: ReplayRig,
                                                          payload: bytes) -> None:
    reply = replay_rig.ask(payload)
    assert reply["ok"] is False and reply["error"], reply
    assert replay_rig.ask({"command": "status"})["ok"]


def test_past_the_transport_cap_a_command_closes_its_connection_and_the_table_goes_on(
        replay_rig: ReplayRig) -> None:
    from controller.daemon.loop import MAX_COMMAND_FRAME_BYTES

    socket = _dealer(replay_rig, replay_rig.stream.commands)
    try:
        socket.send_multipart([b"", b"[" * (MAX_COMMAND_FRAME_BYTES + 1)])
        assert not socket.poll(500), "a message past the cap is never read, so not answered"
    finally:
        socket.close(0)
    assert replay_rig.ask({"command": "status"})["ok"]


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(value=JSON_VALUES | st.dictionaries(
    st.sampled_from(("command", "spot", "wager", "amount", "by", "credential", "reason",
                     "decision", "player", *INTERNAL_KEYS)), JSON_VALUES, max_size=5))
def test_the_command_socket_answers_any_json(replay_rig: ReplayRig, value: Any) -> None:
    reply = replay_rig.ask(json.dumps(value).encode())
    assert isinstance(reply["ok"], bool)
    assert reply["ok"] or reply["error"]


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from(COMMAND_NAMES), credential=st.sampled_from((None, "wrong", "good")),
       by=st.sampled_from(("dealer", "supervisor", "root", "system")),
       fields=st.fixed_dictionaries({}, optional={
           "spot": st.integers(1, 7), "wager": st.sampled_from(("ante", "bonus")),
           "amount": st.integers(1, 10**6),
           # (a reason the text rules accept: a refused text is answered before the role)
           "reason": st.text(st.characters(categories=("L", "N", "P")), min_size=1, max_size=20),
           "decision": st.sampled_from(("stand", "discard:As"))}))
def test_the_role_is_the_credentials_alone(any_table: TableDaemon, name: str, credential: str | None,
                                           by: str, fields: dict[str, Any]) -> None:
    """Whatever a command names itself (``by``), its role is the dealer's unless the request
    holds the valid credential; a supervisor command without it is refused."""
    daemon = any_table
    request: dict[str, Any] = {"command": name, "by": by, **fields}
    if credential is not None:
        request["credential"] = fuzz.CREDENTIAL if credential == "good" else credential
    seq = daemon.journal.last_seq
    reply = daemon.command(json.dumps(request).encode())
    records: list[Any] = [wire.decode_event(record.message)
                          for record in daemon.journal.records(after_seq=seq)]
    decided = [record.data for record in records
               if record.type in ("command_accepted", "command_refused")]
    if reply.get("counted"):
        return
    (record,) = decided
    assert record.role == ("supervisor" if credential is not None else "dealer")
    if COMMANDS[name].supervisor_only and credential != "good":
        assert reply["ok"] is False and record.by == by
    if record.role == "dealer" and COMMANDS[name].supervisor_only:
        assert "needs the supervisor credential" in reply["error"]

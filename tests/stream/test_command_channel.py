"""The command channel as a protocol: its replies' shapes and bytes, and its one client.

The replies' bytes are pinned here as the daemon has always sent them (REQ clients of the
other tests read them too). :class:`CommandClient` is checked against a plain ROUTER that
answers as slowly, late or out of order as a test needs, and against the real daemon.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq

from controller.core import commands
from controller.errors import LowballError
from controller.stream import table_commands
from controller.stream.command_client import CommandClient, CommandTimeout
from controller.stream.command_replies import (
    Accepted,
    Refused,
    Reply,
    ReplyError,
    Status,
    Withdrawn,
    decode,
    encode,
    reply_from,
)
from controller.stream.table_commands import parse_command

from tests.support.commands import Router
from tests.support.rig import CREDENTIAL, Rig
from tests.support.waits import DEADLINE_S


REPLIES = [
    (Accepted(12, "OPEN", "place wagers, then lock"),
     b'{"ok": true, "seq": 12, "state": "OPEN", "expecting": "place wagers, then lock"}'),
    (Status({"state": "OPEN"}, 3, {"shoe": "connected"}, {"seq": 3, "hash": "ab"}),
     b'{"ok": true, "state": {"state": "OPEN"}, "seq": 3, "devices": {"shoe": "connected"}, '
     b'"journal": {"seq": 3, "hash": "ab"}}'),
    (Refused("unknown command"), b'{"ok": false, "error": "unknown command"}'),
    (Refused("bad", seq=7), b'{"ok": false, "error": "bad", "seq": 7}'),
    (Refused("bad", counted=True), b'{"ok": false, "error": "bad", "counted": true}'),
    (Refused("caf\u00e9"), b'{"ok": false, "error": "caf\\u00e9"}'),
    (Withdrawn({"a1b2c3d4": 9}, ["e5f6a7b8"]),
     b'{"ok": true, "carried_out": {"a1b2c3d4": 9}, "withdrawn": ["e5f6a7b8"]}'),
]


@pytest.mark.parametrize("reply, payload", REPLIES)
def test_each_reply_has_the_bytes_the_daemon_sends_and_reads_back(reply: Reply, payload: bytes
                                                                  ) -> None:
    assert encode(reply) == payload
    assert decode(payload) == reply


@pytest.mark.parametrize("data", [
    [], None, {"ok": "yes"}, {"ok": False}, {"ok": False, "error": 3},
    {"ok": False, "error": "x", "seq": "7"}, {"ok": False, "error": "x", "counted": 1},
    {"ok": True, "seq": True, "state": "OPEN", "expecting": "x"},
    {"ok": True, "seq": 1, "state": "OPEN", "expecting": None},
    {"ok": True, "seq": 1}, {"ok": True, "state": {}, "seq": 1, "devices": {}},
    {"ok": True, "carried_out": {"a": "1"}, "withdrawn": []},
    {"ok": True, "carried_out": {}, "withdrawn": [1]},
])
def test_anything_else_is_not_a_reply(data: Any) -> None:
    with pytest.raises(ReplyError) as raised:
        reply_from(data)
    assert isinstance(raised.value, LowballError) and raised.value.problem


def test_bytes_that_are_not_json_are_not_a_reply() -> None:
    with pytest.raises(ReplyError, match="not JSON"):
        decode(b"\xff{")


def received(client: CommandClient) -> tuple[int, Reply]:
    """The next reply and its request's id (one must arrive within the deadline)."""
    reply = client.receive(DEADLINE_S)
    assert reply is not None, "no reply arrived"
    return reply


@pytest.fixture
def router_and_client(tmp_path: Path) -> Iterator[tuple[Router, CommandClient]]:
    context = zmq.Context()
    endpoint = f"ipc://{tmp_path}/commands"
    router = Router(context, endpoint)
    client = CommandClient(endpoint, context=context, by="pit", credential="secret")
    yield router, client
    client.close()
    router.socket.close(0)
    context.term()


def test_a_late_reply_is_never_taken_for_the_answer_to_the_next_request(
        router_and_client: tuple[Router, CommandClient]) -> None:
    router, client = router_and_client
    first = client.send({"command": "lock"})
    late, _ = router.take()
    assert client.reply_to(first, 0.05) is None
    second = client.send({"command": "open"})
    envelope, request = router.take()
    router.answer(late, Refused("the answer to lock"))
    router.answer(envelope, Accepted(5, "OPEN", "place wagers, then lock"))
    assert request.pop("request_id") and request == {"command": "open", "by": "pit"}
    assert client.reply_to(second, DEADLINE_S) == Accepted(5, "OPEN", "place wagers, then lock")


def test_pipelined_replies_come_back_with_their_requests_ids(
        router_and_client: tuple[Router, CommandClient]) -> None:
    router, client = router_and_client
    ids = [client.send({"command": "place", "spot": spot, "wager": "ante", "amount": 500})
           for spot in (1, 2, 3)]
    taken = [router.take() for _ in ids]
    for envelope, request in reversed(taken):
        router.answer(envelope, Refused(f"spot {request['spot']}"))
    replies = dict(received(client) for _ in ids)
    assert replies == {ids[0]: Refused("spot 1"), ids[1]: Refused("spot 2"),
                       ids[2]: Refused("spot 3")}


def test_a_command_that_timed_out_is_withdrawn_right_behind_it(tmp_path: Path) -> None:
    """The request is queued while no daemon listens: when one comes up, the withdrawal
    naming it arrives right behind it (the daemon reads both before serving either, and
    refuses the command), and the timeout says its fate is not known yet."""
    context = zmq.Context()
    endpoint = f"ipc://{tmp_path}/commands"
    client = CommandClient(endpoint, context=context)
    try:
        with pytest.raises(CommandTimeout) as raised:
            client.ask({"command": "lock"}, timeout_s=0.05)
        timeout = raised.value
        assert (timeout.command, timeout.timeout_s) == ("lock", 0.05)
        assert isinstance(timeout, LowballError) and isinstance(timeout, TimeoutError)
        assert timeout.carried_out is None and not timeout.withdrawn
        assert f"Withdraw request {timeout.request_id} again" in str(timeout)
        router = Router(context, endpoint)
        assert router.take()[1] == {"command": "lock", "request_id": timeout.request_id}
        envelope, request = router.take()
        assert request == {"command": "withdraw", "requests": [timeout.request_id]}
        router.socket.close(0)
    finally:
        client.close()
        context.term()


def test_only_a_status_is_asked_again_after_a_timeout(
        router_and_client: tuple[Router, CommandClient]) -> None:
    router, client = router_and_client
    with pytest.raises(CommandTimeout):
        client.ask({"command": "lock"}, timeout_s=0.05, retries=3)
    assert [router.take()[1]["command"] for _ in range(2)] == ["lock", "withdraw"]
    assert not router.socket.poll(100), "a command was sent again"
    with pytest.raises(CommandTimeout):
        client.ask({"command": "status"}, timeout_s=0.05, retries=2)
    assert [router.take()[1]["command"] for _ in range(3)] == ["status"] * 3


def test_the_credential_goes_only_with_a_supervisor_request(
        router_and_client: tuple[Router, CommandClient]) -> None:
    router, client = router_and_client
    client.send(parse_command({"command": "void", "reason": "misdeal"}), supervisor=True)
    client.send({"command": "open", "by": "sam"})
    taken = [router.take()[1] for _ in range(2)]
    assert all(len(request.pop("request_id")) == 32 for request in taken)
    assert taken == [{"command": "void", "reason": "misdeal", "by": "pit",
                      "credential": "secret"}, {"command": "open", "by": "sam"}]


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    rig = Rig(tmp_path, "cali_lowball")
    yield rig
    rig.close()


def test_the_daemon_answers_the_client_with_typed_replies(rig: Rig) -> None:
    client = CommandClient(rig.stream.commands, context=rig.context, by="alice",
                           credential=CREDENTIAL)
    try:
        status = client.ask({"command": "status"})
        assert isinstance(status, Status) and status.state["state"] == "CLOSED"
        opened = client.ask({"command": "open"})
        assert isinstance(opened, Accepted) and opened.state == "OPEN"
        assert opened.seq == rig.daemon.journal.last_seq
        refused = client.ask({"command": "fly"})
        assert isinstance(refused, Refused) and "unknown command" in refused.error
        assert refused.seq == opened.seq + 1
        without = client.ask({"command": "sign_in"})
        assert isinstance(without, Refused) and "supervisor credential" in without.error
        signed = client.ask({"command": "sign_in"}, supervisor=True)
        assert isinstance(signed, Accepted)
        ids = [client.send({"command": "status"}) for _ in range(5)]
        replies = dict(received(client) for _ in ids)
        assert sorted(replies) == ids and all(isinstance(r, Status) for r in replies.values())
    finally:
        client.close()


def test_a_withdrawal_settles_each_request_it_names_for_good(rig: Rig) -> None:
    """Carried out (its record's seq, remembered across a restart), or withdrawn: refused
    whenever it arrives. A request is carried out once under its id. (Every request goes
    through the command socket: the daemon's loop runs, and only its thread journals.)"""
    def ask(request_id: str, **request: Any) -> dict[str, Any]:
        return rig.ask({**request, "request_id": request_id})

    opened = ask("opened-0001", command="open")
    assert opened["ok"]
    accepted = rig.daemon.journal.last_of("command_accepted")
    assert accepted is not None
    assert accepted.seq <= opened["seq"]
    rig.stop_daemon()
    rig.start_daemon()
    withdraw = {"command": "withdraw", "requests": ["opened-0001", "placed-0002"]}
    assert rig.ask(withdraw) == {
        "ok": True, "carried_out": {"opened-0001": accepted.seq}, "withdrawn": ["placed-0002"]}
    late = ask("placed-0002", command="place", spot=1, wager="ante", amount=500)
    assert not late["ok"] and "withdrawn by its client" in late["error"]
    again = ask("opened-0001", command="open")
    assert not again["ok"] and f"carried out already (seq {accepted.seq})" in again["error"]
    bad = rig.ask(b'{"command": "withdraw", "requests": ["no"]}')
    assert not bad["ok"] and "requests" in bad["error"]
    assert not ask("x", command="open")["ok"]


def test_a_req_client_and_the_command_client_get_the_same_bytes(rig: Rig) -> None:
    """The envelope is returned as it came: a REQ's empty delimiter, or the client's id."""
    raw = rig.context.socket(zmq.DEALER)
    raw.setsockopt(zmq.LINGER, 0)
    raw.connect(rig.stream.commands)
    try:
        raw.send_multipart([b"any id at all", b"", b'{"command": "status"}'])
        assert raw.poll(int(DEADLINE_S * 1000))
        request_id, delimiter, payload = raw.recv_multipart()
        assert (request_id, delimiter) == (b"any id at all", b"")
        assert payload == encode(decode(payload))
        assert json.loads(payload) == rig.ask({"command": "status"})
    finally:
        raw.close(0)


def test_the_protocol_page_lists_every_command_and_the_limits_the_daemon_keeps() -> None:
    from pathlib import Path

    from controller.daemon import command_channel as channel
    from controller.daemon.refusal_ledger import CREDENTIAL_FAILURES, IN_FULL
    from controller.stream.security import HANDSHAKE_TIMEOUT_MS
    from controller.stream.table_commands import COMMANDS

    page = (Path(__file__).resolve().parents[2] / "docs" / "command-channel.md").read_text()
    for name, cls in [*COMMANDS.items(), ("status", None), ("withdraw", None)]:
        row = next((line for line in page.splitlines() if line.startswith(f"| `{name}` |")),
                   None)
        assert row is not None, f"docs/command-channel.md does not list {name}"
        if cls is not None:
            role = "supervisor" if cls.supervisor_only else "dealer"
            assert f"| {role} |" in row, row
            for field in set(cls.model_fields) - {"command"}:
                assert f"`{field}`" in row, (name, field)
    assert f"| request size | {channel.MAX_COMMAND_BYTES:,} bytes |" in page
    assert f"| frame size | {channel.MAX_COMMAND_FRAME_BYTES // 1024} KiB |" in page
    assert (f"| {channel.MAX_COMMANDS_PER_TURN}, within {channel.TURN_BUDGET_S * 1000:g} ms"
            in page)
    assert f"| requests read and held, not yet served | {channel.MAX_WAITING} |" in page
    assert f"| {IN_FULL} per client per second |" in page
    assert f"| {CREDENTIAL_FAILURES} within a minute" in page
    assert f"| handshake | {HANDSHAKE_TIMEOUT_MS / 1000:g} s |" in page


def test_a_message_that_is_not_a_reply_to_this_client_is_skipped_within_the_timeout(
        router_and_client: tuple[Router, CommandClient]) -> None:
    router, client = router_and_client
    request_id = client.send({"command": "status"})
    envelope, _ = router.take()
    router.socket.send_multipart([envelope[0], b"no id", encode(Refused("stray"))])
    router.answer(envelope, Refused("held"))
    assert client.receive(DEADLINE_S) == (request_id, Refused("held"))
    router.socket.send_multipart([envelope[0], b"no id", encode(Refused("stray"))])
    assert client.receive(0.05) is None


def test_each_request_model_has_the_name_and_arguments_of_its_core_command() -> None:
    """The request models and the core's commands are declared apart on purpose (the
    module docstring of controller/stream/table_commands.py says why): they must agree."""
    assert list(table_commands.COMMANDS) == list(commands.COMMANDS)
    for name, request in table_commands.COMMANDS.items():
        core = commands.COMMANDS[name]
        assert request.core_command is core and request.supervisor_only == core.supervisor_only
        fields = {field.name: field.default for field in dataclasses.fields(core)}
        arguments = {key: field.default for key, field in request.model_fields.items()
                     if key != "command"}
        assert arguments.keys() == fields.keys(), name
        for key, default in fields.items():
            if default is dataclasses.MISSING:
                assert request.model_fields[key].is_required(), f"{name}.{key}"
            else:
                assert arguments[key] == default, f"{name}.{key}"


def test_one_walk_finds_every_text_of_a_request_for_both_searches() -> None:
    """The credential search and the unreadable-text check read a request's keys and texts at
    any depth alike; only the credential search leaves out the credential's own value."""
    from controller.stream.command_requests import texts, unreadable_text

    request = {"command": "place", "credential": "c-secret", "player": "P-1",
               "extra": [{"deep key": ["deeper", 5, None]}]}
    assert sorted(texts(request)) == sorted(["command", "place", "credential", "player",
                                              "P-1", "extra", "deep key", "deeper"])
    assert unreadable_text(request) is None
    assert unreadable_text({**request, "credential": "c\u202e"}) == "credential"
    assert unreadable_text({**request, "player": {"x": ["a\u200b"]}}) == "player"
    assert unreadable_text({"command": "open", "k\x00": 1}) == "a key or value"
    assert unreadable_text({"command": "open", "mine": "\x1b[2J"}) == "a key or value"

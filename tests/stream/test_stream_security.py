"""CURVE on the event, replay and command sockets (ironhouse): a listed client key works, an
unknown one gets nothing; a CMS key cannot open the surveillance stream; without keys the
endpoints must be on loopback and the daemon says the stream is unauthenticated.

A refused client is shown to get nothing while a listed client, on the same daemon, receives
heartbeats: the wait ends on the listed client's heartbeats, the deadline only bounds failure.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import structlog
import zmq
import zmq.auth

from controller.cli.main import main as cli
from controller.settings.table_config import Security, TableConfig
from controller.settings.validation import InputError, validate
from controller.stream import wire
from controller.stream.client import StreamClient, StreamError
from controller.stream.security import client as curve_client

from tests.support.curve import make_keys, SecureTable
from tests.support.waits import DEADLINE_S




def test_keys_new_writes_a_pair_and_never_overwrites(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    keys = make_keys(tmp_path / "keys", "table-1")
    assert len(keys["public_key"]) == 40 and (tmp_path / "keys" / "table-1.key").exists()
    assert (tmp_path / "keys" / "table-1.key_secret").stat().st_mode & 0o077 == 0
    assert cli(["keys", "new", "table-1", "--dir", str(tmp_path / "keys")]) == 1
    assert "already exists" in capsys.readouterr().err


@pytest.mark.parametrize("key, endpoint", [("events", "tcp://0.0.0.0:5555"),
                                           ("commands", "tcp://10.1.2.3:5557"),
                                           ("cms_events", "tcp://*:5558")])
def test_without_keys_a_network_endpoint_is_refused(key: str, endpoint: str) -> None:
    stream = {key: endpoint}
    if key == "cms_events":
        stream["cms_replay"] = "tcp://127.0.0.1:5559"
    data = {"table": {"id": "T1", "game": "cali_lowball", "paytable": "example"},
            "stream": stream}
    with pytest.raises(InputError) as error:
        validate(TableConfig, data, "table.toml")
    assert f"stream.{key} = '{endpoint}'" in str(error.value)
    assert "must bind to loopback" in str(error.value)


def test_with_keys_a_network_endpoint_is_accepted() -> None:
    data = {"table": {"id": "T1", "game": "cali_lowball", "paytable": "example"},
            "stream": {"events": "tcp://0.0.0.0:5555"},
            "security": {"server_secret_key_file": "keys/table.key_secret",
                         "authorized_keys_dir": "clients"}}
    assert validate(TableConfig, data, "table.toml").stream.events == "tcp://0.0.0.0:5555"


@pytest.fixture
def keyring(tmp_path: Path) -> tuple[dict[str, dict[str, bytes]], Security]:
    server = make_keys(tmp_path / "server", "table")
    allowed, cms_allowed, other = tmp_path / "allowed", tmp_path / "cms-allowed", tmp_path / "o"
    surveillance_allowed = tmp_path / "surveillance-allowed"
    keys = {"server": server, "dealer": make_keys(allowed, "dealer-terminal"),
            "surveillance": make_keys(surveillance_allowed, "surveillance-room"),
            "cms": make_keys(cms_allowed, "cms-host"), "stranger": make_keys(other, "stranger")}
    security = Security(server_secret_key_file=str(tmp_path / "server" / "table.key_secret"),
                        authorized_keys_dir=str(allowed),
                        surveillance_authorized_keys_dir=str(surveillance_allowed),
                        cms_authorized_keys_dir=str(cms_allowed))
    return keys, security


def curve(keys: dict[str, dict[str, bytes]], name: str) -> dict[str, bytes]:
    return {"server_public_key": keys["server"]["public_key"], **keys[name]}


def subscriber(context: zmq.Context[Any], endpoint: str, prefix: bytes,
               keys: dict[str, bytes] | None = None) -> zmq.Socket[bytes]:
    sub: zmq.Socket[bytes] = context.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    if keys is not None:
        curve_client(sub, **keys)
    sub.setsockopt(zmq.SUBSCRIBE, prefix)
    sub.connect(endpoint)
    return sub


def heartbeats_until(listed: zmq.Socket[bytes], refused: list[zmq.Socket[bytes]],
                     count: int = 5) -> list[int]:
    """Read until ``listed`` has had ``count`` heartbeats; return what each refused got."""
    got, others = 0, [0] * len(refused)
    poller = zmq.Poller()
    for socket in (listed, *refused):
        poller.register(socket, zmq.POLLIN)
    deadline = time.monotonic() + DEADLINE_S
    while got < count:
        assert time.monotonic() < deadline, "the listed client got no heartbeats"
        ready = dict(poller.poll(100))
        if listed in ready:
            listed.recv_multipart()
            got += 1
        for index, socket in enumerate(refused):
            if socket in ready:
                socket.recv_multipart()
                others[index] += 1
    return others


def test_a_listed_key_is_served_and_an_unknown_key_gets_nothing(
        tmp_path: Path, keyring: tuple[dict[str, dict[str, bytes]], Security]) -> None:
    """Each door its own allow-list. Game protection (finding 3): one list admitted the
    command socket and the surveillance stream, so the dealer's key, needed to give commands,
    also streamed every card live."""
    keys, security = keyring
    context = zmq.Context()
    table = SecureTable(tmp_path, context, security)
    stream = table.stream
    try:
        listed = subscriber(context, stream.events, b"surveillance.",
                            curve(keys, "surveillance"))
        stranger = subscriber(context, stream.events, b"", curve(keys, "stranger"))
        cms_on_surveillance = subscriber(context, stream.events, b"", curve(keys, "cms"))
        dealer_on_surveillance = subscriber(context, stream.events, b"", curve(keys, "dealer"))
        plain = subscriber(context, stream.events, b"")
        assert heartbeats_until(listed, [stranger, cms_on_surveillance, dealer_on_surveillance,
                                         plain]) == [0, 0, 0, 0]

        # The table family: the dealer's key, not surveillance's (each door its own list).
        assert stream.table_events is not None and stream.table_replay is not None
        dealer = subscriber(context, stream.table_events, b"table.", curve(keys, "dealer"))
        surveillance_on_table = subscriber(context, stream.table_events, b"",
                                           curve(keys, "surveillance"))
        assert heartbeats_until(dealer, [surveillance_on_table]) == [0]

        assert stream.cms_events is not None and stream.cms_replay is not None
        cms = subscriber(context, stream.cms_events, b"cms.", curve(keys, "cms"))
        surveillance_on_cms = subscriber(context, stream.cms_events, b"",
                                         curve(keys, "surveillance"))
        assert heartbeats_until(cms, [surveillance_on_cms]) == [0]

        # Replay socket: the listed key gets a snapshot, the stranger no answer in time.
        good = StreamClient(context, table_id="CALI-01", pub_endpoint=stream.events,
                            replay_endpoint=stream.replay, curve=curve(keys, "surveillance"))
        bad = StreamClient(context, table_id="CALI-01", pub_endpoint=stream.events,
                           replay_endpoint=stream.replay, curve=curve(keys, "stranger"))
        cms_client = StreamClient(context, table_id="CALI-01", family=wire.CMS,
                                  pub_endpoint=stream.cms_events,
                                  replay_endpoint=stream.cms_replay, curve=curve(keys, "cms"))
        assert good.snapshot().state["table_id"] == "CALI-01"
        assert cms_client.snapshot().state["table_id"] == "CALI-01"
        with pytest.raises(StreamError, match="no answer"):
            bad.snapshot(timeout=1.0)

        # Command socket: the dealer's allow-list, not surveillance's.
        def ask(name: str | None) -> Any:
            req = context.socket(zmq.REQ)
            req.setsockopt(zmq.LINGER, 0)
            if name is not None:
                curve_client(req, **curve(keys, name))
            # a refused key leaves REQ with no peer, where a send would wait for ever
            req.setsockopt(zmq.SNDTIMEO, 1000 if name != "dealer" else int(DEADLINE_S * 1000))
            req.connect(stream.commands)
            try:
                req.send(json.dumps({"command": "status"}).encode())
            except zmq.Again:
                req.close(0)
                return None
            answered = req.poll(1000 if name != "dealer" else int(DEADLINE_S * 1000))
            reply = json.loads(req.recv()) if answered else None
            req.close(0)
            return reply

        assert ask("dealer")["ok"] is True
        assert ask("stranger") is None and ask("cms") is None and ask(None) is None
        assert ask("surveillance") is None
        for socket in (listed, stranger, cms_on_surveillance, dealer_on_surveillance, plain, cms,
                       surveillance_on_cms, dealer, surveillance_on_table):
            socket.close(0)
        for client in (good, bad, cms_client):
            client.close()
    finally:
        table.close()
        context.term()


def test_without_keys_the_daemon_warns_the_stream_is_unauthenticated(tmp_path: Path) -> None:
    context = zmq.Context()
    with structlog.testing.capture_logs() as logs:
        table = SecureTable(tmp_path, context, None)
        table.close()
    context.term()
    assert any("unauthenticated" in entry["event"] and entry["log_level"] == "warning"
               for entry in logs)

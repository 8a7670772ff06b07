"""Red team, connection exhaustion (issue 14): 1,100 plain TCP connects to the CURVE command
port, idle, must not lock the authorized dealer out. The real daemon runs as a process with
CURVE keys, under the descriptor limit the systemd unit gives it (``LimitNOFILE``), and under
systemd's default soft limit of 1,024 (where only the handshake timeout frees the descriptors
the idle connections hold: ZeroMQ's default would lock the dealer out for 30 s). The refused
handshakes are logged with a count, a line per interval, not a line per connection.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
import zmq
import zmq.auth

from controller.stream.security import client

from tests.support.daemon import config_file
from tests.support.waits import DEADLINE_S, wait_for

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "systemd" / "lowball-table.service"
IDLE_CONNECTIONS = 1100
#: systemd's default soft limit on open files when a unit sets no LimitNOFILE
SYSTEMD_DEFAULT_NOFILE = 1024


def unit_nofile() -> int:
    lines = [line for line in UNIT.read_text().splitlines() if line.startswith("LimitNOFILE=")]
    return int(lines[-1].split("=", 1)[1].split(":")[0]) if lines else SYSTEMD_DEFAULT_NOFILE


#: connects sent at once: fewer than the listen backlog (ZeroMQ's ZMQ_BACKLOG, 100)
BATCH = 90


def descriptors(pid: int) -> int:
    """How many descriptors process ``pid`` has open."""
    return len(os.listdir(f"/proc/{pid}/fd"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def enough_descriptors() -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = IDLE_CONNECTIONS + 512
    if hard != resource.RLIM_INFINITY and hard < wanted:
        pytest.skip(f"needs {wanted} descriptors, the hard limit is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_the_unit_raises_the_descriptor_limit() -> None:
    assert unit_nofile() >= 16384


@pytest.mark.parametrize("limit", ["unit", "systemd default"])
def test_idle_unauthenticated_connections_do_not_lock_the_dealer_out(tmp_path: Path, limit: str,
                                                                     enough_descriptors: None) -> None:
    nofile = unit_nofile() if limit == "unit" else SYSTEMD_DEFAULT_NOFILE
    keys, allowed = tmp_path / "keys", tmp_path / "allowed"
    keys.mkdir()
    allowed.mkdir()
    table_public, table_secret = zmq.auth.create_certificates(keys, "table")
    dealer_public, dealer_secret = zmq.auth.create_certificates(keys, "dealer")
    shutil.copy(dealer_public, allowed)
    ports = {name: free_port() for name in ("events", "replay", "commands")}
    path = config_file(tmp_path)
    path.write_text(path.read_text().split("\n[stream]\n")[0] + "\n[stream]\n" + "".join(
        f'{name} = "tcp://127.0.0.1:{port}"\n' for name, port in ports.items()) +
        f'\n[security]\nserver_secret_key_file = "{table_secret}"\n'
        f'authorized_keys_dir = "{allowed}"\n')

    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if limit == "unit" and hard != resource.RLIM_INFINITY and hard < nofile:
        nofile = hard  # as far as this machine lets a process go (it is past the attack)

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, hard))

    log = (tmp_path / "daemon.log").open("w+")
    daemon = subprocess.Popen(
        [sys.executable, "-m", "controller.cli.main", "run", "--config", str(path), "--state-dir",
         str(tmp_path / "state"), "--log-format", "json"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, preexec_fn=limited)
    attackers: list[socket.socket] = []
    context = zmq.Context()
    try:
        def lines() -> list[dict[str, Any]]:
            return [json.loads(line) for line in Path(log.name).read_text().splitlines()
                    if line.startswith("{")]

        def dropped() -> bool:
            """Idle connections were dropped at their handshake timeout already."""
            return any(line["event"].startswith("connections refused") for line in lines())
        # (a start on a machine the whole suite shares can take longer than one deadline:
        # the wait only bounds a failure)
        wait_for(lambda: any(line["event"] == "table daemon ready" for line in lines()),
                 "the daemon to be ready", timeout=3 * DEADLINE_S)
        # In batches smaller than the listen backlog, each accepted before the next (as many
        # as the daemon's descriptors allow: the rest wait in its backlog, and the dealer's
        # connect behind them), so that no connect is dropped and retried later.
        base = descriptors(daemon.pid)
        started = time.monotonic()
        for first in range(0, IDLE_CONNECTIONS, BATCH):
            for _ in range(min(BATCH, IDLE_CONNECTIONS - first)):
                attacker = socket.socket()
                attacker.setblocking(False)
                attacker.connect_ex(("127.0.0.1", ports["commands"]))  # and never speaks
                attackers.append(attacker)
            held = min(nofile, base + len(attackers)) - 2
            wait_for(lambda: descriptors(daemon.pid) >= held or dropped(),
                     f"the daemon to hold {held} descriptors")
        print(f"{limit}: {len(attackers)} idle connections in "
              f"{time.monotonic() - started:.2f} s, the daemon holds "
              f"{descriptors(daemon.pid)} descriptors")

        dealer = context.socket(zmq.REQ)
        dealer.setsockopt(zmq.LINGER, 0)
        public, secret = zmq.auth.load_certificate(keys / "dealer.key_secret")
        assert secret is not None
        server_public, _ = zmq.auth.load_certificate(keys / "table.key")
        client(dealer, server_public_key=server_public, public_key=public, secret_key=secret)
        asked = time.monotonic()
        dealer.connect(f"tcp://127.0.0.1:{ports['commands']}")
        dealer.send_json({"command": "status"})
        answered = dealer.poll(10_000)
        waited = time.monotonic() - asked
        assert answered, f"the dealer got no answer within 10 s ({limit}, {nofile} descriptors)"
        assert cast(dict[str, Any], dealer.recv_json())["ok"]
        print(f"{limit} ({nofile} descriptors): the dealer answered after {waited:.2f} s")

        refused = wait_for(lambda: [line for line in lines()
                                    if line["event"].startswith("connections refused")],
                           "the refused handshakes to be logged")
        assert refused[0]["refused"]["commands"]
    finally:
        for attacker in attackers:
            attacker.close()
        context.destroy(linger=0)
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(15) == 0
    refused = [line for line in lines() if line["event"].startswith("connections refused")]
    total = sum(line["total"] for line in refused)
    # The idle connections are dropped at their handshake timeout (or refused when the
    # descriptors ran out) and closed by the test: hundreds of refusals, a handful of lines
    # (the first at once, then one per interval, and the rest as the daemon stops).
    assert total >= 100 and len(refused) <= 3, refused


def test_every_server_socket_times_handshakes_out(tmp_path: Path) -> None:
    from controller.stream.security import HANDSHAKE_TIMEOUT_MS
    from controller.settings.table_config import Stream
    from tests.support.daemon import Daemon

    path = config_file(tmp_path)
    context = zmq.Context()
    table = Daemon(tmp_path, path, context)
    stream = Stream(events=f"ipc://{tmp_path}/e", replay=f"ipc://{tmp_path}/r",
                    commands=f"ipc://{tmp_path}/c", cms_events=f"ipc://{tmp_path}/ce",
                    cms_replay=f"ipc://{tmp_path}/cr")
    loaded = table.daemon.loaded
    table.daemon.loaded = loaded.model_copy(update={"config": loaded.config.model_copy(
        update={"stream": stream})})
    table.daemon.start()
    try:
        assert table.daemon.publisher is not None and table.daemon.commands is not None
        sockets = [table.daemon.commands, *(socket for family in table.daemon.publisher._families
                                            for socket in (family.pub, family.router))]
        assert len(sockets) == 5
        assert {socket.getsockopt(zmq.HANDSHAKE_IVL) for socket in sockets} == \
            {HANDSHAKE_TIMEOUT_MS} and HANDSHAKE_TIMEOUT_MS <= 2000
    finally:
        table.daemon.close()
        context.term()

"""A daemon without devices driven from the test's thread (:class:`Daemon`, :func:`started`),
the config files it runs on, and the command line run as a process (:func:`cli`)."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator, Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import zmq

from controller.daemon.loop import TableDaemon
from controller.settings.table_config import Security, Stream, load_config, shipped_config_dir
from controller.stream import wire
from controller.stream.journal import journal_path


CREDENTIAL = "reload-test-credential"


def config_file(tmp_path: Path, rate: str = '"20%"', paytable: str = "paytable-1") -> Path:
    """A writable copy of the shipped Three Card Lowball config."""
    shutil.copy(shipped_config_dir() / "paytables.toml", tmp_path / "paytables.toml")
    text = (shipped_config_dir() / "three-card-lowball.toml").read_text()
    text = text.replace('contribution_rate = "20%"', f"contribution_rate = {rate}")
    text = text.replace('paytable = "paytable-1"', f'paytable = "{paytable}"')
    path = tmp_path / "table.toml"
    path.write_text(text)
    assert load_config(path).config.table.paytable == paytable
    return path


class Daemon:
    """A daemon without devices, driven from the test's thread (its loop is not running)."""

    def __init__(self, tmp_path: Path, path: Path, context: zmq.Context[Any]) -> None:
        loaded = load_config(path)
        stream = Stream(events=f"ipc://{tmp_path}/e", replay=f"ipc://{tmp_path}/r",
                        commands=f"ipc://{tmp_path}/c", table_events=f"ipc://{tmp_path}/te",
                        table_replay=f"ipc://{tmp_path}/tr")
        import hashlib
        security = Security(supervisor_credential_sha256=hashlib.sha256(
            CREDENTIAL.encode()).hexdigest())
        config = loaded.config.model_copy(update={"stream": stream, "security": security,
                                                  "devices": loaded.config.devices.model_copy(
                                                      update={"shoe": None, "spots": None,
                                                              "meter": None})})
        self.daemon = TableDaemon(loaded.model_copy(update={"config": config}),
                                  state_dir=tmp_path / "state", context=context)
        self.published: list[Any] = []
        self.daemon.observers.append(lambda records, events: self.published.extend(events))

    def ask(self, supervisor: bool = False, **command: Any) -> dict[str, Any]:
        if supervisor:
            command["credential"] = CREDENTIAL
        return self.daemon.command(json.dumps(command).encode())


@contextmanager
def started(tmp_path: Path, path: Path, context: zmq.Context[Any]) -> Iterator[Daemon]:
    """A :class:`Daemon` on the config at ``path``, started, and closed when the block ends
    (its ``context`` is the caller's, kept for a restart)."""
    table = Daemon(tmp_path, path, context)
    table.daemon.start()
    try:
        yield table
    finally:
        table.daemon.close()


ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "controller.cli.main", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def without_stream(text: str) -> str:
    """A shipped table config without its ``[stream]`` section (its last: the endpoints of a
    table PC, which a test replaces with its own)."""
    return text.split("\n[stream]\n")[0]


def run_config(tmp_path: Path, stream_dir: Path | None = None) -> Path:
    """The shipped Three Card Lowball config with ipc endpoints under ``stream_dir``."""
    path = config_file(tmp_path)
    where = stream_dir or tmp_path
    text = without_stream(path.read_text()) + (
        f'\n[stream]\nevents = "ipc://{where}/e"\nreplay = "ipc://{where}/r"\n'
        f'commands = "ipc://{where}/c"\n\n[security]\nsupervisor_credential_sha256 = '
        f'"{hashlib.sha256(CREDENTIAL.encode()).hexdigest()}"\n')
    path.write_text(text)
    return path


def play_a_hand(ask: Callable[..., dict[str, Any]]) -> None:
    """Open, wagers with the progressive on spot 1, lock (the meter takes 20): a hand in
    play."""
    assert ask(command="open")["ok"]
    for wager, amount in (("ante", 500), ("bonus", 500), ("progressive", 100)):
        assert ask(command="place", spot=1, wager=wager, amount=amount)["ok"]
    assert ask(command="lock")["ok"]


def play_a_voided_hand(ask: Callable[..., dict[str, Any]]) -> None:
    """:func:`play_a_hand`, voided by a supervisor, and the table closed."""
    play_a_hand(ask)
    assert ask(command="void", reason="test", supervisor=True)["ok"]
    assert ask(command="close")["ok"]


def tamper(state_dir: Path, seq: int, old: bytes, new: bytes) -> None:
    """What an attacker with the database does: drop the trigger, edit, put it back."""
    connection = sqlite3.connect(journal_path(state_dir), isolation_level=None)
    message = connection.execute("SELECT message FROM journal WHERE seq = ?",
                                 (seq,)).fetchone()[0]
    assert old in message
    connection.execute("DROP TRIGGER journal_no_update")
    connection.execute("UPDATE journal SET message = ? WHERE seq = ?",
                       (message.replace(old, new), seq))
    connection.execute("CREATE TRIGGER journal_no_update BEFORE UPDATE ON journal BEGIN "
                       "SELECT RAISE(ABORT, 'the journal is append-only: UPDATE refused'); END")
    connection.close()


def one_line_exit_2(result: subprocess.CompletedProcess[str], *says: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("lowball-table")]
    assert len(lines) == 1, result.stderr
    for text in says:
        assert text in lines[0], lines[0]


@contextmanager
def beating(tmp_path: Path) -> Iterator[tuple[Daemon, Callable[[], wire.Heartbeat | None]]]:
    """A started daemon on the shipped config, and ``beat``: the daemon made to send its
    heartbeat now, the heartbeat its stream carries (None if none came within 20 ms)."""
    with zmq.Context() as context, started(tmp_path, run_config(tmp_path), context) as table:
        sub = context.socket(zmq.SUB)
        sub.setsockopt(zmq.SUBSCRIBE, b"")
        sub.setsockopt(zmq.LINGER, 0)
        sub.connect(f"ipc://{tmp_path}/e")

        def beat() -> wire.Heartbeat | None:
            table.daemon._next_heartbeat = 0.0
            table.daemon._tick()
            while sub.poll(20):
                message = wire.decode(sub.recv_multipart()[1])
                if isinstance(message, wire.Heartbeat):
                    return message
            return None

        try:
            yield table, beat
        finally:
            sub.close(0)

"""Red team, start-up and the journal (issue 14): a tampered journal, two daemons on one state
directory, a meter reset by a game change, start-up failures that hide their cause.

The daemons here have no devices; the ones started as processes are the real command line
(``python -m controller.cli.main run``) on a config file written for the test.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest
import zmq

from controller.core.cards import parse_card
from controller.core.table import Table
from controller.core.table_events import JournalContinued, MeterChanged
from controller.settings.table_config import (
    build_table,
    default_config_path,
    game_settings,
    load_config,
)
from controller.stream import wire
from controller.stream.journal import Journal, journal_path
from controller.stream.table_commands import SUPERVISOR_ROLE, parse_command

from tests.support.daemon import CREDENTIAL, Daemon, config_file, started
from tests.support.daemon import (
    ROOT,
    cli,
    without_stream,
    run_config,
    play_a_hand,
    tamper,
    one_line_exit_2,
)
from tests.support.table import Driver
from tests.support.waits import wait_for


def files_digest(state_dir: Path, name: str = "journal.sqlite3") -> dict[str, str]:
    """The journal's bytes: the database and its write-ahead log (an empty log is no log;
    the ``-shm`` index is rebuilt by any reader)."""
    return {suffix: hashlib.sha256(path.read_bytes() if path.exists() else b"").hexdigest()
            for suffix in ("", "-wal") for path in [state_dir / f"{name}{suffix}"]}


def test_a_second_daemon_on_the_same_state_dir_exits_2_naming_the_holder(tmp_path: Path) -> None:
    path = run_config(tmp_path)
    with zmq.Context() as context, started(tmp_path, path, context) as first:
        assert first.ask(command="open")["ok"]
        before = files_digest(tmp_path / "state")
        second = cli("run", "--config", str(path), "--state-dir", str(tmp_path / "state"),
                     "--log-format", "json")
        assert second.returncode == 2, second.stderr
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in second.stderr, second.stderr
        assert f"another daemon (pid {os.getpid()})" in lines[0]
        assert files_digest(tmp_path / "state") == before       # no journal written
        # Nothing bound: the first daemon still owns its ipc endpoints and answers.
        client = context.socket(zmq.REQ)
        client.setsockopt(zmq.LINGER, 0)
        client.connect(f"ipc://{tmp_path}/c")
        client.send_json({"command": "status"})
        poller = zmq.Poller()
        poller.register(first.daemon.commands, zmq.POLLIN)
        assert poller.poll(5000), "the first daemon lost its command socket"
        first.daemon.handle_commands()
        assert client.poll(5000) and cast(dict[str, Any], client.recv_json())["ok"]
        client.close(0)
    # Once the first has stopped, the lock is free again.
    third = Daemon(tmp_path, path, zmq.Context.instance())
    third.daemon.close()


@pytest.mark.slow
def test_a_tampered_journal_holds_the_table_until_a_supervisor_quarantines_it(
        tmp_path: Path) -> None:
    path = run_config(tmp_path)
    state = tmp_path / "state"
    context = zmq.Context()
    table = Daemon(tmp_path, path, context)
    table.daemon.start()
    try:
        play_a_hand(table.ask)
        assert table.ask(command="void", reason="test", supervisor=True)["ok"]
        assert table.ask(command="place", spot=2, wager="ante", amount=700)["ok"]
    finally:
        table.daemon.close()
    with Journal.open_readonly(journal_path(state)) as journal:
        records = list(journal.records())
    meters = [r for r in records if r.type == "meter_changed"]
    placed = [r for r in records if r.type == "wager_placed" and b'"amount":700' in r.message]
    assert meters and placed and meters[-1].seq < placed[0].seq
    meter_changed: Any = wire.decode_event(meters[-1].message).data
    meter = meter_changed.amount
    bad = placed[0].seq
    tamper(state, bad, b'"amount":700', b'"amount":70000')
    evidence = files_digest(state)

    table = Daemon(tmp_path, path, context)
    table.daemon.start()
    try:
        assert table.daemon.journal_broken is not None
        assert table.daemon.journal_broken.seq == bad
        status = table.ask(command="status")
        assert status["ok"] and status["journal"]["broken_at"] == bad
        assert status["state"]["layout"] == {}                  # nothing rebuilt from it
        commands: list[dict[str, Any]] = [
            {"command": "open"}, {"command": "lock"},
            {"command": "void", "reason": "x", "credential": CREDENTIAL}]
        for command in commands:
            reply = table.ask(**command)
            assert reply["ok"] is False and f"broken at seq {bad}" in reply["error"]
        sub = context.socket(zmq.SUB)
        sub.setsockopt(zmq.SUBSCRIBE, b"")
        sub.setsockopt(zmq.LINGER, 0)
        sub.connect(f"ipc://{tmp_path}/e")

        def beat() -> Any:
            table.daemon._next_heartbeat = 0.0
            table.daemon._tick()
            return sub.poll(20) and wire.decode(sub.recv_multipart()[1])
        heartbeat = wait_for(beat, "a heartbeat")
        # The head it names is the last record before the break: those from it on are not
        # the table's (kept as evidence, never served).
        (before,) = [record for record in records if record.seq == bad - 1]
        assert heartbeat.journal_broken_at == bad and heartbeat.seq == bad - 1
        assert heartbeat.hash == before.hash
        sub.close(0)
        # The supervisor's way out refuses to run beside the daemon.
        refused = cli("journal", "quarantine", "--state-dir", str(state), "--reason", "x")
        assert refused.returncode == 2 and f"pid {os.getpid()}" in refused.stderr
    finally:
        table.daemon.close()
    assert files_digest(state) == evidence                      # never altered or appended

    done = cli("journal", "quarantine", "--state-dir", str(state), "--reason",
               "wager of seq altered, case 42", "--by", "sam")
    assert done.returncode == 0, done.stderr
    archived, copy = sorted((state / "quarantine").glob("*.sqlite3"), key=lambda p: len(p.name))
    assert f"broken-at-seq-{bad}" in archived.name
    assert copy.name == archived.name.replace(".sqlite3", ".copy.sqlite3")
    assert files_digest(archived.parent, archived.name) == evidence  # moved, unchanged
    with Journal.open_readonly(copy) as single_file, Journal.open_readonly(archived) as found:
        assert list(single_file.records()) == list(found.records())  # and a one-file copy
    with Journal.open_readonly(journal_path(state)) as journal:
        (row,) = journal.records()
    first = wire.to_event(wire.decode_event(row.message))
    assert first == JournalContinued(
        archived=f"quarantine/{archived.name}", archived_seq=records[-1].seq,
        archived_hash=records[-1].hash, first_bad_seq=bad, broken=first.broken, meter=meter,
        meter_from=f"meter_changed seq {meters[-1].seq}", verified_meter=meter,
        verified_meter_from=f"meter_changed seq {meters[-1].seq}", meter_held=True, by="sam",
        reason="wager of seq altered, case 42", hand_number=1, verified_hash=before.hash)
    assert "altered" in first.broken
    # the table's numbering goes on: the new journal's seqs and hand ids are new ones
    assert row.seq == records[-1].seq + 1
    again = cli("journal", "quarantine", "--state-dir", str(state), "--reason", "x")
    assert again.returncode == 2 and "sound" in again.stderr

    table = Daemon(tmp_path, path, context)
    table.daemon.start()
    try:
        assert table.daemon.journal_broken is None
        assert table.daemon.table.meter == meter
        assert not table.ask(command="open")["ok"]  # until a supervisor confirms the meter
        assert table.ask(command="adjust_meter", amount=0, reason="meter confirmed",
                         supervisor=True)["ok"]
        assert table.ask(command="open")["ok"] and table.daemon.table.meter == meter
    finally:
        table.daemon.close()
        context.term()


def test_a_deleted_trigger_is_a_broken_journal_too(tmp_path: Path) -> None:
    path = run_config(tmp_path)
    with zmq.Context() as context:
        with started(tmp_path, path, context) as table:
            assert table.ask(command="open")["ok"]
        connection = sqlite3.connect(journal_path(tmp_path / "state"), isolation_level=None)
        connection.execute("DROP TRIGGER journal_no_delete")
        connection.close()
        with started(tmp_path, path, context) as table:
            assert table.daemon.journal_broken is not None
            assert "journal_no_delete" in table.daemon.journal_broken.reason
            assert table.ask(command="close")["ok"] is False


def settle(table: Table, events: list[Any]) -> None:
    deck = iter("Kh Qd Jc Ts 9h 8d 7c 6s 5h Kc Qh Jd Tc 9s".split())
    count = 0
    while table.hand is not None:
        step = table.hand.next_step()
        if step.kind == "card":
            count += 1
            events += table.shoe_card(parse_card(next(deck)), count, "", count)
        else:
            events += table.command(parse_command({"command": "decide", "spot": step.seats[0],
                                                   "decision": "stand"}), "d", "dealer")


def test_a_game_change_and_back_keeps_the_meter(tmp_path: Path) -> None:
    three_card = load_config(default_config_path("three_card_lowball"))
    cali = load_config(default_config_path("cali_lowball"))
    d = Driver(loaded=three_card, actor="sam")
    table, events, do = d.table, d.events, d.do
    do(command="open")
    for wager, amount in (("ante", 1000), ("bonus", 1000), ("progressive", 100)):
        do(command="place", spot=1, wager=wager, amount=amount)
    do(command="lock")
    settle(table, events)
    assert table.meter == 500_020
    do(command="close")
    events += table.reload(game_settings(cali), "sam", SUPERVISOR_ROLE)
    events += table.reload(game_settings(three_card), "sam", SUPERVISOR_ROLE)
    opened = do(command="open")
    assert MeterChanged(500_020, "table opened") in opened
    assert table.meter == 500_020
    rebuilt = build_table(three_card)
    rebuilt.replay(events)
    assert rebuilt.meter == 500_020
    # Rebuilt while it runs the other game, too: the meter is carried, not reset.
    do(command="close")
    events += table.reload(game_settings(cali), "sam", SUPERVISOR_ROLE)
    rebuilt = build_table(cali)
    rebuilt.replay(events)
    assert rebuilt.meter == 500_020
    rebuilt.reload(game_settings(three_card), "sam", SUPERVISOR_ROLE)
    assert rebuilt.meter == 500_020


def test_only_a_supervisor_adjusts_the_meter_between_hands_with_a_reason() -> None:
    loaded = load_config(default_config_path("three_card_lowball"))
    d = Driver(loaded=loaded, actor="sam")
    table, events, do = d.table, d.events, d.do
    do(command="open")
    assert "needs the supervisor credential" in \
        do(command="adjust_meter", amount=1000, reason="x")[0].reason
    adjusted = do(role=SUPERVISOR_ROLE, command="adjust_meter", amount=-2500,
                  reason="sign showed the wrong figure")
    assert adjusted[-1] == MeterChanged(497_500, "adjusted by sam (-$25.00): sign showed the "
                                                 "wrong figure")
    assert "below 0" in do(role=SUPERVISOR_ROLE, command="adjust_meter", amount=-497_501,
                           reason="x")[0].reason
    for wager, amount in (("ante", 1000), ("bonus", 1000)):
        do(command="place", spot=1, wager=wager, amount=amount)
    do(command="lock")
    assert "only between hands" in do(role=SUPERVISOR_ROLE, command="adjust_meter",
                                      amount=1, reason="x")[0].reason
    rebuilt = build_table(loaded)
    rebuilt.replay(events)
    assert rebuilt.meter == table.meter == 497_500
    with pytest.raises(Exception, match="reason"):
        parse_command({"command": "adjust_meter", "amount": 5})
    with pytest.raises(Exception, match="amount"):
        parse_command({"command": "adjust_meter", "amount": 10**30, "reason": "x"})


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    path = config_file(tmp_path)
    context = zmq.Context()
    busy = context.socket(zmq.PULL)
    port = busy.bind_to_random_port("tcp://127.0.0.1")
    path.write_text(without_stream(path.read_text()) +
                    f'\n[stream]\ncommands = "tcp://127.0.0.1:{port}"\n'
                    f'events = "ipc://{tmp_path}/e"\nreplay = "ipc://{tmp_path}/r"\n')
    try:
        result = cli("run", "--config", str(path), "--state-dir", str(tmp_path / "state"))
    finally:
        busy.close(0)
        context.term()
    one_line_exit_2(result, f"cannot bind tcp://127.0.0.1:{port}", "Address already in use",
                    "another program")


def test_a_missing_curve_key_file_is_one_line(tmp_path: Path) -> None:
    path = config_file(tmp_path)
    path.write_text(path.read_text() + '\n[security]\nserver_secret_key_file = "nowhere.key"\n'
                    'authorized_keys_dir = "."\n')
    result = cli("run", "--config", str(path), "--state-dir", str(tmp_path / "state"))
    one_line_exit_2(result, "security.server_secret_key_file", "nowhere.key")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_state_dir_is_one_line(tmp_path: Path) -> None:
    path = run_config(tmp_path)
    state = tmp_path / "state"
    state.mkdir(mode=0o500)
    result = cli("run", "--config", str(path), "--state-dir", str(state / "sub"))
    one_line_exit_2(result, "cannot use the state directory", "Permission denied")


def test_a_state_dir_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    path = run_config(tmp_path)
    (tmp_path / "state").write_text("not a directory")
    result = cli("run", "--config", str(path), "--state-dir", str(tmp_path / "state"))
    one_line_exit_2(result, "cannot use the state directory", "the daemon's user needs")


def test_a_failed_start_with_devices_configured_shows_only_the_cause(tmp_path: Path) -> None:
    path = config_file(tmp_path)
    path.write_text(path.read_text() + '\n[security]\nserver_secret_key_file = "nowhere.key"\n'
                    'authorized_keys_dir = "."\n\n[devices.spots]\ndriver = "spots-ascii"\n'
                    'port = "/dev/null-spots"\n')
    result = cli("run", "--config", str(path), "--state-dir", str(tmp_path / "state"))
    one_line_exit_2(result, "nowhere.key")
    assert "cannot join thread" not in result.stderr


UNSHARE = shutil.which("unshare")


def in_a_full_file_system(tmp_path: Path, script: str,
                          fill_kib: int = 56) -> subprocess.CompletedProcess[str]:
    """Run ``script`` (sh) with ``tmp_path/full`` a 64 KiB tmpfs (a user and mount
    namespace: no privilege needed), ``fill_kib`` of it filled: writes get ENOSPC."""
    if UNSHARE is None:
        pytest.skip("needs unshare(1) to mount a tiny tmpfs")
    probe = subprocess.run([UNSHARE, "-rm", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"user namespaces unavailable: {probe.stderr.decode().strip()}")
    (tmp_path / "full").mkdir()
    return subprocess.run(
        [UNSHARE, "-rm", "sh", "-c",
         f"mount -t tmpfs -o size=64k none {tmp_path}/full && "
         f"dd if=/dev/zero of={tmp_path}/full/filler bs=1k count={fill_kib} 2>/dev/null; "
         f"{script}"],
        cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_disk_full_at_start_says_disk_full(tmp_path: Path) -> None:
    path = run_config(tmp_path)
    result = in_a_full_file_system(
        tmp_path, f"{sys.executable} -m controller.cli.main run --config {path} "
                  f"--state-dir {tmp_path}/full/state")
    one_line_exit_2(result, "disk full", "free space there")


def test_disk_full_on_append_says_disk_full_not_cannot_rollback(tmp_path: Path) -> None:
    script = tmp_path / "append.py"
    script.write_text(f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
from controller.stream.journal import Journal, JournalError
from controller.core.table_events import TableClosed
journal = Journal({str(tmp_path)!r} + "/full/journal.sqlite3")
journal.append(TableClosed("x"), table_id="T-1", hand_id=None)
try:
    with open({str(tmp_path)!r} + "/full/more", "wb") as filler:  # all but the last bytes
        while True:
            filler.write(bytes(1024))
            filler.flush()
except OSError:
    pass
try:
    for _ in range(1000):
        journal.append(TableClosed("x" * 2000), table_id="T-1", hand_id=None)
except JournalError as error:
    print(error)
""")
    result = in_a_full_file_system(tmp_path, f"{sys.executable} {script}", fill_kib=0)
    assert "disk full" in result.stdout, (result.stdout, result.stderr)
    assert "cannot rollback" not in result.stdout


def test_checking_a_long_journal_extends_systemds_start_timeout(tmp_path: Path) -> None:
    import socket as sockets
    import tempfile

    from controller.daemon.loop import TableDaemon
    from controller.daemon.systemd_notify import Notifier

    path = run_config(tmp_path)
    context = zmq.Context()
    table = Daemon(tmp_path, path, context)
    table.daemon.start()
    assert table.ask(command="open")["ok"]
    table.daemon.close()
    folder = tempfile.mkdtemp(prefix="lbt-notify-")
    listener = sockets.socket(sockets.AF_UNIX, sockets.SOCK_DGRAM)
    listener.bind(f"{folder}/notify")
    try:
        daemon = TableDaemon(table.daemon.loaded, state_dir=tmp_path / "state", context=context,
                             notifier=Notifier.from_environment(
                                 {"NOTIFY_SOCKET": f"{folder}/notify"}))
        daemon.start()
        daemon.close()
        listener.settimeout(5)
        first, second = listener.recv(4096), listener.recv(4096)
        assert first.startswith(b"EXTEND_TIMEOUT_USEC=30000000\nSTATUS=checking the journal: "
                                b"seq 1 of ")
        assert second.startswith(b"READY=1")
    finally:
        listener.close()
        shutil.rmtree(folder, ignore_errors=True)
        context.term()


@pytest.mark.slow
def test_a_last_record_that_does_not_parse_is_a_broken_journal_not_a_crash(tmp_path: Path) -> None:
    path = run_config(tmp_path)
    state = tmp_path / "state"
    context = zmq.Context()
    table = Daemon(tmp_path, path, context)
    table.daemon.start()
    assert table.ask(command="open")["ok"]
    last = table.daemon.journal.last_seq
    table.daemon.close()
    connection = sqlite3.connect(journal_path(state), isolation_level=None)
    connection.execute("DROP TRIGGER journal_no_update")
    connection.execute("UPDATE journal SET message = x'7b7d' WHERE seq = ?", (last,))
    connection.execute("CREATE TRIGGER journal_no_update BEFORE UPDATE ON journal BEGIN "
                       "SELECT RAISE(ABORT, 'the journal is append-only: UPDATE refused'); END")
    connection.close()
    verify = cli("journal", "verify", "--state-dir", str(state))
    assert verify.returncode == 1 and f"BROKEN at seq {last}" in verify.stdout, verify
    table = Daemon(tmp_path, path, context)
    table.daemon.start()
    try:
        assert table.daemon.journal_broken is not None
        assert table.daemon.journal_broken.seq == last
    finally:
        table.daemon.close()
    done = cli("journal", "quarantine", "--state-dir", str(state), "--reason", "x" * 201)
    assert done.returncode == 2 and "1 to 200 characters" in done.stderr
    done = cli("journal", "quarantine", "--state-dir", str(state), "--reason", "last record")
    assert done.returncode == 0, done.stderr
    with Journal.open_readonly(journal_path(state)) as journal:
        (first,) = [wire.to_event(wire.decode_event(r.message)) for r in journal.records()]
        assert journal.table_id == "TCL-01"
    assert first.first_bad_seq == last and first.meter == 500_000
    context.term()

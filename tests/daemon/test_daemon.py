"""End to end: the real daemon over the simulated shoe, spot controller and meter on ptys,
with a real ZeroMQ subscriber and command client.

Scenario files played through the daemon settle exactly as ``lowball-table replay`` says; a
stop mid-hand resumes at the same step; bad commands are answered, journaled and published.
Waits are polls with a deadline: the deadline only bounds a failure.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from pathlib import Path

import pytest
import structlog
import structlog.testing

from controller.core.vocabulary import SpotLamp
from controller.settings.scenario import load_scenario, replay, settlement_report
from controller.settings.table_config import default_config_path, load_config
from controller.stream.journal import Durability, Journal, journal_path
from drivers.spots import Lamp

from tests.support.rig import CREDENTIAL, RigFactory, rig_factory, scenarios_for, played_by_p_spot
from tests.support.waits import DEADLINE_S, wait_for


@pytest.mark.parametrize("game", ["cali_lowball", "three_card_lowball"])
def test_scenarios_through_the_daemon_settle_as_replay_does(rig_factory: RigFactory,
                                                            game: str) -> None:
    rig = rig_factory(game)
    assert rig.ask({"command": "open"})["ok"]
    config = load_config(default_config_path(game))
    for path in scenarios_for(game, 4):
        scenario = load_scenario(path)
        first = len(rig.events("wager_settled"))
        rig.play(scenario)
        wait_for(lambda: rig.events("hand_settled"), "the settlement")
        published = [e.data.model_dump() for e in rig.events("wager_settled")[first:]]
        expected = settlement_report(replay(scenario, config))["settlements"]
        assert published == played_by_p_spot(expected), path.name
    seqs = [e.seq for e in rig.received]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))      # gapless
    lamps = rig.spots.device.lamps
    assert any(str(lamp.color) in ("GREEN", "OFF", "AMBER", "WHITE") for lamp in lamps.values())
    rig.stop_daemon()
    report = Journal(journal_path(rig.tmp_path / "state")).verify()
    assert report.ok and report.records_checked == seqs[-1]


def test_a_stop_mid_hand_resumes_at_the_same_step(rig_factory: RigFactory) -> None:
    rig = rig_factory("cali_lowball")
    path = scenarios_for("cali_lowball", 1)[0]
    scenario = load_scenario(path)
    rig.ask({"command": "open"})
    rig.start_hand(scenario)
    rig.deal_one()
    rig.deal_one()
    before = rig.status()
    last_seq = rig.daemon.journal.last_seq
    rig.stop_daemon()
    rig.start_daemon()
    after = rig.status()
    assert after["state"] == "PAUSED" and after["fault"]["code"] == "controller_restart"
    assert after["hand"]["cards"] == before["hand"]["cards"]
    assert rig.daemon.journal.last_seq > last_seq            # seq continues, no reuse
    assert rig.ask({"command": "continue"})["ok"]
    decisions = {int(spot): list(texts) for spot, texts in scenario.decisions.items()}
    rig.finish_hand(decisions)
    settled = [e.data.model_dump() for e in rig.events("wager_settled")]
    config = load_config(default_config_path("cali_lowball"))
    # the players given before the stop still own the hand's settlements after it
    assert settled == played_by_p_spot(settlement_report(replay(scenario, config))["settlements"])


@pytest.mark.parametrize("request_bytes, says", [
    (b"{not json", "not valid JSON"),
    (b"[1, 2]", "a command is a JSON object"),
    (json.dumps({"command": "fly"}).encode(), "unknown command 'fly'"),
    (json.dumps({"command": "place", "spot": 9, "wager": "ante", "amount": 5}).encode(),
     "spot: Input should be less than or equal to 7"),
    (json.dumps({"command": "place", "spot": 1, "wager": "ante", "amount": 5.5}).encode(),
     "amount (in cents): a whole number of cents"),
    (json.dumps({"command": "lock", "extra": 1}).encode(), "extra: unknown key"),
    (json.dumps({"command": "void", "reason": "x", "credential": "wrong"}).encode(),
     "the supervisor credential is not valid"),
    (json.dumps({"command": "void", "reason": "x"}).encode(), "needs the supervisor credential"),
])
def test_bad_commands_are_answered_journaled_and_published(rig_factory: RigFactory,
                                                           request_bytes: bytes, says: str) -> None:
    rig = rig_factory("cali_lowball")
    seq = rig.daemon.journal.last_seq
    reply = rig.ask(request_bytes)
    assert reply["ok"] is False and says in reply["error"]
    assert reply["seq"] > seq                      # (a device's connect may come first)
    refused = wait_for(lambda: rig.events("command_refused"), "the refusal on the stream")
    assert says in refused[-1].data.reason and refused[-1].seq == reply["seq"]


def test_a_stop_request_wakes_the_main_loop_at_once(rig_factory: RigFactory) -> None:
    """SIGTERM's handler calls request_stop: the loop must not sleep on to its next deadline
    (here the heartbeat and the chain check, made an hour away by a clock that stands
    still)."""
    rig = rig_factory("cali_lowball")
    daemon, thread = rig.daemon, rig.thread
    now = time.monotonic()
    daemon.clock = lambda: now
    daemon._next_heartbeat = daemon._next_chain_check = now + 3600
    long_wait = threading.Event()
    poll_timeout = daemon._poll_timeout

    def spy() -> int:
        timeout = poll_timeout()
        if timeout > 3_000_000:
            long_wait.set()
        return timeout

    setattr(daemon, "_poll_timeout", spy)      # the loop calls the spy in its place
    # The loop runs meanwhile: a heartbeat it was sending as the clock stopped sets the next
    # one a second on, over ours. Set it again until the loop takes up the hour-long wait.
    deadline = time.monotonic() + DEADLINE_S
    while not long_wait.wait(0.05):
        assert time.monotonic() < deadline, "the loop never took up the hour-long wait"
        daemon._next_heartbeat = daemon._next_chain_check = now + 3600
        daemon.devices.wake_loop()
    daemon.request_stop()
    thread.join(DEADLINE_S)
    assert not thread.is_alive(), "the main loop slept through the stop request"


@pytest.mark.parametrize("durability, warned", [("full", False), ("batched", True)])
def test_an_unsynced_journal_is_announced(rig_factory: RigFactory, durability: Durability,
                                          warned: bool) -> None:
    with structlog.testing.capture_logs() as logs:
        rig = rig_factory("cali_lowball", durability=durability)
    assert rig.daemon.journal.durability == durability
    warnings = [line for line in logs if line["log_level"] == "warning"
                and "not synced" in line["event"]]
    assert bool(warnings) is warned


def test_ready_and_stopping_are_sent_to_systemd(tmp_path: Path, rig_factory: RigFactory) -> None:
    import socket as sockets

    listener = sockets.socket(sockets.AF_UNIX, sockets.SOCK_DGRAM)
    path = str(tmp_path / "notify")
    listener.bind(path)
    listener.settimeout(DEADLINE_S)
    rig = rig_factory("three_card_lowball", notify_socket=path)
    assert listener.recv(4096).startswith(b"READY=1")
    rig.stop_daemon()
    assert listener.recv(4096) == b"STOPPING=1"
    rig.start_daemon()   # the fixture closes it
    listener.close()


def test_a_supervisor_verifies_with_the_credential(rig_factory: RigFactory) -> None:
    rig = rig_factory("cali_lowball")
    reply = rig.ask({"command": "verify_jackpot"}, supervisor=True)
    assert reply == {"ok": False, "error": "no jackpot awaits verification",
                     "seq": rig.daemon.journal.last_seq}
    assert hashlib.sha256(CREDENTIAL.encode()).hexdigest() == \
        rig.daemon.loaded.config.security.supervisor_credential_sha256


def test_run_refuses_an_unknown_durability_by_name(capsys: pytest.CaptureFixture[str],
                                                   tmp_path: Path) -> None:
    from controller.cli.main import main

    with pytest.raises(SystemExit) as exit_:
        main(["run", "--config", str(tmp_path / "table.toml"), "--durability", "sometimes"])
    assert exit_.value.code == 2
    error = capsys.readouterr().err
    assert "--durability" in error and "'sometimes'" in error and "full" in error
    assert not (tmp_path / "state").exists()                   # nothing was started


def test_a_lost_device_is_healthy_but_an_ended_device_thread_is_not(
        rig_factory: RigFactory) -> None:
    """The systemd watchdog is pinged only while healthy() holds. An unplugged shoe keeps its
    driver trying (a restart would not bring it back); a device thread that has ended is a
    bug that a restart does cure, so the ping is withheld and the log names the thread."""
    rig = rig_factory("cali_lowball")
    daemon = rig.daemon
    assert daemon.healthy()
    rig.shoe.disconnect()
    shoe = daemon.devices.shoe
    assert shoe is not None and daemon.devices.spots is not None
    wait_for(lambda: not shoe.connected, "the shoe to be lost")
    assert daemon.healthy()
    with structlog.testing.capture_logs() as logs:
        daemon.devices.spots.stop()                  # as if a bug had ended its thread
        assert not daemon.healthy()
        assert not daemon.healthy()
    ended = [line for line in logs if line["event"].startswith("device thread ended")]
    assert [line["threads"] for line in ended] == [["spots driver"]]   # logged once


def test_a_lamp_command_that_fails_unexpectedly_leaves_the_lamps_working(
        rig_factory: RigFactory) -> None:
    from drivers.spots import WAGER_ACCEPTED

    rig = rig_factory("cali_lowball")
    spots, devices = rig.spots.device, rig.daemon.devices
    assert devices.spots is not None
    set_lamp, calls = devices.spots.set_lamp, []

    def failing_once(spot: int, lamp: Lamp) -> None:
        calls.append(spot)
        if len(calls) == 1:
            raise RuntimeError("a bug in a lamp command")
        set_lamp(spot, lamp)

    setattr(devices.spots, "set_lamp", failing_once)     # the lamp worker calls it in its place
    with structlog.testing.capture_logs() as logs:
        devices.set_lamp(3, SpotLamp.ATTRACT)
        wait_for(lambda: calls, "the first lamp command")
        devices.set_lamp(4, SpotLamp.WAGER_ACCEPTED)
        wait_for(lambda: spots.lamps[4] == WAGER_ACCEPTED, "spot 4's lamp")
    assert rig.daemon.healthy()
    assert any(line["event"] == "lamp command failed unexpectedly" and line["spot"] == 3
               for line in logs)

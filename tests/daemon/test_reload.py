"""Config reload between hands only, the journaled config fingerprint, and restarts under a
changed config file: a hand in play is never rebuilt under other settings, the meter comes
back from the journal, and a replay reaches the same state as the table that ran."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import zmq

from controller.core.table import Table
from controller.core.table_events import (
    CommandAccepted,
    CommandRefused,
    ConfigApplied,
    MeterChanged,
)
from controller.daemon.loop import ConfigMismatch
from controller.settings.table_config import build_table, game_settings, load_config
from controller.stream import wire
from controller.stream.journal import Journal, journal_path
from controller.stream.table_commands import SUPERVISOR_ROLE, parse_command

from tests.support.daemon import config_file, Daemon, started


def play_to_lock(table: Table, events: list[Any]) -> None:
    for spot in (1, 2):
        for wager, amount in (("ante", 500), ("bonus", 500), ("progressive", 100)):
            events += table.command(parse_command({"command": "place", "spot": spot,
                                                   "wager": wager, "amount": amount}),
                                    "dealer", "dealer")
    events += table.command(parse_command({"command": "lock"}), "dealer", "dealer")


def test_regulated_settings_change_only_between_hands_and_replay_agrees(tmp_path: Path) -> None:
    before = load_config(config_file(tmp_path))
    (tmp_path / "new").mkdir()
    after = load_config(config_file(tmp_path / "new", rate='"10%"', paytable="paytable-2"))
    table, events = build_table(before), []
    events += table.command(parse_command({"command": "open"}), "dealer", "dealer")
    opened = [e for e in events if type(e) is ConfigApplied]
    assert opened and opened[0].fingerprint == game_settings(before).fingerprint

    play_to_lock(table, events)
    refused = table.reload(game_settings(after), "sam", SUPERVISOR_ROLE)
    events += refused
    assert type(refused[0]) is CommandRefused
    assert "paytable, paytable_lines, progressive.contribution_rate cannot change while " \
           "hand TCL-01-000001 is in play (LOCKED): reload between hands" == refused[0].reason
    dealer: list[Any] = table.reload(game_settings(after), "dan", "dealer")
    assert "needs the supervisor credential" in dealer[0].reason
    events += dealer

    events += table.command(parse_command({"command": "void", "reason": "test"}), "sam",
                            SUPERVISOR_ROLE)
    granted: list[Any] = table.reload(game_settings(after), "sam", SUPERVISOR_ROLE)
    events += granted
    assert [type(e) for e in granted] == [CommandAccepted, ConfigApplied]
    assert granted[1].changed == ("paytable", "paytable_lines",
                                  "progressive.contribution_rate")
    assert table.setup.paytable_name == "paytable-2" and table.fingerprint == \
        game_settings(after).fingerprint
    meter = table.meter
    play_to_lock(table, events)
    assert table.meter == meter + 2 * 10           # 10% of two 100-cent wagers

    rebuilt = build_table(before)                        # the old file: the journal decides
    rebuilt.replay([wire.to_event(wire.decode_event(wire.encode(
        event, table_id="TCL-01", seq=seq, ts=__import__("datetime").datetime.now(
            __import__("datetime").UTC), hand_id=None))) for seq, event in enumerate(events, 1)])
    assert rebuilt.snapshot() == table.snapshot()
    assert rebuilt.fingerprint == table.fingerprint and rebuilt.meter == table.meter


def journaled(tmp_path: Path) -> list[Any]:
    with Journal.open_readonly(journal_path(tmp_path / "state")) as journal:
        return [wire.to_event(wire.decode_event(r.message)) for r in journal.records()]


def test_reload_through_the_daemon_and_restarts_under_a_changed_file(tmp_path: Path) -> None:
    path = config_file(tmp_path)
    with zmq.Context() as context:
        with started(tmp_path, path, context) as table:
            assert table.ask(command="open")["ok"]
            for spot in (1, 2):
                for wager, amount in (("ante", 500), ("bonus", 500), ("progressive", 100)):
                    assert table.ask(command="place", spot=spot, wager=wager,
                                     amount=amount)["ok"]
            assert table.ask(command="lock")["ok"]
            path.write_text(path.read_text().replace('contribution_rate = "20%"',
                                                     'contribution_rate = "50%"'))
            refused = table.ask(command="reload", supervisor=True)
            assert refused["ok"] is False and "progressive.contribution_rate cannot change" \
                in refused["error"]
            no_credential = table.ask(command="reload")
            assert "needs the supervisor credential" in no_credential["error"]
            assert [type(e) for e in table.published[-2:]] == [CommandRefused, CommandRefused]

        # Restart with the hand in play and the changed file: refused, naming what changed.
        table = Daemon(tmp_path, path, context)
        with pytest.raises(ConfigMismatch, match=r"hand TCL-01-000001 is in play .* changed "
                                                 r"progressive.contribution_rate"):
            table.daemon.start()
        table.daemon.close()

        # Restored: the hand resumes; void it, then reload the change between hands.
        path.write_text(path.read_text().replace('contribution_rate = "50%"',
                                                 'contribution_rate = "20%"'))
        with started(tmp_path, path, context) as table:
            assert table.daemon.table.state == "PAUSED"
            assert table.ask(command="void", reason="config test", supervisor=True)["ok"]
            path.write_text(path.read_text().replace('contribution_rate = "20%"',
                                                     'contribution_rate = "50%"'))
            assert table.ask(command="reload", supervisor=True)["ok"]
            applied = [e for e in table.published if type(e) is ConfigApplied][-1]
            assert applied.changed == ("progressive.contribution_rate",) and \
                applied.reason == "reloaded by dealer"
            meter = table.daemon.table.meter

        # Between hands a changed file applies at start, journaled; the meter is the journal's.
        path.write_text(path.read_text().replace('contribution_rate = "50%"',
                                                 'contribution_rate = "25%"'))
        with started(tmp_path, path, context) as table:
            started_with = [e for e in table.published if type(e) is ConfigApplied]
            assert started_with and started_with[0].changed == ("progressive.contribution_rate",)
            assert started_with[0].reason == "the daemon started with a changed config file"
            last_meter = [e for e in journaled(tmp_path) if type(e) is MeterChanged][-1].amount
            assert table.daemon.table.meter == last_meter == meter

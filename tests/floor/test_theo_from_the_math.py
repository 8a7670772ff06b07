"""Theoretical win from the exact game math of each hand's settings in force, on a real
PostgreSQL.

Origin: a pit manager's walk-through found theo ``-`` for every player, although the game math
gives the exact house edge of the paytable in force in half a second."""

from __future__ import annotations

import io
import json
import threading
from datetime import datetime, timezone
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import psycopg

from controller.core.table_settings import GameSettings
from controller.floor import house_math, store
from controller.floor.config import FloorConfig
from controller.floor.report import print_report
from controller.par import approval, wager_edges
from controller.settings.table_config import default_config_path, game_settings, load_config
from tests.support.processes import wait_until
from tests.support.theo import TCL, config_applied, hand, settings_text, store_events

def theo(connection: psycopg.Connection, hand_id: str) -> tuple[Any, Any]:
    row = connection.execute("SELECT theoretical_win, theo_missing FROM floor_player_hands "
                             "WHERE hand_id = %s", (hand_id,)).fetchone()
    assert row is not None
    return row[0], row[1]


def exactly(value: Decimal, expected: Fraction) -> bool:
    """The stored theo against the exact figure: within 10^-20 of a cent (30 decimals kept)."""
    return abs(Fraction(value) - expected) < Fraction(1, 10**20)


def test_theo_is_each_wager_times_its_exact_edge_under_the_settings_in_force(
        database: str) -> None:
    """Three Card Lowball's seeded paytables need no counting: each settings' edges are kept
    as the floor stores them, and a hand takes the settings journaled last before it."""
    wagers, nets = {"ante": 1000, "bonus": 1000, "progressive": 100}, \
        {"ante": -1000, "bonus": -1000, "progressive": -100}
    with store.connect(database) as connection:
        store.migrate(connection)
        seq = store_events(connection, "TCL-01", [
            config_applied(settings_text(TCL, "paytable-1")),
            *hand("TCL-01", 1, "paytable-1", "P-1", wagers, nets)])
        seq = store_events(connection, "TCL-01", [
            config_applied(settings_text(TCL, "paytable-2")),
            *hand("TCL-01", 2, "paytable-2", "P-1", wagers, nets)], seq, minute=1)
        first, second = theo(connection, "TCL-01-000001"), theo(connection, "TCL-01-000002")
        states = connection.execute("SELECT state FROM floor_house_math").fetchall()
    assert states == [("computed",), ("computed",)]
    for (value, missing), paytable in ((first, "paytable-1"), (second, "paytable-2")):
        edges = wager_edges.recorded_edges(house_math.setup(
            json.loads(settings_text(TCL, paytable)), paytable))
        assert edges is not None
        expected = sum((amount * edges[wager] for wager, amount in wagers.items()), Fraction(0))
        assert missing is None and exactly(value, expected)
    assert first[0] != second[0]
    key = approval.lines_key(wager_edges.three_card_bonus(house_math.setup(
        json.loads(settings_text(TCL, "paytable-1")), "paytable-1")))
    assert edges_of(database, "paytable-1")["ante"] == approval.RECORDED[key]


def edges_of(database: str, paytable: str) -> dict[str, Fraction]:
    with psycopg.connect(database) as connection:
        return {wager: Fraction(fraction) for wager, fraction in connection.execute(
            """SELECT e.wager, e.fraction FROM floor_house_math_edges e
                 JOIN floor_house_math m USING (fingerprint) WHERE m.paytable = %s""",
            (paytable,)).fetchall()}


def test_the_operators_edge_wins_and_the_report_flags_its_difference(database: str) -> None:
    """floor.toml's figure for a paytable is what theo uses; the report shows the math's
    beside it and says they differ."""
    config = FloorConfig.model_validate({
        "database": {"dsn": database},
        "tables": [{"id": "TCL-01", "cms_events": "ipc:///tmp/e", "cms_replay": "ipc:///tmp/r"}],
        "paytables": {"paytable-1": {"house_edge": "2%"}}})
    with store.connect(database) as connection:
        store.migrate(connection)
        store.configure(connection, config)
        store_events(connection, "TCL-01", [
            config_applied(settings_text(TCL, "paytable-1")),
            *hand("TCL-01", 1, "paytable-1", "P-1", {"ante": 1000, "bonus": 1000},
                  {"ante": 1000, "bonus": 2000})])
        value, missing = theo(connection, "TCL-01-000001")
        out = io.StringIO()
        print_report(connection, out)
    assert value == Decimal("40.00") and missing is None
    report = out.getvalue()
    assert "$0.40" in report
    assert "floor.toml differs from the math by +1.0364 points" in report, report
    assert "0.9636 %" in report


def test_settings_the_floor_has_not_computed_show_computing_then_the_exact_theo(
        database: str) -> None:
    """Cali LowBall's math is computed, not recorded: until the floor service's worker has
    done it (in a process of its own) the report says "computing", never a guess; then theo is
    the exact figure, computed once for every table with the same settings."""
    cali = settings_text("cali_lowball")
    with store.connect(database) as connection:
        store.migrate(connection)
        seq = store_events(connection, "CALI-01", [
            config_applied(cali),
            *hand("CALI-01", 1, "example", "P-9", {"ante": 1000, "xtra_bonus": 1000,
                                                   "raise": 3000, "lowdown_bonus": 500},
                  {"ante": 1000, "xtra_bonus": 0, "raise": 3000, "lowdown_bonus": -500},
                  game="cali_lowball")])
        store_events(connection, "CALI-02", [config_applied(cali)], minute=2)
        out = io.StringIO()
        print_report(connection, out)
        assert theo(connection, "CALI-01-000001") == (None, "computing")
    report = out.getvalue()
    assert "computing" in report and "theo \"computing\"" in report

    stopping = threading.Event()
    worker = house_math.HouseMathWorker(database, stopping)
    worker.start()
    try:
        wait_until(lambda: _state(database) == "computed", "the Cali LowBall math computed",
                   timeout=120)
    finally:
        stopping.set()
        worker.wake.set()
        worker.thread.join(30)
    assert worker.computed == 1
    edges = wager_edges.exact_edges(house_math.setup(json.loads(cali), "example"))
    with store.connect(database) as connection:
        value, missing = theo(connection, "CALI-01-000001")
        assert house_math.compute_pending(connection) == 0
        assert connection.execute("SELECT count(*) FROM floor_house_math").fetchone() == (1,)
    assert missing is None
    assert exactly(value, 5000 * edges["ante"] + 500 * edges["lowdown_bonus"])
    assert edges["ante"] == edges["raise"]


def _state(database: str) -> str | None:
    with psycopg.connect(database) as connection:
        row = connection.execute("SELECT state FROM floor_house_math").fetchone()
    return None if row is None else str(row[0])


def test_settings_the_math_cannot_read_give_theo_a_stated_reason(database: str) -> None:
    """A hostile table's settings: theo is "-" with the reason, never blank nor a guess; and a
    hand with no settings journaled before it says so."""
    with store.connect(database) as connection:
        store.migrate(connection)
        seq = store_events(connection, "T-9", [
            *hand("T-9", 1, "paytable-1", "P-1", {"ante": 500}, {"ante": -500})])
        store_events(connection, "T-9", [
            config_applied("{not json"),
            *hand("T-9", 2, "paytable-1", "P-1", {"ante": 500}, {"ante": -500})], seq)
        first, second = theo(connection, "T-9-000001"), theo(connection, "T-9-000002")
        out = io.StringIO()
        print_report(connection, out)
    assert first == (None, "no settings journaled before the hand")
    assert second == (None, "the journaled settings are not JSON")
    hostile = json.loads(settings_text(TCL, "paytable-1"))
    hostile["rules"]["extra"] = "NaN-to-be"
    nan = json.dumps(hostile).replace('"NaN-to-be"', "NaN")     # JSON no table writes
    assert house_math.math_inputs(nan) == \
        "the journaled settings cannot be read: ValueError"
    deep = house_math.math_inputs("[" * 100_000 + "]" * 100_000)
    assert isinstance(deep, str) and deep.startswith("the journaled settings")
    assert "theo \"-\" at T-9: no settings journaled before the hand" in out.getvalue()


def test_settings_stored_before_the_migration_are_fingerprinted_by_it(
        database: str, tmp_path: Path) -> None:
    """A floor that stored settings under schema 8 gets their edges at migration 9."""
    from controller.floor.migrations import MIGRATIONS

    with store.connect(database) as connection:
        store.migrate(connection, MIGRATIONS[:8])
        store_events(connection, "TCL-01", [
            config_applied(settings_text(TCL, "paytable-3")),
            *hand("TCL-01", 1, "paytable-3", "P-1", {"ante": 1000}, {"ante": -1000})])
        assert store.migrate(connection) == [9]
        value, missing = theo(connection, "TCL-01-000001")
    assert missing is None and value is not None and value > 0

"""The floor's dashboard in Chromium, on the floor's real PostgreSQL with several tables.

Origin: issue 32, a pit manager's walk-through: no dashboard in a browser for the floor."""

from __future__ import annotations

import json
import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from controller.floor import pool, store
from controller.floor.config import FloorConfig
from controller.floor.dashboard import Dashboard, Floor
from tests.support.theo import config_applied, hand, settings_text

if TYPE_CHECKING:
    from playwright.sync_api import Browser

SCREENSHOTS = os.environ.get("LOWBALL_SCREENSHOTS")
TABLES = ["TCL-01", "TCL-02", "CALI-01"]


def store_now(connection: Any, table_id: str, events: list[tuple[str, str | None, Any]],
              first_seq: int = 1) -> int:
    """The events as journaled a few minutes ago, a second apart."""
    start = datetime.now(timezone.utc) - timedelta(minutes=5)
    rows = []
    for offset, (kind, hand_id, data) in enumerate(events):
        seq, ts = first_seq + offset, start + timedelta(seconds=offset)
        rows.append(store.Row(table_id, seq, kind, hand_id, ts, json.dumps(
            {"schema_version": 3, "table_id": table_id, "seq": seq, "ts": ts.isoformat(),
             "hand_id": hand_id, "type": kind, "data": data})))
    store.store_batch(connection, rows, {table_id: first_seq + len(events) - 1})
    return first_seq + len(events)


@pytest.fixture
def dashboard(database: str) -> Iterator[str]:
    config = FloorConfig.model_validate({
        "database": {"dsn": database},
        "tables": [{"id": table, "cms_events": f"ipc:///tmp/{table}-e",
                    "cms_replay": f"ipc:///tmp/{table}-r"} for table in TABLES],
        "pools": [{"id": "LINK-1", "tables": ["TCL-01", "TCL-02"], "seed": 500000}]})
    with store.connect(database) as connection:
        store.migrate(connection)
        store.configure(connection, config)
        pool.configure(connection, config.pools)
        store_now(connection, "TCL-01", [
            config_applied(settings_text("three_card_lowball", "paytable-1")),
            *hand("TCL-01", 1, "paytable-1", "CARD-0042", {"ante": 2500, "bonus": 2500},
                  {"ante": -2500, "bonus": -2500}),
            *hand("TCL-01", 2, "paytable-1", "CARD-7781", {"ante": 1000, "bonus": 1000},
                  {"ante": 1000, "bonus": 3000})])
        store_now(connection, "TCL-02", [
            config_applied(settings_text("three_card_lowball", "paytable-2")),
            ("device_status", None, {"device": "shoe", "status": "lost", "detail": ""})])
        store_now(connection, "CALI-01", [
            config_applied(settings_text("cali_lowball")),
            *hand("CALI-01", 1, "example", "CARD-9", {"ante": 1000, "xtra_bonus": 1000},
                  {"ante": -1000, "xtra_bonus": -1000}, game="cali_lowball")])
    served = Dashboard(Floor(database, TABLES, "America/Los_Angeles"), "127.0.0.1", 0)
    served.start()
    try:
        yield served.url
    finally:
        served.stop()


def test_the_floor_dashboard_shows_every_table_and_pool_in_dollars(
        dashboard: str, browser: Browser) -> None:
    for width, height in ((1024, 768), (1920, 1080)):
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        page.goto(dashboard)
        rows = {row.split("\t")[0]: row.split("\t")
                for row in page.locator("table").first.inner_text().splitlines()[1:]}
        assert list(rows) == TABLES
        tcl = rows["TCL-01"]
        assert tcl[1:4] == ["Three Card Lowball", "paytable-1", "between hands"]
        assert tcl[4:9] == ["2", "2", "$70.00", "$10.00", "14.29 %"]
        assert tcl[9] == "$0.67"        # $70.00 x 0.9636 %: the exact edge of paytable-1
        assert rows["TCL-02"][10] == "shoe"
        assert rows["CALI-01"][9] == "computing"
        pools = page.locator("table").nth(1).inner_text()
        assert "LINK-1\t$5,000.00\topen\tnone yet" in pools
        if SCREENSHOTS:
            page.screenshot(path=str(Path(SCREENSHOTS) / f"floor-dashboard-{width}.png"),
                            full_page=True)
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= width, f"the page is {wide} pixels wide, wider than {width}"
        page.click("text=TCL-01")
        assert page.locator("h1").inner_text() == "Table TCL-01"
        context.close()


def test_a_table_the_floor_does_not_know_is_answered_plainly(
        dashboard: str, browser: Browser) -> None:
    page = browser.new_page()
    page.goto(dashboard + "tables/NOPE<b>")
    assert page.locator("h1").inner_text() == "No table NOPE<b>"
    assert "The floor follows no table named “NOPE<b>”" in page.inner_text("body")
    page.goto(dashboard)          # nothing else affected
    assert "TCL-01" in page.inner_text("body")
    page.close()


def test_the_dashboard_answers_a_loopback_name_only(dashboard: str) -> None:
    """DNS rebinding: a page of another site whose name resolves to 127.0.0.1."""
    request = urllib.request.Request(dashboard, headers={"Host": "evil.example"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 400
    with urllib.request.urlopen(dashboard + "api/floor", timeout=10) as answer:
        view = json.load(answer)
    assert [table["table"] for table in view["tables"]] == TABLES
    assert view["tables"][0]["handle"] == 7000


def test_the_dashboard_listens_on_loopback_only() -> None:
    with pytest.raises(ValueError, match="loopback only"):
        FloorConfig.model_validate({
            "database": {"dsn": "x"}, "dashboard": {"host": "0.0.0.0"},
            "tables": [{"id": "T", "cms_events": "ipc:///tmp/e", "cms_replay": "ipc:///tmp/r"}]})

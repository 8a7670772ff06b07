"""The floor service's Prometheus metrics ([metrics] of floor.toml, a loopback port): how far
each table's events are stored and how far behind its head that is, read as Prometheus reads
them, with a real table process and the suite's PostgreSQL."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from bench.floor_rig import RatedDealer, TableProcess, write_floor_config
from controller.floor.config import load_floor_config
from controller.floor.service import FloorService

from tests.support.metrics import free_port, scrape
from tests.support.pool import journal

DEADLINE_S = 30.0


def test_the_floor_says_how_far_each_table_is_stored_and_how_far_behind(
        tmp_path: Path, database: str) -> None:
    table = TableProcess("MET-01")
    port = free_port()
    config = write_floor_config(tmp_path / "floor.toml", database, [table], {}, retry_s=0.2)
    config.write_text(config.read_text() + f"\n[metrics]\nport = {port}\n")
    service = FloorService(load_floor_config(config))
    thread = threading.Thread(target=service.run, daemon=True)
    thread.start()
    try:
        RatedDealer(table, {1: "P-1"}).hand()
        last = journal(table)[-1][0]
        label = (("table", "MET-01"),)
        deadline = time.monotonic() + DEADLINE_S
        while True:
            seen = scrape(port)
            if seen.get(("lowball_floor_stored_through_seq", label), 0) >= last \
                    and seen.get(("lowball_floor_lag_records", label)) == 0:
                break
            assert time.monotonic() < deadline, seen
            time.sleep(0.2)
        assert seen[("lowball_floor_table_head_seq", label)] >= last
        assert seen[("lowball_floor_table_held", label)] == 0
        assert seen[("lowball_floor_table_journal_broken", label)] == 0
        assert seen[("lowball_floor_events_stored_total", ())] >= last
    finally:
        service.request_stop()
        thread.join(20)
        table.close()
    assert not thread.is_alive()

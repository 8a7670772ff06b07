"""``lowball-table demo --floor N``: N tables, the floor service and a linked pool on a throwaway
PostgreSQL, every hand stored and the pool's meter the sum of its ledger."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from controller.floor.local_cluster import LocalCluster

ROOT = Path(__file__).resolve().parents[2]


def test_demo_floor_runs_tables_the_floor_and_a_pool(postgres: LocalCluster,
                                                     tmp_path: Path) -> None:
    # ``postgres``: skips, saying how to install it, where PostgreSQL's server is missing
    result = subprocess.run(
        [sys.executable, "-m", "controller.cli.main", "demo", "--floor", "2", "--hands", "2",
         "--pace", "0", "--seed", "5", "--state-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-3000:]
    summary = result.stderr.strip().splitlines()[-1]
    assert "demo stopped after 4 hands; 4 stored; pool LINK-1: meter $" in summary
    assert "= the sum of its ledger" in summary
    assert "tables = [\"TCL-01\", \"TCL-02\"]" in (tmp_path / "floor.toml").read_text()
    assert (tmp_path / "TCL-02" / "journal.sqlite3").exists()
    assert re.search(r"^demo: the floor's dashboard: http://127\.0\.0\.1:\d+/$", result.stderr,
                     re.M), result.stderr[:3000]


def test_demo_floor_refuses_a_game_without_the_progressive(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "controller.cli.main", "demo", "--floor", "2", "--game",
         "cali_lowball", "--state-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "--floor links Three Card Lowball tables" in result.stderr


def test_demo_floor_bounds_the_number_of_tables(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "controller.cli.main", "demo", "--floor", "21"],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "21: from 1 to 20 tables" in result.stderr

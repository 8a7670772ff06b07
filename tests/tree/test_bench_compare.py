"""bench.compare refuses to measure while another table daemon runs: it would take the CPU the
measured daemons need, and every figure with it."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bench import compare


def until(condition: Callable[[], bool], deadline_s: float = 10.0) -> bool:
    """Whether ``condition`` holds within ``deadline_s`` (asked again at once till then)."""
    deadline = time.monotonic() + deadline_s
    while not condition():
        if time.monotonic() > deadline:
            return False
    return True


def test_a_daemon_left_running_is_found_and_the_comparison_refuses_to_start(
        tmp_path: Path) -> None:
    # A process that looks like a daemon to the process table, alive until its stdin closes.
    stray = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()", "-m",
                              "controller.cli.main", "run", "--config", "table.toml"],
                             stdin=subprocess.PIPE)
    try:
        # its arguments show in the process table once its exec is done
        assert until(lambda: stray.pid in compare.running_daemons())
        with pytest.raises(SystemExit) as refused:
            compare.main(["--before", str(tmp_path), "--rounds", "1"])
        assert str(stray.pid) in str(refused.value)
        assert "--allow-others" in str(refused.value)
    finally:
        assert stray.stdin is not None
        stray.stdin.close()
        stray.wait(timeout=30)
    assert stray.pid not in compare.running_daemons()

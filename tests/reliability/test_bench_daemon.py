"""The pipeline benchmarks' daemon process: a daemon that cannot start must not leave itself,
its simulators or its files behind (a left-over daemon would skew every later figure)."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest

import bench.power_loss
from bench import pipeline


def test_a_daemon_that_cannot_start_leaves_nothing_behind(monkeypatch, tmp_path):
    def broken_config(path: Path, *args, **kwargs) -> Path:
        path.write_text("[table]\nid = 'BENCH'\nno_such_key = 1\n")
        return path

    started: list[subprocess.Popen] = []
    popen = subprocess.Popen

    def recording_popen(*args, **kwargs):
        started.append(popen(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(bench.power_loss, "write_config", broken_config)
    monkeypatch.setattr(pipeline.subprocess, "Popen", recording_popen)
    simulators_before = {t for t in threading.enumerate() if t.name.startswith("sim-")}

    with pytest.raises(RuntimeError, match="did not start; its log ends") as error:
        pipeline.DaemonProcess("cali_lowball", "batched")

    assert "no_such_key" in str(error.value)             # the daemon's own reason, quoted
    [process] = started
    assert process.returncode is not None                 # reaped, not left running
    assert {t for t in threading.enumerate() if t.name.startswith("sim-")
            and t.is_alive()} <= simulators_before
    assert not list(Path(process.args[process.args.index("--state-dir") + 1]).parent.glob("*"))

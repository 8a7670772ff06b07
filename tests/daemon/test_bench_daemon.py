"""The pipeline benchmarks' daemon process: a daemon that cannot start must not leave itself,
its simulators or its files behind (a left-over daemon would skew every later figure); and the
stalled-subscriber benchmark, short."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path
from typing import Any, cast

import pytest

import bench.power_loss
from bench import pipeline


def test_a_daemon_that_cannot_start_leaves_nothing_behind(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    def broken_config(path: Path, *args: Any, **kwargs: Any) -> Path:
        path.write_text("[table]\nid = 'BENCH'\nno_such_key = 1\n")
        return path

    started: list[subprocess.Popen[Any]] = []
    popen = subprocess.Popen

    def recording_popen(*args: Any, **kwargs: Any) -> subprocess.Popen[Any]:
        started.append(popen(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(bench.power_loss, "write_config", broken_config)
    monkeypatch.setattr("bench.pipeline.subprocess.Popen", recording_popen)
    simulators_before = {t for t in threading.enumerate() if t.name.startswith("sim-")}

    with pytest.raises(RuntimeError, match="did not start; its log ends") as error:
        pipeline.DaemonProcess("cali_lowball", "batched")

    assert "no_such_key" in str(error.value)             # the daemon's own reason, quoted
    [process] = started
    assert process.returncode is not None                 # reaped, not left running
    assert {t for t in threading.enumerate() if t.name.startswith("sim-")
            and t.is_alive()} <= simulators_before
    argv = cast(list[str], process.args)
    assert not list(Path(argv[argv.index("--state-dir") + 1]).parent.glob("*"))


def test_the_stalled_subscriber_bench_recovers_every_event_through_the_daemon_process() -> None:
    """The short version of ``python -m bench.pipeline stalled`` (a minute there): the table
    keeps dealing while a subscriber reads nothing, and the subscriber then ends with every
    journaled seq after its snapshot, once, in order, byte for byte, and nothing after (the
    bench raises on anything else). 400 hands of Cali LowBall are about 18,000 records: more
    than the table's PUB queue (10,000 per subscriber) and the client's (1,000) hold, so
    ZeroMQ must drop some and the subscriber must take them from the replay socket."""
    result = pipeline.stalled_subscriber(hands=400, baseline_seconds=0, verbose=False)

    assert result["baseline"]["hands"] >= 1 and result["stalled"]["hands"] == 400
    assert result["missed_records"] >= 40 * 400          # 45 records a one-spot hand
    assert result["gaps_filled"] >= 1
    assert 0 < result["replayed_records"] < result["missed_records"]


def test_a_daemon_that_cannot_even_be_spawned_leaves_nothing_behind(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The simulators start before the daemon is spawned: if spawning fails, they stop and the
    files go all the same."""
    configs: list[Path] = []
    write_config = bench.power_loss.write_config

    def recording_config(path: Path, *args: Any, **kwargs: Any) -> Path:
        configs.append(write_config(path, *args, **kwargs))
        return configs[-1]

    def failing_popen(*args: Any, **kwargs: Any) -> None:
        raise FileNotFoundError("no such interpreter")

    monkeypatch.setattr(bench.power_loss, "write_config", recording_config)
    monkeypatch.setattr("bench.pipeline.subprocess.Popen", failing_popen)
    simulators_before = {t for t in threading.enumerate() if t.name.startswith("sim-")}

    with pytest.raises(FileNotFoundError, match="no such interpreter"):
        pipeline.DaemonProcess("cali_lowball", "batched")

    [config] = configs                                   # the simulators were running by then
    assert {t for t in threading.enumerate() if t.name.startswith("sim-")
            and t.is_alive()} <= simulators_before
    assert not config.parent.exists()

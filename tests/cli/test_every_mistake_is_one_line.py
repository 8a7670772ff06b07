"""Every mistake on the command line is one line naming it, never a traceback; people type
dollars.

Origin: ``lowball-table dealer --credential-file MISSING ...`` ended in a traceback,
``dealer viod`` said only ``usage: viod``, and ``dealer place 3 ante 5.00`` was refused as
"Input should be a valid integer". Each case runs the real entry point, as a person types it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.rig import RigFactory

ROOT = Path(__file__).resolve().parents[2]


def lowball(*words: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "controller.cli.main", *words], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and not done.stdout, (done.stdout, done.stderr)
    return lines[0]


def test_an_unknown_dealer_command_names_the_known_ones() -> None:
    done = lowball("dealer", "viod")
    assert done.returncode == 2
    said = one_line(done)
    assert said.startswith("lowball-table dealer: unknown command 'viod' (did you mean void?)")
    for known in ("open", "place", "lock", "decide", "void", "burn", "status", "withdraw"):
        assert known in said


@pytest.mark.parametrize("path, says", [
    ("MISSING", "credential file MISSING: no such file"),
    (".", "credential file .: a directory, not a file"),
])
def test_a_credential_file_that_cannot_be_read_is_named(tmp_path: Path, path: str,
                                                        says: str) -> None:
    done = lowball("dealer", "--credential-file", path, "void", "card on the floor",
                   cwd=tmp_path)
    assert done.returncode == 2 and one_line(done) == f"lowball-table dealer: {says}"


def test_an_empty_credential_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "empty").write_text("\n")
    done = lowball("dealer", "--credential-file", str(tmp_path / "empty"), "void", "x")
    assert done.returncode == 2 and one_line(done).endswith("is empty")


@pytest.mark.parametrize("words, says", [
    (["place", "3", "ante", "25.505"], "amount '25.505' has more than two decimals"),
    (["place", "3", "ante", "-25"], "amount '-25' is negative"),
    (["place", "3", "ante", "1e3"], "amount '1e3' is not an amount in dollars"),
    (["place", "3", "ante", "99999999999999"], "amount '99999999999999' is more than"),
    (["place", "9", "ante", "25"], "spot '9' is not a spot: spots are numbered 1 to 7"),
    (["place", "3"], "place: missing words; usage: place SPOT WAGER DOLLARS [PLAYER]"),
    (["lock", "now"], "lock: too many words; usage: lock"),
    (["adjust_meter", "-25.001", "typo"], "amount '-25.001' has more than two decimals"),
    (["acknowledge_alarm", "x1"], "seq 'x1' is not an alarm's journal seq"),
    (["withdraw"], "withdraw needs the REQUEST_ID"),
    (["--timeout", "0", "status"], "--timeout 0: seconds to wait"),
    (["--timeout", "abc", "status"], "argument --timeout: invalid float value: 'abc'"),
    (["--connect", "nonsense", "status"], "--connect 'nonsense': Invalid argument"),
    ([], "the following arguments are required: COMMAND"),
])
def test_a_mistake_in_the_dealer_command_is_one_line(words: list[str], says: str) -> None:
    done = lowball("dealer", *words)
    assert done.returncode == 2 and says in one_line(done)


@pytest.mark.parametrize("words, says", [
    (["nonsense"], "invalid choice: 'nonsense'"),
    (["journal", "verify", "--state-dir", "/nonexistent"], "no journal at /nonexistent"),
    (["journal"], "the following arguments are required: ACTION"),
    (["console", "--config", "/nonexistent.toml"], "/nonexistent.toml: file not found"),
    (["run", "--config", "/nonexistent.toml"], "/nonexistent.toml: file not found"),
    (["replay", "/nonexistent.json"], "/nonexistent.json: file not found"),
    (["watch", "--connect", "nonsense"], "bad endpoint for --connect: 'nonsense'"),
    (["keys", "new", "../x"], "is not a plain name"),
    (["demo", "--game", "poker"], "invalid choice: 'poker'"),
    (["math", "advise"], "the following arguments are required: --game, --cards"),
    (["sim", "roulette"], "invalid choice: 'roulette'"),
    (["floor", "report"], "the following arguments are required: --config"),
])
def test_every_subcommand_names_a_mistake_in_one_line(words: list[str], says: str) -> None:
    done = lowball(*words)
    assert done.returncode == 2 and says in one_line(done)


def test_the_dealer_types_dollars_and_reads_dollars(rig_factory: RigFactory) -> None:
    rig = rig_factory("cali_lowball")
    connect = ["dealer", "--connect", rig.stream.commands]
    assert lowball(*connect, "open").returncode == 0
    done = lowball(*connect, "place", "3", "ante", "$25.50", "Pat Smith")
    assert done.returncode == 0, done.stdout + done.stderr
    assert rig.status()["layout"] == {"3": {"ante": 2550}}
    done = lowball(*connect, "place", "3", "xtra_bonus", "100000.01")
    assert done.returncode == 1
    assert done.stdout.strip() == ("refused: spot 3: xtra_bonus $100,000.01 is outside the "
                                   "table limits $0.01 to $100,000.00")
    status = lowball(*connect, "status").stdout
    assert "wagers on the layout:" in status and "  spot 3: ante $25.50" in status

"""``lowball-table journal verify|show``, through the module's ``register`` and ``run``."""

from __future__ import annotations

import argparse
import json
import sqlite3
from pathlib import Path

import pytest

from controller.cli import journal as command
from controller.stream.journal import Journal, journal_path

from tests.support.stream import HAND, TABLE, TS, sample_events


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="lowball-table")
    command.register(parser.add_subparsers(dest="command", required=True), "journal",
                     "verify or show the audit journal")
    args = parser.parse_args(["journal", *argv])
    status: int = args.func(args)
    return status


@pytest.fixture
def state_dir(tmp_path: Path) -> tuple[Path, str]:
    with Journal(journal_path(tmp_path)) as journal:
        for event in sample_events(5):
            journal.append(event, table_id=TABLE, hand_id=HAND, ts=TS)
        last_hash = journal.last_hash
    return tmp_path, last_hash


def test_verify_ok(state_dir: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    directory, last_hash = state_dir
    assert run("verify", "--state-dir", str(directory)) == 0
    assert capsys.readouterr().out == (
        f"journal OK: 5 records, last seq 5, last hash {last_hash}\n")
    assert run("verify", "--journal", str(journal_path(directory))) == 0


def test_verify_names_the_mark_of_a_break_a_daemon_found_while_it_ran(
        state_dir: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    from controller.daemon import held_mark
    from controller.stream.journal import JournalBroken

    directory, last_hash = state_dir
    held_mark.write(directory, JournalBroken(6, "record seq 6 written by another process"),
                    daemon_seq=5, daemon_hash=last_hash)
    assert run("verify", "--state-dir", str(directory)) == 1
    assert capsys.readouterr().out.splitlines()[1].startswith(
        "journal HELD at seq 6: record seq 6 written by another process")


def test_verify_broken(state_dir: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    directory, _ = state_dir
    connection = sqlite3.connect(journal_path(directory), isolation_level=None)
    connection.execute("DROP TRIGGER journal_no_update")
    connection.execute("UPDATE journal SET message = CAST(replace(CAST(message AS TEXT), "
                       "'hole cards', 'showdown') AS BLOB) WHERE seq = 2")
    connection.close()
    assert run("verify", "--state-dir", str(directory)) == 1
    assert capsys.readouterr().out.startswith("journal BROKEN at seq 2: hash does not match")


def test_missing_or_foreign_journal_exits_2(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert run("verify", "--state-dir", str(tmp_path)) == 2
    assert "no journal at" in capsys.readouterr().err
    assert not journal_path(tmp_path).exists()  # verify never creates one
    (tmp_path / "x.db").write_bytes(b"garbage" * 100)
    assert run("show", "--journal", str(tmp_path / "x.db")) == 2
    assert "cannot open the journal" in capsys.readouterr().err


def test_show(state_dir: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    directory, _ = state_dir
    assert run("show", "--state-dir", str(directory), "--after", "1", "--limit", "2") == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert lines[0].split()[:4] == ["2", "2026-11-21T23:50:00.123456Z", HAND, "phase_started"]
    assert '{"phase":"hole cards"}' in lines[0]


def test_show_json_prints_messages_as_journaled(state_dir: tuple[Path, str],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    directory, _ = state_dir
    assert run("show", "--state-dir", str(directory), "--json") == 0
    lines = capsys.readouterr().out.splitlines()
    with Journal.open_readonly(journal_path(directory)) as journal:
        assert [line.encode() for line in lines] == [r.message for r in journal.records()]
    assert [json.loads(line)["seq"] for line in lines] == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("argv", [
    ["verify"],
    ["verify", "--journal", "a", "--state-dir", "b"],
    ["show", "--journal", "a", "--after", "-1"],
    ["show", "--journal", "a", "--limit", "0"],
    ["show", "--journal", "a", "--limit", "many"],
    ["rewrite", "--journal", "a"],
])
def test_bad_arguments_are_refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        run(*argv)
    assert exit_.value.code == 2
    assert "error:" in capsys.readouterr().err

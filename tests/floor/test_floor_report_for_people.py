"""``lowball-table floor report`` as a pit manager uses it: dates, help, an empty day, dollars in
and out, and the pools' ledger that adds up for the day asked.

Origin: a pit manager's walk-through: ``--date 12/02/2026`` answered ``invalid fromisoformat
value``, ``--amount 25.00`` was refused, ``floor report --help`` printed the whole floor's help
and ``floor --help`` stopped mid-sentence, a day with no hands printed empty headers,
``--date`` did not filter the pools, and the pool's row showed the opening seed as a reseed
with a fixed awards column outside "the meter is the sum of the ledger"."""

from __future__ import annotations

import re
from pathlib import Path

import psycopg
import pytest

from controller.cli.main import main


def floor_toml(tmp_path: Path, database: str) -> Path:
    config = tmp_path / "floor.toml"
    config.write_text(f'[database]\ndsn = "{database}"\n\n'
                      '[[tables]]\nid = "TCL-01"\ncms_events = "ipc:///tmp/a"\n'
                      'cms_replay = "ipc:///tmp/b"\n\n'
                      '[[pools]]\nid = "LINK-1"\ntables = ["TCL-01"]\nseed = 100000\n',
                      encoding="utf-8")
    return config


def test_a_date_not_in_iso_is_refused_with_the_format(
        tmp_path: Path, database: str, capsys: pytest.CaptureFixture[str]) -> None:
    config = floor_toml(tmp_path, database)
    with pytest.raises(SystemExit) as exited:
        main(["floor", "report", "--config", str(config), "--date", "12/02/2026"])
    assert exited.value.code == 2
    error = capsys.readouterr().err
    assert "'12/02/2026' is not a date: write it YYYY-MM-DD, e.g. 2026-12-02" in error
    assert "fromisoformat" not in error


def test_each_action_has_its_own_whole_help(capsys: pytest.CaptureFixture[str]) -> None:
    helps = {}
    for action in ((), ("report",), ("adjust",), ("math",), ("run",)):
        with pytest.raises(SystemExit):
            main(["floor", *action, "--help"])
        helps[action] = " ".join(capsys.readouterr().out.split(" ")).replace("\n  ", "\n")
    assert all(re.search(rf"^\s+{action} +\w", helps[()], re.M)
               for action in ("run", "report", "adjust", "math"))
    assert "docs/floor.md documents the schema and the views." in " ".join(helps[()].split())
    assert "--date YYYY-MM-DD" in helps[("report",)] and "--pool" not in helps[("report",)]
    assert "--amount DOLLARS" in helps[("adjust",)] and "--date" not in helps[("adjust",)]
    assert "2 to 3 minutes of CPU" in " ".join(helps[("math",)].split())
    for text in helps.values():     # every description ends a sentence
        description = text.split("\n\n")[1]
        assert description.rstrip().endswith("."), description


def test_adjust_takes_dollars_and_refuses_cents_written_as_dollars(
        tmp_path: Path, database: str, capsys: pytest.CaptureFixture[str]) -> None:
    config = floor_toml(tmp_path, database)
    base = ["floor", "adjust", "--config", str(config), "--pool", "LINK-1", "--reason",
            "meter sign repaired", "--by", "J. Smith"]
    assert main([*base, "--amount", "25.00"]) == 0
    assert "pool LINK-1: meter $1,025.00" in capsys.readouterr().out
    assert main([*base, "--amount=-$1,000.5"]) == 0
    assert "pool LINK-1: meter $24.50" in capsys.readouterr().out
    for bad in ("25.001", "ten", "1.2.3", "25,00"):
        with pytest.raises(SystemExit):
            main([*base, "--amount", bad])
        assert f"{bad!r} is not an amount in dollars: write e.g. 25.00" in \
            capsys.readouterr().err


def test_an_empty_day_says_so(tmp_path: Path, database: str,
                              capsys: pytest.CaptureFixture[str]) -> None:
    config = floor_toml(tmp_path, database)
    assert main(["floor", "report", "--config", str(config), "--date", "2001-01-01"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("Nothing on 2001-01-01: no hand settled, no fault, no device "
                              "down and no pool movement in its shifts.")
    assert "Players" not in printed


def test_the_pools_ledger_adds_up_for_the_day_and_shows_the_seed_as_the_seed(
        tmp_path: Path, database: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The pool opened at its seed on one day, a supervisor adjusted it on the next: each day's
    report has the day's movements only, from the meter at its start to the meter at its end."""
    config = floor_toml(tmp_path, database)
    base = ["floor", "adjust", "--config", str(config), "--pool", "LINK-1", "--reason",
            "meter sign repaired", "--by", "J. Smith"]
    assert main([*base, "--amount", "-25.00"]) == 0
    assert main(["floor", "report", "--config", str(config)]) == 0    # the shifts configured
    with psycopg.connect(database) as connection:   # the opening seed, two days back
        connection.execute("ALTER TABLE floor_pool_ledger DISABLE TRIGGER USER")
        connection.execute("UPDATE floor_pool_ledger SET recorded_at = recorded_at - "
                           "interval '2 days' WHERE kind = 'reseed'")
        connection.execute("ALTER TABLE floor_pool_ledger ENABLE TRIGGER USER")
        days = connection.execute(
            "SELECT (floor_shift_of(max(recorded_at))).shift_date, "
            "(floor_shift_of(min(recorded_at))).shift_date FROM floor_pool_ledger").fetchone()
        assert days is not None
        today, before = days
    capsys.readouterr()

    def pool_row(day: object) -> list[str]:
        assert main(["floor", "report", "--config", str(config), "--date", str(day)]) == 0
        printed = capsys.readouterr().out
        header = next(line for line in printed.splitlines() if line.startswith("pool "))
        assert header.split() == ["pool", "now", "opening", "seed", "contributions", "voided",
                                  "jackpots", "reseeds", "adjustments", "closing"]
        row = next(line for line in printed.splitlines() if line.startswith("LINK-1"))
        return re.split(r"\s{2,}", row)

    assert pool_row(before) == ["LINK-1", "open", "$0.00", "$1,000.00", "$0.00", "$0.00",
                                "$0.00", "$0.00", "$0.00", "$1,000.00"]
    assert pool_row(today) == ["LINK-1", "open", "$1,000.00", "$0.00", "$0.00", "$0.00",
                               "$0.00", "$0.00", "-$25.00", "$975.00"]
    assert main(["floor", "report", "--config", str(config)]) == 0
    printed = capsys.readouterr().out
    assert "closing = opening + seed + contributions - voided - jackpots + reseeds + " \
           "adjustments" in printed
    assert "is not the sum of its ledger" not in printed

"""Every worked scenario in tests/data/scenarios replays to its expected settlement, through the
engine and through the command line; malformed scenarios are refused naming the field."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from controller.settings.scenario import (
    ScenarioError,
    load_scenario,
    parse_scenario,
    replay,
    settlement_report,
)
from controller.settings.table_config import default_config_path, load_config

SCENARIOS = Path(__file__).resolve().parents[1] / "data" / "scenarios"
CASES = sorted(path for path in SCENARIOS.glob("*.json") if not path.name.endswith(".expected.json"))
CONFIGS = {game: load_config(default_config_path(game))
           for game in ("cali_lowball", "three_card_lowball")}


def report_of(path: Path) -> dict[str, Any]:
    scenario = load_scenario(path)
    return settlement_report(replay(scenario, CONFIGS[scenario.game], str(path)))


def test_there_are_enough_worked_scenarios() -> None:
    games = [json.loads(path.read_text())["game"] for path in CASES]
    assert len(CASES) >= 40
    assert games.count("cali_lowball") >= 15 and games.count("three_card_lowball") >= 15


@pytest.mark.parametrize("path", CASES, ids=lambda path: path.stem)
def test_scenario_settles_as_expected(path: Path) -> None:
    expected = json.loads(path.with_suffix(".expected.json").read_text())
    report = report_of(path)
    assert report["settlements"] == expected["settlements"]
    assert report["progressive"] == expected["progressive"]
    assert report["meter"] == expected["meter"]
    classes = {who: shown["hand_class"] for who, shown in report["hand"].items()}
    assert classes == expected["hands"]
    awards = sum(award["amount"] for award in report["progressive"])
    assert report["house_result"] == -sum(s["net"] for s in report["settlements"]) - awards


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "controller.cli.main", *args],
                          capture_output=True, text=True, timeout=60)


def test_cli_replay_prints_the_settlement_as_json() -> None:
    path = CASES[0]
    done = run_cli("replay", str(path), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["settlements"] == \
        json.loads(path.with_suffix(".expected.json").read_text())["settlements"]


def test_cli_replay_prints_a_readable_settlement() -> None:
    done = run_cli("replay", str(CASES[0]))
    assert done.returncode == 0 and "house result" in done.stdout


@pytest.mark.parametrize("unbuffered", ["1", ""])
def test_cli_output_into_a_closed_pipe_ends_quietly(unbuffered: str) -> None:
    """``lowball-table replay FILE | head -3``: the reader has gone before the settlement is
    written. The command stops with 141 (128 + SIGPIPE, as the shell reports a command
    ended by the closed pipe) and no traceback, whether stdout is buffered or not."""
    import os

    read_end, write_end = os.pipe()
    os.close(read_end)                       # the reader went away before anything was written
    try:
        done = subprocess.run([sys.executable, "-m", "controller.cli.main", "replay", str(CASES[0])],
                              stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=60,
                              env={**os.environ, "PYTHONUNBUFFERED": unbuffered})
    finally:
        os.close(write_end)
    assert done.returncode == 141
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr


BASE: dict[str, Any] = {"game": "cali_lowball", "paytable": "example",
        "seats": {"1": {"ante": 1000, "xtra_bonus": 1000, "lowdown_bonus": 500},
                  "4": {"ante": 2500, "xtra_bonus": 2500}},
        "decisions": {"1": ["raise"], "4": ["check", "bet"]},
        "shoe": ["As", "7d", "Kc", "2h", "9s", "3c", "4d", "Jh", "5s"]}
THREE: dict[str, Any] = {"game": "three_card_lowball", "paytable": "paytable-1",
         "seats": {"2": {"ante": 500, "bonus": 500, "progressive": 100}},
         "decisions": {"2": ["discard:Kd"]},
         "shoe": ["4h", "4c", "Kd", "2c", "Ah", "Ac", "5d", "6c"]}


def changed(base: dict[str, Any], path: list[str | int], value: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(json.dumps(base))
    target: Any
    target = data
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


@pytest.mark.parametrize("base, path, value, says", [
    (BASE, ["shoe", 3], "Xx", "shoe[3]: unknown card 'Xx'"),
    (BASE, ["shoe", 3], "As", "shoe: duplicate card As at shoe[0] and shoe[3]"),
    (BASE, ["shoe"], BASE["shoe"][:-1], "shoe: ran out after 8 cards; the next card was due to "
                                        "the community (flop)"),
    (BASE, ["shoe"], BASE["shoe"] + ["Qd"], "shoe: 1 card left over after the hand settled"),
    (BASE, ["seats", "4", "xtra_bonus"], 2000,
     "seats.4: spot 4: Ante $25.00 and X-Tra Bonus $20.00 must be equal"),
    (BASE, ["seats", "4", "bonus"], 2500, "seats.4: spot 4: 'bonus' is not a cali_lowball wager"),
    (BASE, ["seats", "4", "ante"], 25.5, "seats.4.ante: Input should be a valid integer"),
    (BASE, ["seats", "4", "ante"], "2500", "seats.4.ante: Input should be a valid integer"),
    (BASE, ["seats", "9"], {"ante": 5, "xtra_bonus": 5}, "seats.9: not allowed as a key: spots are numbered \"1\" to \"7\""),
    (BASE, ["decisions", "4", 1], "raise", "decisions.4[1]: spot 4: 'raise' is not allowed "
                                           "post-flop; choose bet or fold"),
    (BASE, ["decisions", "4"], ["check"], "decisions.4: seat 4 must decide post-flop (bet or "
                                          "fold) but has no decision left"),
    (BASE, ["decisions", "1"], ["raise", "bet"], "decisions.1[1]: 'bet' was never asked for"),
    (BASE, ["decisions", "5"], ["raise"], "decisions.5: seat 5 has no wagers in 'seats'"),
    (BASE, ["paytable"], "nope", "paytable: no cali_lowball paytable named 'nope'"),
    (BASE, ["game"], "poker", "game: Input should be 'cali_lowball' or 'three_card_lowball'"),
    (BASE, ["rules"], {"burn": True}, "rules.burn: unknown key"),
    (BASE, ["extra"], 1, "extra: unknown key"),
    (BASE, ["shoe"], KeyError, "shoe: Field required"),
    (BASE, ["meter"], 5000, "meter: only Three Card Lowball has a progressive meter"),
    (THREE, ["decisions", "2", 0], "discard:As", "decisions.2[0]: spot 2: cannot discard As"),
    (THREE, ["decisions", "2", 0], "discard:Kd,4h,2c", "decisions.2[0]: spot 2: discard 1 or 2"),
    (THREE, ["decisions", "2", 0], "fold", "decisions.2[0]: spot 2: 'fold' is not allowed"),
    (THREE, ["decisions", "2", 0], "discard", "decisions.2[0]: decision 'discard': name the 1 "
                                              "or 2 cards"),
    (THREE, ["decisions", "2", 0], "discard:Zz", "decisions.2[0]: decision 'discard:Zz': unknown"),
    (THREE, ["seats", "2", "progressive"], 200, "seats.2: spot 2: the progressive wager is $1.00"),
    (THREE, ["seats", "2", "bonus"], 400, "seats.2: spot 2: Ante $5.00 and Bonus $4.00 must be equal"),
    (THREE, ["meter"], -5, "meter: Input should be greater than or equal to 0"),
])
def test_malformed_scenarios_name_the_field(base: dict[str, Any], path: list[str | int], value: Any,
                                            says: str) -> None:
    data = changed(base, path, value)
    with pytest.raises(ScenarioError) as caught:
        scenario = parse_scenario(data, "bad.json")
        replay(scenario, CONFIGS[scenario.game], "bad.json")
    assert says in str(caught.value)


def test_the_base_scenarios_are_valid() -> None:
    for data in (BASE, THREE):
        scenario = parse_scenario(data)
        assert replay(scenario, CONFIGS[scenario.game]).settled


@pytest.mark.parametrize("content, says", [
    ("{not json", "not valid JSON"), ("[]", "Input should be a valid dictionary"),
])
def test_cli_refuses_malformed_files_without_a_settlement(tmp_path: Path, content: str,
                                                           says: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    done = run_cli("replay", str(path), "--json")
    assert done.returncode == 2 and says in done.stderr and done.stdout == ""


def test_cli_names_the_field_and_prints_no_settlement(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(changed(BASE, ["shoe", 3], "Xx")))
    done = run_cli("replay", str(path), "--json")
    assert done.returncode == 2
    assert "shoe[3]: unknown card 'Xx'" in done.stderr and done.stdout == ""


def test_cli_missing_file(tmp_path: Path) -> None:
    done = run_cli("replay", str(tmp_path / "none.json"))
    assert done.returncode == 2 and "file not found" in done.stderr

"""`lowball-table math check`: the paytable in force's exact house edge against zero and
against its approved_house_edge, as warnings (controller/par/approval.py)."""

import json
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

from controller.cli.main import main
from controller.cli.math import three_card_bonus
from controller.par import approval
from controller.settings.table_config import default_config_path, load_config, shipped_config_dir
from controller.settings.validation import InputError

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "par-sheets"
PAYTABLE_1_EDGE = "768282207817/79732922068800"


@pytest.mark.parametrize("paytable", ["paytable-1", "paytable-2", "paytable-3"])
def test_the_recorded_edges_are_the_committed_par_sheets(paytable: str) -> None:
    document = json.loads((COMMITTED / f"three_card_lowball-{paytable}.json").read_text())
    setup = load_config(default_config_path("three_card_lowball")).setup(
        "three_card_lowball", paytable)
    assert approval.RECORDED[approval.lines_key(three_card_bonus(setup))] == \
        Fraction(document["house_edge"]["fraction"])


def config_with(tmp_path: Path, approved_line: str) -> Path:
    """The shipped Three Card config with ``approved_line`` added to paytable-1."""
    target = tmp_path / "config"
    shutil.copytree(shipped_config_dir(), target)
    paytables = target / "paytables.toml"
    text = paytables.read_text()
    anchor = 'description = "Three Card Lowball Poker rules, Bonus Paytable #1"\n'
    assert anchor in text
    paytables.write_text(text.replace(anchor, anchor + approved_line + "\n"))
    return target / "three-card-lowball.toml"


@pytest.mark.parametrize("approved, warned", [
    (PAYTABLE_1_EDGE, False),
    ("0.0096", True),
    (None, False),
])
def test_check_warns_when_the_approved_edge_differs(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str],
                                                    approved: str | None, warned: bool) -> None:
    line = f'approved_house_edge = "{approved}"' if approved else ""
    assert main(["math", "check", "--game", "three_card_lowball",
                 "--config", str(config_with(tmp_path, line))]) == 0
    out, err = capsys.readouterr()
    assert "house edge 0.963569612 %" in out
    assert ("differs from the approved_house_edge 0.0096" in err) is warned
    assert ("warning" in err) is warned


@pytest.mark.slow
def test_check_warns_of_a_negative_house_edge(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["math", "check", "--game", "cali_lowball"]) == 0
    err = capsys.readouterr().err
    assert "warning: paytable example: the house edge is negative (-22.391998541 %)" in err


@pytest.mark.parametrize("value, problem", [
    ("0.1.2", "is not a fraction"),
    ("1/0", "is not a fraction"),
    ("3/2", "between -1 and 1"),
    ("1" * 41, "at most 40 characters"),
])
def test_a_bad_approved_edge_is_refused_by_name(tmp_path: Path, value: str, problem: str) -> None:
    with pytest.raises(InputError) as caught:
        load_config(config_with(tmp_path, f'approved_house_edge = "{value}"'))
    assert "approved_house_edge" in str(caught.value) and problem in str(caught.value)

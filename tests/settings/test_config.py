"""Config files: the shipped ones load; every bad one fails naming the file and key path."""

from pathlib import Path

import pytest

from controller.core.table_settings import GAMES
from controller.settings.paytables import load_paytables
from controller.settings.table_config import default_config_path, load_config
from controller.settings.validation import InputError

from tests.support.config_files import SHIPPED, table_dir, edit


@pytest.mark.parametrize("game", GAMES)
def test_shipped_configs_load(game: str) -> None:
    loaded = load_config(default_config_path(game))
    assert loaded.config.table.game == game


def test_shipped_paytables_are_the_seed_tables_and_a_marked_example() -> None:
    paytables = load_paytables(SHIPPED / "paytables.toml")
    assert paytables.cali_lowball["example"].status == "example"
    assert "NOT APPROVED" in paytables.cali_lowball["example"].description.upper()
    columns = {name: {line: str(odds) for line, odds in table.bonus.items()}
               for name, table in paytables.three_card_lowball.items()}
    # Verbatim from the seed's table: Paytable #1, #2, #3.
    assert columns == {
        "paytable-1": {"4-2-A one color": "10:1", "4-2-A two color": "6:1", "4-3-A": "5:1",
                       "5-high": "3:1", "6-high": "2:1", "7-high": "1:1"},
        "paytable-2": {"4-2-A one color": "12:1", "4-2-A two color": "8:1", "4-3-A": "4:1",
                       "5-high": "3:1", "6-high": "2:1", "7-high": "1:1"},
        "paytable-3": {"4-2-A one color": "10:1", "4-2-A two color": "6:1", "4-3-A": "4:1",
                       "5-high": "3:1", "6-high": "2:1", "7-high": "1:1"},
    }


@pytest.mark.parametrize("file, old, new, says", [
    ("three-card-lowball.toml", "min_ante = 500", "min_ante = 5.0",
     "limits.min_ante: Input should be a valid integer"),
    ("three-card-lowball.toml", "min_ante = 500", "min_ant = 500",
     "limits.min_ant: unknown key"),
    ("three-card-lowball.toml", "min_ante = 500", "min_ante = 500000",
     "limits: min_ante 500000 is above max_ante"),
    ("three-card-lowball.toml", 'paytable = "paytable-1"', 'paytable = "paytable-9"',
     "paytable: no three_card_lowball paytable named 'paytable-9'"),
    ("three-card-lowball.toml", 'contribution_rate = "20%"', "contribution_rate = 0.2",
     "progressive.contribution_rate: rate 0.2 must be a percentage written as text"),
    ("three-card-lowball.toml", 'contribution_rate = "20%"', 'contribution_rate = "12.5%"',
     "progressive: contribution_rate x wager = 12.5000 cents"),
    ("three-card-lowball.toml", "4-high = 1000", "4-high = -1",
     "progressive.awards.4-high: Input should be greater than or equal to 0"),
    ("three-card-lowball.toml", 'jackpot_split = "equal"', 'jackpot_split = "half"',
     "rules.jackpot_split: Input should be 'equal' or 'full_each'"),
    ("three-card-lowball.toml", 'game = "three_card_lowball"', 'game = "blackjack"',
     "table.game: Input should be 'cali_lowball' or 'three_card_lowball'"),
    ("three-card-lowball.toml", "spots = 7", "spots = 9", "table.spots: Input should be less"),
    ("three-card-lowball.toml", "[table]", "[table\n", "not valid TOML"),
    ("paytables.toml", '"4-3-A" = "5:1"', '"4-3-A" = "5 for 1"',
     "three_card_lowball.paytable-1.bonus.4-3-A: odds '5 for 1' must be written 'N:M'"),
    ("paytables.toml", '"4-3-A" = "5:1"', '"4-3-B" = "5:1"',
     "three_card_lowball.paytable-1.bonus: unknown hand class '4-3-B'"),
    ("paytables.toml", '"10-high" = "1:1"', '"J-high" = "1:1"',
     "cali_lowball.example.xtra_bonus: missing a line for '10-high'"),
    ("paytables.toml", 'status = "example"', 'status = "approved"',
     "cali_lowball.example: an approved paytable must give its approval reference"),
])
def test_bad_config_names_the_key(table_dir: Path, file: str, old: str, new: str, says: str
                                  ) -> None:
    edit(table_dir / file, old, new)
    with pytest.raises(InputError) as caught:
        load_config(table_dir / "three-card-lowball.toml"
                    if file != "paytables.toml" or "three_card" in says
                    else table_dir / "cali-lowball.toml")
    assert says in str(caught.value)
    assert str(table_dir / file) in str(caught.value)


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="nowhere.toml: file not found"):
        load_config(tmp_path / "nowhere.toml")

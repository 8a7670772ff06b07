"""The core's game settings: built from the settings document (the form journaled with every
``config_applied``), frozen, fingerprinted as before, and read back from a journal with
every bad value named by its key."""

from __future__ import annotations

import dataclasses
import json
from fractions import Fraction
from typing import Any

import pytest

from controller.core.commands import Place, RecordError, Void, command_from_record
from controller.core.money import Odds
from controller.core.table_settings import GameSettings, SettingsError, settings_changed
from controller.settings.table_config import default_config_path, game_settings, load_config

#: The fingerprints of the shipped configs' game settings: a journal written before the core
#: built its own settings objects carries these, and must still match.
FINGERPRINTS = {
    "cali_lowball": "00bfcbb2a84a2c40e71176ea9d17ccb31767f1f274ad5d86cbf7ccee1ce60f24",
    "three_card_lowball": "b0f9398dd0beae51ef44045d7829d5bd4ed7d16797c03034a77965a406b913a9",
}


@pytest.mark.parametrize("game", sorted(FINGERPRINTS))
def test_the_shipped_settings_keep_their_fingerprints(game: str) -> None:
    settings = game_settings(load_config(default_config_path(game)))
    assert settings.fingerprint == FINGERPRINTS[game]
    assert GameSettings.from_document(json.loads(settings.text)) == settings


def test_the_settings_are_core_values_read_from_the_document() -> None:
    settings = game_settings(load_config(default_config_path("three_card_lowball")))
    setup = settings.setup
    assert setup.game == settings.game == "three_card_lowball"
    assert setup.paytable.status == "seed"
    assert setup.paytable.for_wager("bonus")["4-2-A one color"] == Odds(10, 1)
    assert setup.paytable.for_wager("xtra_bonus") == {}
    assert setup.progressive.contribution_rate == Fraction(1, 5)
    assert setup.progressive.contribution == 20
    assert settings.limits.max_spots_per_player == 4 and settings.spots == 7
    with pytest.raises(dataclasses.FrozenInstanceError):
        setup.rules.jackpot_split = "full_each"  # type: ignore[misc]
    with pytest.raises(TypeError):
        setup.paytable.odds["bonus"]["4-3-A"] = Odds(1, 1)  # type: ignore[index]


def document(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = game_settings(load_config(default_config_path("three_card_lowball"))).document()
    for path, value in changes.items():
        *parents, key = path.split("__")
        target: Any = data
        for parent in parents:
            target = target[parent]
        target[key] = value
    return data


@pytest.mark.parametrize("changes, named", [
    ({"game": "poker"}, "game: 'poker' is not one of"),
    ({"spots": 8}, "settings.spots: a whole number from 1 to 7"),
    ({"spots": True}, "settings.spots"),
    ({"limits__min_ante": "500"}, "limits.min_ante"),
    ({"rules__jackpot_split": "half"}, "rules.jackpot_split"),
    ({"rules__burn_before_flop": 1}, "rules.burn_before_flop: true or false"),
    ({"progressive__contribution_rate": 0.2}, "progressive.contribution_rate"),
    ({"progressive__contribution_rate": "12.5%"}, "is not whole cents"),
    ({"progressive__awards__4-high": -1}, "progressive.awards.4-high"),
    ({"paytable_lines__bonus__4-3-A": "lots"}, "paytable_lines.bonus.4-3-A"),
    ({"paytable_lines": []}, "paytable_lines: a table of named values is needed"),
])
def test_a_bad_document_is_refused_naming_the_key(changes: dict[str, Any], named: str) -> None:
    with pytest.raises(SettingsError, match=named.replace("(", r"\(").replace(".", r"\.")):
        GameSettings.from_document(document(**changes))


def test_settings_changed_names_the_dotted_keys() -> None:
    before = GameSettings.from_document(document())
    after = GameSettings.from_document(document(progressive__contribution_rate="10%",
                                                paytable="paytable-2"))
    assert settings_changed(before, after) == ("paytable", "progressive.contribution_rate")
    assert settings_changed(before, before) == ()


def test_a_journaled_command_rebuilds_as_the_core_command() -> None:
    assert command_from_record("place", '{"amount":500,"player":"","spot":3,"wager":"ante"}') \
        == Place(3, "ante", 500)
    assert command_from_record("void", '{"reason":"misdeal"}') == Void("misdeal")
    assert Void.supervisor_only and not Place.supervisor_only
    assert Place(3, "ante", 500).arguments() == \
        '{"amount":500,"player":"","spot":3,"wager":"ante"}'


@pytest.mark.parametrize("name, arguments, named", [
    ("deal", "{}", "'deal' is not a command"),
    ("place", '{"spot":"3","wager":"ante","amount":500}', "spot is not int"),
    ("place", '{"spot":3}', "missing"),
    ("void", "[1]", "argument"),
    ("lock", "{", "Expecting"),
])
def test_a_journaled_command_that_does_not_rebuild_is_named(name: str, arguments: str,
                                                            named: str) -> None:
    with pytest.raises(RecordError, match=named):
        command_from_record(name, arguments)

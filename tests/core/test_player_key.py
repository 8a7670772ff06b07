"""One player, however the id is written (controller/core/player_key.py, Unicode TR39): the
key the four-spot limit and the floor's ratings group by, and the one-script rule."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.core import player_key_data
from controller.core.player_key import player_key, script_problem
from controller.core.table_events import CommandAccepted, LockRefused
from controller.settings.validation import InputError

from tests.support.table import Driver

#: Letters, marks and digits of any script, and the punctuation a player id may hold.
id_text = st.text(st.characters(categories=("L", "M", "N")) | st.sampled_from(" .'#-_"),
                  max_size=24)


def test_case_and_another_scripts_lookalike_letters_share_one_key() -> None:
    # Latin P, Cyrillic Er, Greek Rho, each in both cases; a full-width P
    spellings = ["P-1", "p-1", "\u0420-1", "\u0440-1", "\u03a1-1", "\u03c1-1", "\uff30-1"]
    assert {player_key(spelling) for spelling in spellings} == {player_key("P-1")}
    # all Cyrillic: Es, a, Er, a
    assert player_key("\u0421\u0430\u0440\u0430") == player_key("Capa") == player_key("CAPA")
    assert player_key("P-1") != player_key("P-2") != player_key("Q-2")


@settings(max_examples=400, deadline=None)
@given(id_text)
def test_the_key_ignores_case_and_unicodes_compatibility_forms(player: str) -> None:
    key = player_key(player)
    for variant in (player.casefold(), player.upper(), player.lower(),
                    unicodedata.normalize("NFKC", player), unicodedata.normalize("NFD", player)):
        assert player_key(variant) == key, variant


@settings(max_examples=400, deadline=None)
@given(id_text)
def test_the_key_of_a_key_is_the_key(player: str) -> None:
    key = player_key(player)
    assert player_key(key) == key


def test_the_tables_were_generated_with_this_pythons_unicode() -> None:
    assert player_key_data.UNICODEDATA_VERSION == unicodedata.unidata_version, (
        "Python's Unicode changed: regenerate controller/core/player_key_data.py "
        "(python -m controller.core.player_key_gen UCD_DIR)")


@pytest.mark.parametrize("player", [
    "Σωκράτης", "Иван Петров", "김민준", "山田 たろう", "Tanaka 太郎", "王小明", "José O'Neil",
    "Ana-María #7", "Նարեկ", "ᏣᎳᎩ",
])
def test_an_id_in_one_script_is_a_player(player: str) -> None:
    assert script_problem(player) is None
    d = Driver("three_card_lowball")
    d.do(command="open")
    assert type(d.do(command="place", spot=1, wager="ante", amount=1000,
                     player=player)[0]) is CommandAccepted


@pytest.mark.parametrize(("player", "scripts"), [
    ("P\u0430ul", "Latin, Cyrillic"),                  # a Cyrillic a
    ("\u03a1aul", "Greek, Latin"),                     # a Greek capital Rho
    ("Иван Ivan", "Cyrillic, Latin"),
    ("김민준 たろう", "Hangul, Hiragana"),
])
def test_an_id_that_mixes_scripts_is_refused_naming_them(player: str, scripts: str) -> None:
    d = Driver("three_card_lowball")
    d.do(command="open")
    with pytest.raises(InputError, match=f"mixes the scripts {scripts}"):
        d.do(command="place", spot=1, wager="ante", amount=1000, player=player)


def test_the_four_spot_limit_names_the_id_seated_first_and_its_lookalikes() -> None:
    d = Driver("three_card_lowball")
    d.do(command="open")
    for spot, player in enumerate(["Capa", "CAPA", "\u0421\u0430\u0440\u0430", "Capa", "capa"],
                                  start=1):
        for wager in ("ante", "bonus"):
            assert type(d.do(command="place", spot=spot, wager=wager, amount=1000,
                             player=player)[0]) is CommandAccepted
    refused = [event for event in d.do(command="lock") if type(event) is LockRefused]
    assert refused and refused[0].problems == (
        "spot 5: player 'Capa' wagers on 5 spots (1, 2, 3, 4, 5); at most 4; 'CAPA' (spot 2) is "
        "the same player; '\u0421\u0430\u0440\u0430' (spot 3) is the same player; 'capa' (spot 5) "
        "is the same player",)


def test_capitals_are_keyed_as_written_too() -> None:
    from controller.core.player_key import key_as_written

    cyrillic, latin, small = "\u0412\u041d\u041c\u0422-7", "BHMT-7", "\u0432\u043d\u043c\u0442-7"
    assert player_key(cyrillic) != player_key(latin)          # case folded first: в is no b
    assert key_as_written(cyrillic) == key_as_written(latin)  # as written: В is B
    assert player_key(cyrillic) == player_key(small)          # and case is case
    assert key_as_written("aIice") == key_as_written("alice")
    for player in (cyrillic, latin, small, "aIice"):
        assert key_as_written(key_as_written(player)) == key_as_written(player)


def test_ids_alike_by_either_key_are_one_player_and_others_are_not() -> None:
    from controller.core.player_key import one_player_each

    seats = {1: "BHMT-7", 2: "\u0412\u041d\u041c\u0422-7", 3: "\u0432\u043d\u043c\u0442-7",
             4: "P-1", 5: "p-1", 6: "Q-9"}
    assert one_player_each(seats) == [{1: "BHMT-7", 2: "\u0412\u041d\u041c\u0422-7",
                                       3: "\u0432\u043d\u043c\u0442-7"},
                                      {4: "P-1", 5: "p-1"}, {6: "Q-9"}]
    assert one_player_each({}) == []

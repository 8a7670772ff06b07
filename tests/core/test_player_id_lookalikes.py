"""Player ids that look alike (red team 5).

A player id is ``\\w`` letters and digits of any script (controller/stream/table_commands.py,
``_PLAYER_ID``), compared as given: no Unicode normalisation, and letters that draw nothing
pass. The Hangul filler U+3164 is a letter (category Lo) that renders as blank space, and
full-width letters and digits are their own code points. So "P-1" and "P-1\u3164" (or
"\uff30-\uff11") are two players to the four-spot limit (controller/core/table.py, the lock's
``by_player``), to the floor's ratings and comps, and one to anyone reading the pit view: one
player wagers on five spots of a four-spot table.

Red team 6: the held mark (controller/daemon/held_mark.py) attacked from outside.

Red team 9: what landed in the last two sessions (the console's sign-in turns and /64
grouping, the player key, the command channel's frames and withdrawals) attacked from
outside.

Each test states the behaviour the project promises and is marked xfail (strict) while the
hole is open: a fix turns it into a pass, and strict makes the suite say so.

Red team 10: what landed in the last two sessions (the console's sign-in line and lock-outs,
the supervisor-name lookalike check, the command channel's deferred turns) attacked from
outside.

Each test states the behaviour the project promises and is marked xfail (strict) while the
hole is open: a fix turns it into a pass, and strict makes the suite say so.

Red team 11: what landed in the last two sessions (the quarantine's salvage of a damaged
journal, the archives' kept hashes, the supervisor-name lookalikes) attacked as a faulty disk,
a power cut and a guesser at the console.

Each test states the behaviour the project promises and is marked xfail (strict) while the
hole is open: a fix turns it into a pass, and strict makes the suite say so."""

from __future__ import annotations

import pytest

from controller.core.table_events import CommandAccepted, LockRefused

from tests.support.players import (
    assert_refused_or_counted_as_the_same_player,
    assert_one_player_on_five_spots,
)
from tests.support.table import Driver


LOOKALIKES = ["P-1\u3164", "\uff30-\uff11", "\u3164", "P-1\uffa0", "Jose\u0301"]


@pytest.mark.parametrize("lookalike", LOOKALIKES)
def test_a_lookalike_player_id_is_refused_or_counted_as_the_same_player(lookalike: str) -> None:
    assert_refused_or_counted_as_the_same_player(lookalike)


def test_upper_and_lower_case_are_one_player_to_the_four_spot_limit() -> None:
    d = Driver("three_card_lowball")
    d.do(command="open")
    for spot, player in zip(range(1, 6), ("P-1", "p-1", "P-1", "p-1", "P-1")):
        for wager in ("ante", "bonus"):
            assert type(d.do(command="place", spot=spot, wager=wager, amount=1000,
                             player=player)[0]) is CommandAccepted
    refused = [event for event in d.do(command="lock") if type(event) is LockRefused]
    assert refused and "'P-1' wagers on 5 spots" in refused[0].problems[0]


#: "P-1" written with another script's P (Cyrillic Er, Greek Rho): NFKC keeps them apart.
CROSS_SCRIPT = ["\u0420-1", "\u03a1-1"]


@pytest.mark.parametrize("lookalike", CROSS_SCRIPT)
def test_a_cross_script_lookalike_is_refused_or_counted_as_the_same_player(
        lookalike: str) -> None:
    from tests.support.players import assert_refused_or_counted_as_the_same_player
    assert_refused_or_counted_as_the_same_player(lookalike)


#: Latin ids in capitals and the same ids in Cyrillic or Greek capitals, which draw the same
#: glyphs (TR39's confusables map each of these capitals to the Latin one); their small
#: letters differ (в, н, м, т, к; η, ν, μ), so the case-folded key alone does not join them.
CAPITAL_LOOKALIKES = [("BHMT-7", "\u0412\u041d\u041c\u0422-7"),    # Cyrillic ВНМТ
                      ("KH-7", "\u039a\u0397-7")]                  # Greek ΚΗ


@pytest.mark.parametrize(("latin", "lookalike"), CAPITAL_LOOKALIKES)
def test_an_id_in_lookalike_capitals_of_another_script_is_the_same_player(
        latin: str, lookalike: str) -> None:
    assert_one_player_on_five_spots(latin, lookalike)


#: An id in small Latin letters and one in another script's capitals that draw the id in Latin
#: capitals: "kim-7" is "KIM-7" but for case, and "KIM-7" is Cyrillic "КІМ-7" (or Greek "ΚΙ-7")
#: to the eye. Neither the case-folded key nor the key as written joins the two (case folding
#: keeps the Cyrillic small letters к, і, м apart from Latin ones; as written the Latin small
#: "i" is no capital "I", which is "l"): their keys in capitals do.
CASE_AND_SCRIPT = [("kim-7", "\u041a\u0406\u041c-7"),       # Cyrillic КІМ
                   ("ki-7", "\u039a\u0399-7")]                # Greek ΚΙ


@pytest.mark.parametrize(("latin", "lookalike"), CASE_AND_SCRIPT)
def test_an_id_in_small_letters_and_its_capitals_in_another_script_are_one_player(
        latin: str, lookalike: str) -> None:
    from tests.support.players import assert_one_player_on_five_spots

    assert_one_player_on_five_spots(latin, lookalike)


#: The pairs :data:`controller.daemon.command_channel._DRAWN_AS` reads as the letter they draw
#: in a supervisor's name (red team 10), written into a player id.
DRAWN_AS = [("wendy-7", "vvendy-7"), ("dave-7", "clave-7")]


#: A Han stroke (U+4E28) and a Hangul vowel (U+1175, keyed as the stroke) that draw a small L:
#: Latin may mix with Han, and with Hangul (TR39 "highly restrictive"), and TR39 lists the
#: stroke as its own prototype, so no key joins it to the letter.
STROKE_FOR_L = [("paul-7", "pau\u4e28-7"), ("paul-7", "pau\u1175-7")]


@pytest.mark.parametrize(("latin", "lookalike"), DRAWN_AS)
def test_an_id_with_a_pair_of_letters_that_draws_another_is_the_same_player(
        latin: str, lookalike: str) -> None:
    assert_one_player_on_five_spots(latin, lookalike)


@pytest.mark.xfail(strict=True, reason="player_key: Latin may mix with Han and with Hangul, and "
                   "TR39 lists the Han stroke U+4E28 (and the Hangul vowel U+1175, keyed as it) "
                   "as its own prototype: 'pau\u4e28-7' beside 'paul-7' locks as two players")
@pytest.mark.parametrize(("latin", "lookalike"), STROKE_FOR_L)
def test_an_id_with_a_han_stroke_for_a_latin_letter_is_the_same_player(
        latin: str, lookalike: str) -> None:
    assert_one_player_on_five_spots(latin, lookalike)

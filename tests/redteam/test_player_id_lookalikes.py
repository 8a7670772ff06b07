"""Player ids that look alike (red team 5).

A player id is ``\\w`` letters and digits of any script (controller/stream/table_commands.py,
``_PLAYER_ID``), compared as given: no Unicode normalisation, and letters that draw nothing
pass. The Hangul filler U+3164 is a letter (category Lo) that renders as blank space, and
full-width letters and digits are their own code points. So "P-1" and "P-1\u3164" (or
"\uff30-\uff11") are two players to the four-spot limit (controller/core/table.py, the lock's
``by_player``), to the floor's ratings and comps, and one to anyone reading the pit view: one
player wagers on five spots of a four-spot table."""

from __future__ import annotations

import pytest

from controller.core.table_events import CommandAccepted, CommandRefused, LockRefused
from controller.settings.validation import InputError
from tests.test_table import Driver

LOOKALIKES = ["P-1\u3164", "\uff30-\uff11", "\u3164", "P-1\uffa0", "Jose\u0301"]


@pytest.mark.parametrize("lookalike", LOOKALIKES)
def test_a_lookalike_player_id_is_refused_or_counted_as_the_same_player(lookalike: str) -> None:
    d = Driver("three_card_lowball")
    d.do(command="open")
    for spot in range(1, 5):
        for wager in ("ante", "bonus"):
            assert type(d.do(command="place", spot=spot, wager=wager, amount=1000,
                             player="P-1")[0]) is CommandAccepted
    try:
        placed = d.do(command="place", spot=5, wager="ante", amount=1000, player=lookalike)
    except InputError as error:                 # refused where it is parsed: held
        assert "letters and digits" in str(error)
        return
    assert type(placed[0]) is not CommandRefused
    d.do(command="place", spot=5, wager="bonus", amount=1000, player=lookalike)
    refused = [event for event in d.do(command="lock") if type(event) is LockRefused]
    assert refused, f"spots 1-4 of 'P-1' and spot 5 of {lookalike!r} locked as two players"
    assert f"'P-1' wagers on 5 spots (1, 2, 3, 4, 5); at most 4; {lookalike!r} (spot 5) is " \
           f"the same player" in refused[0].problems[0]


def test_upper_and_lower_case_are_one_player_to_the_four_spot_limit() -> None:
    d = Driver("three_card_lowball")
    d.do(command="open")
    for spot, player in zip(range(1, 6), ("P-1", "p-1", "P-1", "p-1", "P-1")):
        for wager in ("ante", "bonus"):
            assert type(d.do(command="place", spot=spot, wager=wager, amount=1000,
                             player=player)[0]) is CommandAccepted
    refused = [event for event in d.do(command="lock") if type(event) is LockRefused]
    assert refused and "'P-1' wagers on 5 spots" in refused[0].problems[0]

"""Player ids that look alike."""

from __future__ import annotations


def assert_one_player_on_five_spots(player: str, lookalike: str) -> None:
    """``player`` on spots 1-4 and ``lookalike`` on spot 5 do not lock (or the lookalike is
    refused where it is parsed): one player, four spots at most."""
    from controller.core.table_events import CommandAccepted, LockRefused
    from controller.settings.validation import InputError
    from tests.support.table import Driver

    d = Driver("three_card_lowball")
    d.do(command="open")
    for spot in range(1, 5):
        for wager in ("ante", "bonus"):
            assert type(d.do(command="place", spot=spot, wager=wager, amount=1000,
                             player=player)[0]) is CommandAccepted
    try:
        d.do(command="place", spot=5, wager="ante", amount=1000, player=lookalike)
    except InputError:                                # refused where it is parsed: held
        return
    d.do(command="place", spot=5, wager="bonus", amount=1000, player=lookalike)
    refused = [event for event in d.do(command="lock") if type(event) is LockRefused]
    assert refused, f"{player!r} on spots 1-4 and {lookalike!r} on spot 5 locked as two players"


def assert_refused_or_counted_as_the_same_player(lookalike: str) -> None:
    """Spots 1-4 of "P-1" and spot 5 of ``lookalike``: the lookalike is refused where it is
    parsed, or the lock refuses five spots of one player naming both ids (red team 5)."""
    from controller.core.table_events import CommandAccepted, CommandRefused, LockRefused
    from controller.settings.validation import InputError
    from tests.support.table import Driver

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

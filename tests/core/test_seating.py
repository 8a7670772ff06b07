"""Who is at the table: the player the dealer names at a spot (``seat_player``, from the touch
screen's keypad or a card reader) and the dealer signed in (``change_dealer``). Before them,
only ``place``'s player named a player, so every hand dealt from the screen was unrated, and
no hand said who dealt it."""

from __future__ import annotations

from typing import Any

from controller.settings.table_config import build_table, default_config_path, load_config
from tests.support.table import Driver


def of(events: list[Any], kind: str) -> list[Any]:
    return [event for event in events if type(event).__name__ == kind]


def play_a_hand(d: Driver) -> list[Any]:
    """One Cali LowBall hand on spot 1, dealt to the end (the spot checks, then folds)."""
    start = len(d.events)
    d.do(command="place", spot=1, wager="ante", amount=1000)
    d.do(command="place", spot=1, wager="xtra_bonus", amount=1000)
    d.do(command="lock")
    deck = iter("As 9c Kd 2s 3c 4d 5h 6h 7h 8h".split())
    while (hand := d.table.hand) is not None:
        step = hand.next_step()
        if step.kind == "decision":
            d.do(command="decide", spot=1, decision="check" if "check" in step.options
                 else "fold")
        else:
            d.card(next(deck))
    return d.events[start:]


def test_a_seated_player_is_named_on_every_wager_and_settlement_hand_after_hand() -> None:
    d = Driver()
    d.do(command="open")
    d.do(command="seat_player", spot=1, player="4417 0098")
    first = play_a_hand(d)
    (locked,) = of(first, "WagersLocked")
    assert {wager.player for wager in locked.wagers} == {"4417 0098"}
    assert {settled.player for settled in of(first, "WagerSettled")} == {"4417 0098"}
    d.do(command="open")
    second = play_a_hand(d)                     # the name stays with the spot
    assert {settled.player for settled in of(second, "WagerSettled")} == {"4417 0098"}
    assert replayed(d.events, "cali_lowball") == d.table.snapshot()


def test_an_unrated_player_replaces_the_named_one_between_hands() -> None:
    d = Driver()
    d.do(command="open")
    d.do(command="seat_player", spot=1, player="Pat Smith")
    d.do(command="place", spot=1, wager="ante", amount=1000)
    d.do(command="place", spot=1, wager="xtra_bonus", amount=1000)
    assert d.table.snapshot()["seated"] == {"1": "Pat Smith"}
    d.do(command="seat_player", spot=1, player="")   # before the lock: unrated after all
    assert d.table.snapshot()["seated"] == {}
    d.do(command="lock")
    (locked,) = of(d.events, "WagersLocked")
    assert {wager.player for wager in locked.wagers} == {""}


def test_a_place_naming_another_player_names_that_one_for_its_hand() -> None:
    d = Driver()
    d.do(command="open")
    d.do(command="seat_player", spot=1, player="Pat Smith")
    d.do(command="place", spot=1, wager="ante", amount=1000, player="Kim Lee")
    d.do(command="place", spot=1, wager="xtra_bonus", amount=1000)
    d.do(command="lock")
    (locked,) = of(d.events, "WagersLocked")
    assert {wager.player for wager in locked.wagers} == {"Kim Lee"}


def test_players_and_dealers_change_only_between_hands() -> None:
    d = Driver()
    d.do(command="open")
    d.do(command="place", spot=1, wager="ante", amount=1000)
    d.do(command="place", spot=1, wager="xtra_bonus", amount=1000)
    d.do(command="lock")
    (refused,) = d.do(command="seat_player", spot=1, player="Pat Smith")
    assert "between hands" in refused.reason
    (refused,) = d.do(command="change_dealer", dealer="Dana")
    assert "between hands" in refused.reason
    assert d.table.allowed()["seating"] == []


def test_every_hand_names_its_dealer_and_the_change_is_journaled() -> None:
    d = Driver()
    d.do(command="change_dealer", dealer="Dana")
    d.do(command="open")
    first = play_a_hand(d)
    assert of(first, "HandStarted")[0].dealer == "Dana"
    accepted = d.do(command="change_dealer", dealer="Badge 0412")[0]
    assert (accepted.command, accepted.arguments) == ("change_dealer",
                                                      '{"dealer":"Badge 0412"}')
    d.do(command="open")
    assert of(play_a_hand(d), "HandStarted")[0].dealer == "Badge 0412"
    (refused,) = d.do(command="change_dealer", dealer="Badge 0412")
    assert "already the dealer" in refused.reason
    assert replayed(d.events, "cali_lowball")["dealer"] == "Badge 0412"


def test_dealer_status_names_the_dealer_and_the_players_for_the_next_hand() -> None:
    from controller.cli.dealer_status import status_lines

    d = Driver()
    assert "dealer: none signed in" in status_lines(d.table.snapshot(), 1, {})
    d.do(command="change_dealer", dealer="Dana")
    d.do(command="open")
    d.do(command="seat_player", spot=3, player="4417")
    lines = status_lines(d.table.snapshot(), 9, {})
    assert "dealer: Dana" in lines and "players for the next hand: spot 3 4417" in lines


def replayed(events: list[Any], game: str) -> dict[str, Any]:
    """The snapshot of a table rebuilt from ``events`` alone, as a start replays them."""
    table = build_table(load_config(default_config_path(game)))
    table.replay(events)
    return table.snapshot()

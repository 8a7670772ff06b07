"""The console's sign-in turns under a guesser.

Red team 8: the last changes (archived replay, the claim ledger, the console's sign-in
turns, the vocabularies) attacked from outside.

Each test states the behaviour the project promises and is marked xfail (strict) while the
hole is open: a fix turns it into a pass, and strict makes the suite say so."""

from __future__ import annotations

from typing import Any


def _under_a_guesser(now: list[float]) -> Any:
    from controller.console.sessions import CONSOLE_FAILURES, Sessions

    sessions = Sessions(15, {}, clock=lambda: now[0])
    for guess in range(CONSOLE_FAILURES):
        sessions.failed(f"10.1.{guess}.1")
    return sessions


def test_a_turn_is_one_check_under_a_guesser() -> None:
    from controller.console.sessions import SPACING_S

    now = [0.0]
    sessions = _under_a_guesser(now)
    now[0] += SPACING_S
    checked = 0
    for name in ("alice", "bob", "carol", "dave", "erin", "frank"):
        if sessions.locked_for("10.66.0.1") == 0:   # sign_in's look, then the check
            checked += 1
            sessions.failed("10.66.0.1")
        now[0] += 0.1
    assert checked == 1, f"{checked} credentials checked within one turn of {SPACING_S} s"


def test_a_full_waiting_line_does_not_keep_the_supervisor_out() -> None:
    from controller.console.sessions import MAX_WAITING

    now = [0.0]
    sessions = _under_a_guesser(now)
    guessers = [f"2001:db8::{index:x}" for index in range(MAX_WAITING)]
    for guesser in guessers:                         # each asks once, within the first minute
        sessions.locked_for(guesser)
        now[0] += 60.0 / MAX_WAITING
    checked, turn = 0, 0
    while now[0] < 11 * 60:                          # ten more minutes
        for _ in range(17):                          # a guesser's request, round the line
            guesser = guessers[turn % MAX_WAITING]
            turn += 1
            if sessions.locked_for(guesser) == 0:
                sessions.failed(guesser)
                sessions.locked_for(guesser)             # and back in line at once
        if int(now[0]) % 2 == 0 and sessions.locked_for("10.0.0.7") == 0:
            checked += 1                             # the supervisor, every 2 s
        now[0] += 1.0
    assert checked > 0, "the supervisor was kept out of line for ten minutes"


def test_a_dealers_sign_in_does_not_buy_guesses_at_a_supervisors_credential() -> None:
    from controller.console.sessions import CONSOLE_FAILURES, SPACING_S, WINDOW_S, Sessions

    now = [0.0]
    sessions = Sessions(15, {}, clock=lambda: now[0])
    screens = [f"2001:db8::{index:x}" for index in range(256)]
    for screen in screens:                  # first, the dealer's account signed in on each
        assert sessions.locked_for(screen) == 0
        sessions.signed_in_from(screen, "dealer")   # (what app.py does on a dealer's success)
    for guess in range(CONSOLE_FAILURES):   # then the guessing starts: the console slows
        sessions.failed(screens[guess])
    assert sessions.locked_for("10.9.9.9") > 0
    checked = 0
    while now[0] < WINDOW_S:
        for screen in screens:              # any name: the table tries every supervisor's
            if sessions.locked_for(screen) == 0:
                sessions.failed(screen)
                checked += 1
        now[0] += 1.0
    assert checked <= WINDOW_S / SPACING_S + 1, (
        f"{checked} supervisor credentials checked in one minute under a guesser")

"""A guesser cannot keep the real supervisor from signing in.

Red team 7: what the sixth round's fixes left open.

Each test states the behaviour the project promises; each was an open hole (xfail strict)
until its fix landed."""

from __future__ import annotations

from typing import Any


def _guesser_against(sessions: Any, now: list[float], minutes: float,
                     supervisor_every_s: float) -> int:
    """A guesser with twenty addresses takes every sign-in slot the spacing opens (the app's
    order: a sign-in is refused while :meth:`locked_for` says wait, else checked; a wrong one
    counts as failed). A supervisor (the right credential) tries every ``supervisor_every_s``
    from her own machine. The number of her tries that were checked."""
    from controller.console.sessions import SPACING_S

    checked, next_try, step = 0, 60.0, 0.05   # she comes a minute into the attack
    guesses, last_from = 0, [-100.0] * 20
    while now[0] < minutes * 60:
        # The guesser fires as soon as the console would check a sign-in (it polls cheaply:
        # a refusal while spaced is counted against nothing), from whichever of its addresses
        # has not failed in the last 15 s (at most 4 a minute each: none is ever locked out).
        for machine, last in enumerate(last_from):
            address = f"10.6.6.{machine}"
            if now[0] - last > 15.0 and sessions.locked_for(address) == 0:
                sessions.failed(address)
                guesses, last_from[machine] = guesses + 1, now[0]
                break
        if now[0] >= next_try:
            if sessions.locked_for("10.0.0.7") == 0:
                checked += 1
            next_try += supervisor_every_s
        now[0] += step
    # every turn the spacing opened was taken, by the guesser or by her
    assert guesses + checked >= minutes * 60 / (SPACING_S + step) - 2, \
        "the guesser did not keep up"
    return checked


def test_a_guesser_cannot_keep_the_real_supervisor_from_signing_in() -> None:
    from controller.console.sessions import Sessions

    now = [0.0]
    sessions = Sessions(15, {}, clock=lambda: now[0])
    # Ten minutes of a guesser; the supervisor retries every 2 s all along.
    checked = _guesser_against(sessions, now, minutes=10, supervisor_every_s=2.0)
    assert checked > 0, "the supervisor was refused at every try for ten minutes"

"""A guesser spread over many addresses at the console's sign-in.

Red team 6: the held mark (controller/daemon/held_mark.py) attacked from outside."""

from __future__ import annotations


def test_a_guesser_spread_over_many_addresses_is_held_whatever_names_it_gives() -> None:
    from controller.console.sessions import FAILURES, Sessions

    now = [0.0]
    sessions = Sessions(15, {"alice": "0" * 64}, clock=lambda: now[0])
    for guess in range(FAILURES * 20):                 # 100 guesses within one minute
        address, name = f"10.0.{guess}.1", f"alice{guess}"
        if sessions.locked_for(address):
            return                                     # held: the guessing stops here
        sessions.failed(address)
        now[0] += 0.5
    raise AssertionError(f"{FAILURES * 20} wrong credentials in {now[0]:.0f} s, none held")

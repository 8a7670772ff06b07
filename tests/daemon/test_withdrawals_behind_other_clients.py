"""A withdrawal behind other clients' traffic ends withdrawn.

Red team 9: what landed in the last two sessions (the console's sign-in turns and /64
grouping, the player key, the command channel's frames and withdrawals) attacked from
outside.

Each test states the behaviour the project promises and is marked xfail (strict) while the
hole is open: a fix turns it into a pass, and strict makes the suite say so.

Red team 10: what landed in the last two sessions (the console's sign-in line and lock-outs,
the supervisor-name lookalike check, the command channel's deferred turns) attacked from
outside.

Each test states the behaviour the project promises and is marked xfail (strict) while the
hole is open: a fix turns it into a pass, and strict makes the suite say so."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.withdrawals import withdrawal_behind_others


@pytest.mark.parametrize("between", ["many frames", "32 withdrawals"])
def test_a_command_and_its_withdrawal_waiting_together_end_withdrawn(
        tmp_path: Path, between: str) -> None:
    from controller.daemon.command_channel import MAX_WITHDRAWALS_PER_TURN

    withdrawal, replies = withdrawal_behind_others(
        tmp_path, *((1, 100_000) if between == "many frames" else (MAX_WITHDRAWALS_PER_TURN, 0)),
        turns=30)
    assert withdrawal["withdrawn"] == ["open-0001"], (
        f"the withdrawn command was carried out: {replies}")


@pytest.mark.xfail(strict=True, reason="command_channel.serve_turn defers the commands read "
                   "MAX_DEFERRED_TURNS turns at most, then carries them out: the ROUTER takes "
                   "one message per client in turn, and a message whole, so a withdrawal "
                   "behind more than MAX_DEFERRED_TURNS * MAX_WITHDRAWALS_PER_TURN other "
                   "clients, or a message of more than MAX_DEFERRED_TURNS * DRAIN_FRAMES "
                   "frames, is read after its command was carried out")
@pytest.mark.parametrize("between", ["many clients", "many frames"])
def test_a_command_and_its_withdrawal_end_withdrawn_behind_more_than_the_deferred_turns_read(
        tmp_path: Path, between: str) -> None:
    from controller.daemon.command_channel import MAX_DEFERRED_TURNS, MAX_WITHDRAWALS_PER_TURN
    from controller.stream.frames import DRAIN_FRAMES
    from tests.support.withdrawals import withdrawal_behind_others

    # another client's message of too many frames, or other clients', one withdrawal each
    withdrawal, replies = withdrawal_behind_others(
        tmp_path, *((1, (MAX_DEFERRED_TURNS + 4) * DRAIN_FRAMES) if between == "many frames"
                    else ((MAX_DEFERRED_TURNS + 2) * MAX_WITHDRAWALS_PER_TURN, 0)),
        turns=8 * MAX_DEFERRED_TURNS)
    assert withdrawal["withdrawn"] == ["open-0001"], (
        f"the withdrawn command was carried out: {replies}")

"""Power loss, short version (``python -m bench.power_loss`` kills every boundary of a hand).

The real daemon runs as a process over simulators on ptys; a hand of each game is played
through the command channel and the simulated shoe, and the daemon is SIGKILLed at a journal
boundary (as soon as the journal, read from this process, reaches that seq), restarted, the
held hand continued and finished. :func:`bench.power_loss.check_run` then proves: the journal
verifies and the kill left it exactly at a transaction boundary; the settlements equal
``controller.settings.scenario.replay``'s, each wager settled once; every card dealt once; no seq
published twice or with other bytes than the journal's; the meter equals the unkilled run's.

The kill points are: a wager placed, the lock, a card mid-deal, a decision (Cali LowBall) and
the last card (the settlement transaction). Then one kill per game at a random instant of the
hand, the daemon kept down longer than the 0.8 s after which the earlier shoe protocol gave a
card up, and a card dealt meanwhile if the table waits for one (the bench runs 30 a game).
"""

from __future__ import annotations

import pytest

from bench import power_loss

SCENARIOS = {"cali_lowball": "cali_check_bet_win", "three_card_lowball": "tcl_prog_five_high"}


@pytest.fixture(scope="module")
def baselines() -> dict[str, power_loss.RunResult]:
    return {game: power_loss.run_once(game, name) for game, name in SCENARIOS.items()}


def kill_points(baseline: power_loss.RunResult) -> dict[str, int]:
    """Named boundaries of the unkilled run's journal."""
    view = {seq: kind for seq, kind in _inputs(baseline)}
    firsts: dict[str, list[int]] = {}
    for seq, kind in sorted(view.items()):
        firsts.setdefault(kind, []).append(seq)
    cards = firsts["shoe_card"]
    points = {"place": firsts["wager_placed"][0], "lock": firsts["hand_started"][0],
              "mid_card": cards[len(cards) // 2], "last_card": cards[-1]}
    if "decide" in firsts:
        points["decision"] = firsts["decide"][0]
    return points


def _inputs(baseline: power_loss.RunResult) -> list[tuple[int, str]]:
    """(boundary seq, what the transaction was) for each transaction of the unkilled run."""
    return baseline.inputs


@pytest.mark.parametrize("game", sorted(SCENARIOS))
def test_sigkill_at_journal_boundaries_loses_nothing(baselines: dict[str, power_loss.RunResult],
                                                     game: str, capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    baseline = baselines[game]
    assert not baseline.problems, baseline.problems
    points = kill_points(baseline)
    survived = 0
    for name, seq in points.items():
        result = power_loss.run_once(game, SCENARIOS[game], seq)
        assert result.killed_at_seq == seq, (name, result)
        assert result.restarts == 1
        assert not result.problems, (name, seq, result.problems)
        assert result.meter == baseline.meter, (name, result.meter, baseline.meter)
        assert result.settlements == baseline.settlements
        assert not result.lost_cards, (name, result.lost_cards)
        survived += 1
    with capsys.disabled():
        print(f"\npower loss {game}: {survived}/{len(points)} kill points survived "
              f"({', '.join(f'{name}@{seq}' for name, seq in points.items())})")


@pytest.mark.parametrize("game", sorted(SCENARIOS))
def test_sigkill_between_card_ack_and_journal_commit_loses_no_card(game: str) -> None:
    result = power_loss.run_once(game, SCENARIOS[game], in_flight_card=1)
    print(f"in-flight kill {game}: journal at {result.killed_at_seq}, "
          f"lost {result.lost_cards}, problems {result.problems}")
    assert not result.problems, result.problems          # the hand still settles correctly
    assert not result.lost_cards, f"cards that left the shoe but not in the journal: " \
                                  f"{result.lost_cards}"


@pytest.mark.parametrize("game", sorted(SCENARIOS))
def test_sigkill_at_a_random_instant_with_a_slow_restart_loses_no_card(game: str) -> None:
    summary = power_loss.random_campaign(game, SCENARIOS[game], kills=1, seed=14,
                                         downtime=(0.9, 1.2), log=print)
    assert summary["failed"] == [], summary["failed"]
    assert summary["lost_cards"] == [] and summary["misassigned"] == []

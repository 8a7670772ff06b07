"""The soak, short version (``python -m bench.pipeline soak --hands 1000000`` is the long one):
hands of each game through engine + table + journal (durability batched), money conserved
every hand and over the run (sum of nets = players' net = -house result; the progressive
meter = seed + contributions - jackpots + reseeds), the journal verifies afterwards."""

from __future__ import annotations

import pytest

from bench import pipeline


@pytest.mark.slow
@pytest.mark.parametrize("game", ["cali_lowball", "three_card_lowball"])
def test_a_short_soak_conserves_money_and_the_journal_verifies(game: str) -> None:
    result = pipeline.soak(300, game, sample_every=100, seed=7, segment_hands=100,
                           verify_every=1, verbose=False)
    assert result["hands"] == 300
    assert result["wager_nets"] == result["players_net"] == -result["house_result"]
    if game == "three_card_lowball":
        assert result["meter"] == result["meter_seed"] + result["contributions"] - \
            result["jackpots"] + result["reseeds"]
        assert result["contributions"] > 0
    assert result["journal_segments"] == result["journal_segments_verified"] == 3
    assert result["journal_records_verified"] == result["records"]


def test_the_long_soak_verifies_the_first_every_nth_and_the_last_journal_segment() -> None:
    result = pipeline.soak(50, "cali_lowball", sample_every=10, seed=3, segment_hands=10,
                           verify_every=2, verbose=False)
    assert result["journal_segments"] == 5
    assert result["journal_segments_verified"] == 3            # segments 1, 3 and 5
    assert 0 < result["journal_records_verified"] < result["records"]

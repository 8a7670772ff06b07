"""The shoe's card count is how the table learns that a card left the shoe and never arrived.
A count of 1 means the shoe was shuffled or reset; in the middle of a hand, with no device
fault or reset journaled, nothing legitimate brings the count back to 1: a shoe that lies, or
that power-cycled unreported after losing a card, then hides every card it lost."""

from __future__ import annotations

from tests.support.table import Driver, cali_hand


def test_a_count_back_to_1_in_the_middle_of_a_hand_is_not_dealt_silently() -> None:
    d = Driver()
    cali_hand(d)
    d.cards("As 9c")                 # counts 1 and 2
    # Card count 3 (Kd) leaves the shoe and is never reported; the shoe's next report starts
    # its count again at 1.
    d.card("7h", count=1)
    assert d.table.state == "PAUSED", (
        f"{d.table.state}: 7h was dealt ({d.table.snapshot()['hand']['cards']}) though count 3 "
        f"never arrived")

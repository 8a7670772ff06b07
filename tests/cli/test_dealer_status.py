"""``lowball-table dealer status``: the hand's players and cards (discarded cards as
discarded), and the progressive awards the dealer must pay, in dollars, to whom."""

from __future__ import annotations

import subprocess
import sys

from controller.cli.dealer_status import shown, status_lines

from tests.support.rig import RigFactory
from tests.support.table import Driver


def three_card_hand_to_the_draw() -> Driver:
    """Seat 1 (player P-7) and seat 2 (no player named), every wager with the progressive;
    seat 1 stands on 5-3-2, seat 2 discards the 6c from 6-4-3."""
    d = Driver("three_card_lowball")
    d.do(command="open")
    for spot, player in ((1, "P-7"), (2, "")):
        for wager, amount in (("ante", 1000), ("bonus", 1000), ("progressive", 100)):
            d.do(command="place", spot=spot, wager=wager, amount=amount, player=player)
    d.do(command="lock")
    d.cards("5d 6c 7c 3c 4d 6h 2s 3h 4s")
    d.do(command="decide", spot=1, decision="stand")
    d.do(command="decide", spot=2, decision="discard:6c")
    return d


def test_a_discarded_card_is_shown_as_discarded_beside_the_spots_player() -> None:
    d = three_card_hand_to_the_draw()
    lines = status_lines(d.table.snapshot(), 40, {"broken_at": None})
    assert "  spot 1 (P-7): 5\u2666 3\u2663 2\u2660" in lines
    assert "  spot 2: 4\u2666 3\u2665  discarded: 6\u2663" in lines
    ascii_lines = status_lines(d.table.snapshot(), 40, {"broken_at": None}, ascii_only=True)
    assert "  spot 2: 4d 3h  discarded: 6c" in ascii_lines
    assert d.table.snapshot()["hand"]["players"] == {"1": "P-7"}


def test_the_awards_to_pay_name_amount_in_dollars_spot_and_player() -> None:
    d = three_card_hand_to_the_draw()
    d.cards("Ac")  # seat 2 draws to 4-3-A; the dealer stands on 7-6-4
    assert d.table.hand is None
    lines = status_lines(d.table.snapshot(), 60, {"broken_at": None})
    at = lines.index(f"pay the progressive awards of hand {d.table.last_settled_hand}:")
    assert lines[at + 1:] == ["  spot 1, player P-7: 5-high $3.00",
                              "  spot 2, no player named: 4-high $10.00"]


def test_text_a_terminal_would_obey_is_shown_harmless() -> None:
    assert shown("P7\x1b[2J\u202e") == "P7?[2J?"


def test_the_command_line_prints_it_from_the_daemon(rig_factory: RigFactory) -> None:  # noqa: F811
    rig = rig_factory("three_card_lowball")
    assert rig.ask({"command": "open"})["ok"]
    assert rig.ask({"command": "place", "spot": 4, "wager": "ante", "amount": 1000,
                    "player": "card 88"})["ok"]
    done = subprocess.run([sys.executable, "-m", "controller.cli.main", "dealer", "--connect",
                           rig.stream.commands, "status"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "TCL-01  three_card_lowball paytable-1  OPEN" in done.stdout
    assert "next: place wagers, then lock" in done.stdout
    assert "journal verified through seq " in done.stdout

"""Hand rankings: pure functions from cards to a strength (lower is better) and a hand class."""

from controller.core.rankings import ace_to_five, three_card

__all__ = ["ace_to_five", "three_card"]

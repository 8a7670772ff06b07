"""The game engines: pure state machines driven by cards and decisions (no device I/O)."""

from controller.core.games.base import (
    Decision,
    DuplicateCard,
    Hand,
    IllegalAction,
    NextStep,
    WagerError,
)
from controller.core.games.cali_lowball import CaliLowballHand
from controller.core.games.three_card_lowball import ThreeCardLowballHand

#: game name (as in config and scenarios) -> engine
ENGINES: dict[str, type[Hand]] = {
    CaliLowballHand.game: CaliLowballHand,
    ThreeCardLowballHand.game: ThreeCardLowballHand,
}

__all__ = ["ENGINES", "CaliLowballHand", "Decision", "DuplicateCard", "Hand", "IllegalAction",
           "NextStep", "ThreeCardLowballHand", "WagerError"]

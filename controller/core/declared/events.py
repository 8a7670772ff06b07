"""What a hand yields: typed, immutable events, in the order they happen.

The engines append every event to the hand's history and return the ones each action caused.
The daemon journals and publishes them as they are; the scenario runner prints the settlement
records. :data:`KINDS` names each event type on the wire (``CardDealt`` -> ``card_dealt``).

A card's recipient (``to``) is a seat number (1-7, from the dealer's left), or one of
``"dealer"``, ``"community"`` (the Cali LowBall flop) and ``"burn"``.

Every event is a record (:mod:`controller.core.records` says what a record is and why), as
are the table's own events (:mod:`controller.core.table_events`).
"""

from __future__ import annotations

from typing import Final, NamedTuple, Union

from controller.core.cards import Card  # noqa: F401  (the "Card" of the records' _hints)
from controller.core.records import (  # noqa: F401  (public here too, for importers of the events)
    Record as Record,
    field_hints as field_hints,
    is_record_type as is_record_type,
    kinds_of as kinds_of,
)
from controller.core.vocabulary import (  # noqa: F401  (the vocabularies of the records' _hints)
    Game,
    HandClass,
    Phase,
    PlayerDecision,
    ProgressiveAward,
    WagerKey,
    WagerResult,
)

Recipient = Union[int, str]
DEALER: Final = "dealer"
COMMUNITY: Final = "community"
BURN: Final = "burn"


class Wager(NamedTuple):
    """One locked wager: seat, wager key (``ante``, ``xtra_bonus``, ...), amount in cents,
    and ``player``, the id of who plays the seat as the dealer gave it ("" when none was)."""

    seat: int
    wager: WagerKey
    amount: int
    player: str = ""


class WagersLocked(NamedTuple):
    """The hand has begun: these wagers are locked and will each be settled exactly once."""

    game: Game
    paytable: str
    wagers: tuple[Wager, ...]


class MeterContributed(NamedTuple):
    """Progressive wagers locked: their contribution is added to the jackpot meter."""

    before: int
    contribution: int
    after: int


class PhaseStarted(NamedTuple):
    phase: Phase


class CardDealt(NamedTuple):
    """A card from the shoe, assigned to its recipient by the deal order."""

    card: Card
    to: Recipient
    phase: Phase


class DecisionsDue(NamedTuple):
    """These seats must now act, choosing one of ``options``."""

    phase: Phase
    seats: tuple[int, ...]
    options: tuple[PlayerDecision, ...]


class DecisionMade(NamedTuple):
    """A player's decision, keyed in by the dealer. ``raised`` is the Raise wager it adds;
    ``cards`` are the cards a Three Card Lowball player discards."""

    seat: int
    decision: PlayerDecision
    raised: int = 0
    cards: tuple[Card, ...] = ()


class HouseWay(NamedTuple):
    """The Three Card Lowball dealer's draw, computed by the controller and shown to the
    dealer: the cards to discard from ``hand`` and the house-way rule that chose them."""

    hand: tuple[Card, ...]
    discard: tuple[Card, ...]
    rule: str


class HandShown(NamedTuple):
    """A final hand at the showdown (folded hands too, with ``folded`` set)."""

    to: Recipient
    cards: tuple[Card, ...]
    hand_class: HandClass
    folded: bool = False


class WagerSettled(NamedTuple):
    """One wager settled. ``net`` is what the player gains (+) or loses (-); a push is 0.
    ``result`` is ``win``, ``lose``, ``push`` or ``forfeit`` (lost to a fold). ``player``: the
    seat's player id ("" when none was given)."""

    seat: int
    wager: WagerKey
    amount: int
    result: WagerResult
    net: int
    player: str = ""


class ProgressiveAwarded(NamedTuple):
    """A progressive award: ``jackpot`` (from the meter) or a fixed award (from the house).
    ``player``: the seat's player id ("" when none was given), whom the dealer pays."""

    seat: int
    award: ProgressiveAward
    amount: int
    player: str = ""


class MeterSettled(NamedTuple):
    """The meter over the hand: ``after = before + contributions - awards + reseed``.
    ``awards`` is the jackpot paid from the meter; ``reseed`` the seed the house puts back
    after a jackpot (applied once a supervisor has verified the hand-pay)."""

    before: int
    contributions: int
    awards: int
    reseed: int
    after: int


class HandSettled(NamedTuple):
    """The hand is over. ``house_result`` is the house's gain: minus the players' total net
    over every wager and award."""

    players_net: int
    house_result: int


Event = Union[WagersLocked, MeterContributed, PhaseStarted, CardDealt, DecisionsDue,
              DecisionMade, HouseWay, HandShown, WagerSettled, ProgressiveAwarded,
              MeterSettled, HandSettled]

KINDS: dict[type, str] = kinds_of(Event)

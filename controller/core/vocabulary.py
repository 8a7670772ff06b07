"""The words the table speaks, each vocabulary declared once.

Every value an event carries from a fixed set is a member of one of these enums. They are
:class:`~enum.StrEnum`: a member *is* its text (``Phase.FLOP == "flop"``, the same hash, the
same JSON), so the journal's and the stream's bytes are the text itself, and the wire schema
(:mod:`controller.stream.wire`) lists each field's allowed values from the enum. The table's
states are :class:`controller.core.table_events.TableState`.
"""

from __future__ import annotations

import sys
from enum import StrEnum


class Game(StrEnum):
    """The games a table deals."""

    CALI_LOWBALL = "cali_lowball"
    THREE_CARD_LOWBALL = "three_card_lowball"


_GAME_NAMES: dict[str, str] = {Game.CALI_LOWBALL: "Cali LowBall",
                               Game.THREE_CARD_LOWBALL: "Three Card Lowball"}


def game_name(game: object) -> str:
    """The game's name as the layout and the screens print it (``game``: a :class:`Game` or
    its text); anything else as given."""
    return _GAME_NAMES.get(game, str(game)) if isinstance(game, str) else str(game)


class Phase(StrEnum):
    """A step of a hand (both games; ``showdown`` ends each)."""

    # Cali LowBall
    HOLE_CARDS = "hole cards"
    PRE_FLOP = "pre-flop"
    FLOP = "flop"
    POST_FLOP = "post-flop"
    # Three Card Lowball
    DEAL = "deal"
    PLAYER_DRAWS = "player draws"
    DEALER_DRAW = "dealer draw"
    SHOWDOWN = "showdown"


class PlayerDecision(StrEnum):
    """What a player may decide when asked (Cali LowBall: raise or check pre-flop, bet or fold
    post-flop; Three Card Lowball: stand or discard)."""

    RAISE = "raise"
    CHECK = "check"
    BET = "bet"
    FOLD = "fold"
    STAND = "stand"
    DISCARD = "discard"


class WagerKey(StrEnum):
    """A wager on a spot (Cali LowBall: ante, X-Tra Bonus, Lowdown Bonus and the Raise made
    in play; Three Card Lowball: ante, bonus, progressive)."""

    ANTE = "ante"
    XTRA_BONUS = "xtra_bonus"
    LOWDOWN_BONUS = "lowdown_bonus"
    RAISE = "raise"
    BONUS = "bonus"
    PROGRESSIVE = "progressive"


class WagerResult(StrEnum):
    """How a wager settled: ``forfeit`` is lost to a fold."""

    WIN = "win"
    LOSE = "lose"
    PUSH = "push"
    FORFEIT = "forfeit"


class HandClass(StrEnum):
    """What a final hand is called at the showdown (``hand_shown``) and in the paytables.

    Cali LowBall (five cards, ace-to-five low): ``5-high`` to ``K-high``, then ``pair``,
    ``two pair``, ``three of a kind``, ``full house``, ``four of a kind``. Three Card Lowball:
    ``4-2-A one color`` (all three cards one color), ``4-2-A two color``, ``4-3-A``, ``5-high``
    to ``K-high``, then ``pair``, ``flush``, ``straight``, ``three of a kind``, ``straight
    flush``. Each ranking lists its game's classes best first
    (:data:`controller.core.rankings.ace_to_five.HAND_CLASSES`,
    :data:`controller.core.rankings.three_card.HAND_CLASSES`)."""

    FOUR_TWO_ACE_ONE_COLOR = "4-2-A one color"
    FOUR_TWO_ACE_TWO_COLOR = "4-2-A two color"
    FOUR_THREE_ACE = "4-3-A"
    FIVE_HIGH = "5-high"
    SIX_HIGH = "6-high"
    SEVEN_HIGH = "7-high"
    EIGHT_HIGH = "8-high"
    NINE_HIGH = "9-high"
    TEN_HIGH = "10-high"
    JACK_HIGH = "J-high"
    QUEEN_HIGH = "Q-high"
    KING_HIGH = "K-high"
    PAIR = "pair"
    TWO_PAIR = "two pair"
    FLUSH = "flush"
    STRAIGHT = "straight"
    THREE_OF_A_KIND = "three of a kind"
    STRAIGHT_FLUSH = "straight flush"
    FULL_HOUSE = "full house"
    FOUR_OF_A_KIND = "four of a kind"


#: The no-pair classes by their top card's rank (5 to 13, king).
HIGH_CARD_CLASSES = {5: HandClass.FIVE_HIGH, 6: HandClass.SIX_HIGH, 7: HandClass.SEVEN_HIGH,
                     8: HandClass.EIGHT_HIGH, 9: HandClass.NINE_HIGH, 10: HandClass.TEN_HIGH,
                     11: HandClass.JACK_HIGH, 12: HandClass.QUEEN_HIGH, 13: HandClass.KING_HIGH}


def text_of(member: str) -> str:
    """A member's text as a plain, interned ``str``, for the game core's hot paths.

    A member compares and hashes as its text, but a dict keyed by plain text looks a member up
    through the generic path, several times slower; and a look-up that finds the very same
    string object skips comparing the characters (``str(member)`` makes a new copy each time,
    ``sys.intern`` returns the one the source's literals share)."""
    return sys.intern(str(member))


class ProgressiveAward(StrEnum):
    """A Three Card Lowball progressive award, highest first: the jackpot comes from the
    meter, the others are fixed awards from the house."""

    JACKPOT = "jackpot"
    PAT_ONE_COLOR = "pat-4-2-A-one-color"
    PAT_TWO_COLOR = "pat-4-2-A-two-color"
    FOUR_HIGH = "4-high"
    FIVE_HIGH = "5-high"


class SpotLamp(StrEnum):
    """What a betting spot's lamp shows (the spot controller driver,
    :data:`drivers.spots.LAMPS`, gives each its colour and mode)."""

    ATTRACT = "attract"  # between hands: spots chase to draw players in
    WAGER_ACCEPTED = "wager_accepted"  # the progressive wager on this spot is accepted
    CHANGED_AFTER_LOCK = "changed_after_lock"  # the wager sensor changed after the lock
    TO_ACT = "to_act"  # this player is to act
    WIN = "win"
    LOSE = "lose"
    PUSH = "push"
    PROGRESSIVE_WINNER = "progressive_winner"
    PROGRESSIVE_CLOSED = "progressive_closed"  # the linked pool is out of reach: no progressive
    OFF = "off"  # the table is closed: every spot dark


class FaultCode(StrEnum):
    """Why a hand is PAUSED (a ``fault`` event's ``code``)."""

    DUPLICATE_CARD = "duplicate_card"  # a card already in this hand (misdeal)
    UNKNOWN_TAG = "unknown_tag"  # an RFID tag not in the registered deck
    UNEXPECTED_CARD = "unexpected_card"  # a card when the hand expects none
    CARD_MISSING = "card_missing"  # the shoe's card count skipped: a card never arrived
    SHOE_CONFLICT = "shoe_conflict"  # the shoe named another card for a count already taken
    COUNT_WENT_BACK = "count_went_back"  # the shoe's card count went back mid-hand (misdeal)
    SHOE_JAM = "shoe_jam"
    SHOE_MISREAD = "shoe_misread"
    SHOE_DOOR = "shoe_door"
    SHOE_EMPTY = "shoe_empty"
    SHOE_ERROR = "shoe_error"  # a shoe fault the table has no name for
    DEVICE_LOST = "device_lost"  # a device went silent or was unplugged mid-hand
    CONTROLLER_RESTART = "controller_restart"  # the controller restarted with a hand in play


class ShoeFaultCode(StrEnum):
    """A ``device_fault`` event's ``code``: a fault the shoe reported (the codes of its
    protocol, :class:`drivers.shoe_events.FaultCode`), or ``CONFLICT``, a frame its driver
    refused because it named another card for a sequence number already taken."""

    JAM = "JAM"  # a card is stuck in the exit
    MISREAD = "MISREAD"  # a card left but its face could not be read
    DOOR = "DOOR"  # the shoe door was opened
    EMPTY = "EMPTY"  # asked to deal with no cards left
    TAGUNKNOWN = "TAGUNKNOWN"  # a card's RFID tag is not in the deck's registry
    DUPLICATE = "DUPLICATE"  # the shoe saw the same card twice
    CONFLICT = "CONFLICT"


class Device(StrEnum):
    """What a ``device_status`` or ``fault`` is about."""

    SHOE = "shoe"
    SPOTS = "spots"
    METER = "meter"
    CONTROLLER = "controller"


class DeviceCondition(StrEnum):
    """A ``device_status`` event's ``status``."""

    CONNECTED = "connected"
    LOST = "lost"
    FRAME_REJECTED = "frame_rejected"  # the shoe sent a frame the driver could not read
    LINE_REJECTED = "line_rejected"  # the spot controller sent a line the driver could not read
    RESTARTED = "restarted"  # the controller itself, after a restart with a hand in play


class WagerSource(StrEnum):
    """Who reported a ``wager_placed`` or ``wager_cancelled``."""

    DEALER = "dealer"  # keyed in by the dealer
    SENSOR = "sensor"  # a progressive wager sensor saw a chip placed or removed


class Role(StrEnum):
    """Who gave a command (``command_accepted``, ``command_refused``): decided by the credential
    the command channel authenticated, never by a field the client sends."""

    DEALER = "dealer"
    SUPERVISOR = "supervisor"


class PoolState(StrEnum):
    """A linked pool as the floor publishes it: ``open``, or ``locked`` while a hit awaits
    its supervisor's verification."""

    OPEN = "open"
    LOCKED = "locked"


class LinkStatus(StrEnum):
    """A ``pool_link`` event's ``status``: the floor's pool channel heard from, or silent for
    longer than the table's ``stale_after_ms``."""

    CONNECTED = "connected"
    LOST = "lost"

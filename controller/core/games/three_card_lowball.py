"""Three Card Lowball: three-card low against the dealer, one draw each, and a progressive.

Wagers: Ante and Bonus (equal, both required), optional Progressive (one fixed amount). The
hand runs:

1. deal: three rounds, one card to each seat from seat 1 upward, then the dealer;
2. player draws: seat by seat in order, each stands or discards one or two cards and receives
   as many replacements before the next seat acts;
3. dealer draw: the controller computes the house way; the dealer discards and draws by it;
4. showdown.

Settlement: dealer lower -> Ante and Bonus lose; tie -> both push; player lower -> Ante pays
1:1 and Bonus pays by the paytable (push for a class the paytable does not list).

Progressive, one award per seat that made the wager, the highest that applies:
jackpot (player and dealer both dealt a pat 4-2-A, whoever wins; the meter is shared by the
winners), pat 4-2-A one color and lower, pat 4-2-A two color and lower, final hand 4-high and
lower, final hand 5-high and lower. The progressive wager itself is never returned.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from controller.core.events import (
    DEALER,
    HandShown,
    HouseWay,
    MeterContributed,
    MeterSettled,
    ProgressiveAwarded,
    Recipient,
)
from controller.core.games.base import (
    LOSE,
    PUSH,
    WIN,
    Decision,
    Hand,
    IllegalAction,
    WagerError,
)
from controller.core.cards import Card
from controller.core.games.house_way import house_way
from controller.core.money import format_cents
from controller.core.rankings import three_card
from controller.core.table_settings import GameSetup
from controller.core.vocabulary import (
    Game,
    HandClass,
    Phase,
    PlayerDecision,
    ProgressiveAward,
    WagerKey,
    text_of,
)

STAND: Final = PlayerDecision.STAND
DISCARD: Final = PlayerDecision.DISCARD
DEAL: Final = Phase.DEAL
PLAYER_DRAWS: Final = Phase.PLAYER_DRAWS
DEALER_DRAW: Final = Phase.DEALER_DRAW
SHOWDOWN: Final = Phase.SHOWDOWN
MAX_DISCARD = 2

JACKPOT, PAT_ONE_COLOR, PAT_TWO_COLOR, FOUR_HIGH, FIVE_HIGH = ProgressiveAward
#: Progressive awards, highest first.
AWARDS = tuple(ProgressiveAward)
_PAT_AWARD = {three_card.ONE_COLOR: PAT_ONE_COLOR, three_card.TWO_COLOR: PAT_TWO_COLOR}
_FIVE_HIGH_CLASS: Final = text_of(HandClass.FIVE_HIGH)


class ThreeCardLowballHand(Hand):
    game = text_of(Game.THREE_CARD_LOWBALL)
    WAGER_KEYS = (WagerKey.ANTE, WagerKey.BONUS, WagerKey.PROGRESSIVE)
    REQUIRED_WAGERS = (WagerKey.ANTE, WagerKey.BONUS)
    WAGER_NAMES = {WagerKey.ANTE: "Ante", WagerKey.BONUS: "Bonus",
                   WagerKey.PROGRESSIVE: "Progressive"}
    HAS_PROGRESSIVE = True
    #: The progressive wager is one fixed amount.
    RULED_WAGERS = (WagerKey.PROGRESSIVE,)

    def __init__(self, setup: GameSetup, wagers: Mapping[int, Mapping[str, int]],
                 meter: object = None, players: Mapping[int, str] | None = None) -> None:
        """``meter``: the jackpot meter before this hand (the progressive's seed if None); typed
        ``object`` as anything passed is refused with a WagerError naming it."""
        super().__init__(setup, wagers, players)
        progressive = setup.progressive
        meter_before = progressive.seed if meter is None else meter
        if isinstance(meter_before, bool) or not isinstance(meter_before, int) \
                or meter_before < 0:
            raise WagerError(f"meter must be a whole number of cents of 0 or more, "
                             f"not {meter_before!r}")
        self.meter_before: int = meter_before
        entries = sum(1 for seat in self.seats if "progressive" in self.wagers[seat])
        self.contributions = entries * progressive.contribution
        self.meter = self.meter_before + self.contributions
        if self.contributions:
            self.history.append(MeterContributed(self.meter_before, self.contributions,
                                                 self.meter))
        self.dealt: dict[Recipient, tuple[Card, ...]] = {}
        self.discarded: dict[Recipient, tuple[Card, ...]] = {seat: () for seat in self.seats}
        self.dealer_discard: tuple[Card, ...] = ()
        self._drawing = list(self.seats)
        self._start_phase(DEAL)
        self._expect_cards([*self.seats, DEALER] * 3)

    @classmethod
    def start(cls, setup: GameSetup, wagers: Mapping[int, Mapping[str, int]],
              meter: int, players: Mapping[int, str] | None = None) -> Hand:
        return cls(setup, wagers, meter, players)

    @classmethod
    def wager_problem(cls, setup: GameSetup, seat: int, wager: str, amount: int) -> str | None:
        """The progressive wager is one fixed amount."""
        if wager == "progressive" and amount != setup.progressive.wager:
            return f"spot {seat}: the progressive wager is " \
                   f"{format_cents(setup.progressive.wager)}, not {format_cents(amount)}"
        return None

    # -- steps ----------------------------------------------------------------------------

    def _cards_complete(self) -> None:
        if self.phase == DEAL:
            self.dealt = {who: tuple(cards) for who, cards in self.cards.items()}
            self._start_phase(PLAYER_DRAWS)
            self._next_player_draw()
        elif self.phase == PLAYER_DRAWS:
            self._next_player_draw()
        else:
            self._showdown()

    def _next_player_draw(self) -> None:
        if self._drawing:
            self._ask((self._drawing.pop(0),), (STAND, DISCARD))
            return
        self._start_phase(DEALER_DRAW)
        dealer_hand = self.dealt[DEALER]
        draw = house_way(dealer_hand)
        self.dealer_discard = draw.discard
        self.history.append(HouseWay(dealer_hand, draw.discard, draw.rule))
        if draw.discard:
            self._expect_cards([DEALER] * len(draw.discard))
        else:
            self._showdown()

    def _verify_game_decision(self, seat: int, decision: Decision) -> None:
        if decision.action != DISCARD:
            return
        cards = decision.cards
        if not 1 <= len(cards) <= MAX_DISCARD:
            raise IllegalAction(f"spot {seat}: discard 1 or 2 cards (or stand), not {len(cards)}")
        if len(set(cards)) != len(cards):
            raise IllegalAction(f"spot {seat}: the same card is named twice in the discard")
        for card in cards:
            if card not in self.dealt[seat]:
                held = " ".join(str(held) for held in self.dealt[seat])
                raise IllegalAction(f"spot {seat}: cannot discard {card}, the spot holds {held}")

    def _apply_decision(self, seat: int, decision: Decision) -> None:
        self._record_decision(seat, decision)
        if decision.action == DISCARD:
            self.discarded[seat] = decision.cards
            self._expect_cards([seat] * len(decision.cards))
        else:
            self._next_player_draw()

    # -- showdown -------------------------------------------------------------------------

    def final_hand(self, recipient: Recipient) -> tuple[Card, ...]:
        discarded = self.dealer_discard if recipient == DEALER else self.discarded[recipient]
        return tuple(card for card in self.cards[recipient] if card not in discarded)

    def _showdown(self) -> None:
        self._start_phase(SHOWDOWN)
        history = self.history
        dealer_hand = self.final_hand(DEALER)
        dealer_strength, dealer_class = three_card.strength_and_class(dealer_hand)
        history.append(HandShown(DEALER, dealer_hand, dealer_class, False))
        dealer_pat = three_card.hand_class(self.dealt[DEALER]) in three_card.PAT_4_2_A_CLASSES
        bonus_odds = self.setup.paytable.for_wager("bonus")
        awards: dict[int, str] = {}
        players_net = 0
        players = self.players
        for seat in self.seats:
            player = players.get(seat, "")  # once a seat, not once a wager
            hand = self.final_hand(seat)
            strength, hand_class = three_card.strength_and_class(hand)
            history.append(HandShown(seat, hand, hand_class, False))
            wagers = self.wagers[seat]
            ante, bonus = wagers["ante"], wagers["bonus"]
            if strength < dealer_strength:
                odds = bonus_odds.get(hand_class)
                net = self._settle(seat, player, "ante", ante, WIN) + \
                    self._settle(seat, player, "bonus", bonus, WIN if odds else PUSH, odds)
            else:
                result = PUSH if strength == dealer_strength else LOSE
                net = self._settle(seat, player, "ante", ante, result) + \
                    self._settle(seat, player, "bonus", bonus, result)
            progressive = wagers.get("progressive")
            if progressive:
                net += self._settle(seat, player, "progressive", progressive, LOSE)
                award = self._award(seat, hand_class, strength < dealer_strength, dealer_pat)
                if award:
                    awards[seat] = award
            players_net += net
        players_net += self._pay_awards(awards)
        self._finish(players_net)

    def _award(self, seat: int, final_class: str, lower: bool, dealer_pat: bool) -> str | None:
        dealt_class = three_card.hand_class(self.dealt[seat])
        if dealer_pat and dealt_class in three_card.PAT_4_2_A_CLASSES:
            return JACKPOT
        if not lower:
            return None
        if dealt_class in _PAT_AWARD:
            return _PAT_AWARD[dealt_class]
        if final_class in three_card.FOUR_HIGH_CLASSES:
            return FOUR_HIGH
        if final_class == _FIVE_HIGH_CLASS:
            return FIVE_HIGH
        return None

    def _pay_awards(self, awards: dict[int, str]) -> int:
        """Emit each award and the meter's settlement; return the total paid to players."""
        progressive = self.setup.progressive
        fixed: dict[str, int] = {
            PAT_ONE_COLOR: progressive.awards.pat_one_color,
            PAT_TWO_COLOR: progressive.awards.pat_two_color,
            FOUR_HIGH: progressive.awards.four_high, FIVE_HIGH: progressive.awards.five_high}
        winners = sum(1 for award in awards.values() if award == JACKPOT)
        if winners and self.rules.jackpot_split == "equal":
            share = self.meter // winners
            from_meter = share * winners
        else:
            share = from_meter = self.meter if winners else 0
        total = 0
        for seat, award in awards.items():
            amount = share if award == JACKPOT else fixed[award]
            self.history.append(ProgressiveAwarded(seat, award, amount,
                                                   self.players.get(seat, "")))
            total += amount
        reseed = progressive.seed if winners else 0
        self.history.append(MeterSettled(self.meter_before, self.contributions, from_meter,
                                         reseed, self.meter - from_meter + reseed))
        return total

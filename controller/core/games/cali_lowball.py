"""Cali LowBall: ace-to-five low against the dealer, two own cards plus a three-card flop.

Wagers: Ante and X-Tra Bonus (equal, both required), optional Lowdown Bonus, and the Raise
made during play. The hand runs:

1. hole cards: two rounds, one card to each seat from seat 1 upward, then the dealer;
2. pre-flop: every seat raises 3x the ante or checks;
3. flop: three community cards (after a burn card when ``burn_before_flop``);
4. post-flop: a seat that checked bets 1x the ante or folds;
5. showdown: each hand is exactly its two cards plus the three community cards.

Settlement of a seat that did not fold (players win all ties):

- Raise: player lower or tied pays 1:1, player higher loses.
- Ante: as the Raise, but pushes whenever the dealer's hand is a pair of jacks or higher.
- X-Tra Bonus: 10-high or lower pays by the paytable, whatever the comparison; J-high or
  worse pushes (or loses with the hand when ``xtra_bonus_loses_on_loss``).
- Lowdown Bonus: J-high or lower pays by the paytable, whatever the comparison; else loses.

A fold forfeits the Ante and X-Tra Bonus, and the Lowdown Bonus unless
``lowdown_bonus_survives_fold`` (then it is settled on the folded hand).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from controller.core.cards import Card
from controller.core.events import BURN, COMMUNITY, DEALER, HandShown, Recipient, Wager
from controller.core.games.base import FORFEIT, LOSE, PUSH, WIN, Decision, Hand
from controller.core.money import Odds
from controller.core.rankings import ace_to_five
from controller.core.table_settings import GameSetup
from controller.core.vocabulary import Game, Phase, PlayerDecision, WagerKey, text_of

RAISE: Final = PlayerDecision.RAISE
CHECK: Final = PlayerDecision.CHECK
BET: Final = PlayerDecision.BET
FOLD: Final = PlayerDecision.FOLD
HOLE_CARDS: Final = Phase.HOLE_CARDS
PRE_FLOP: Final = Phase.PRE_FLOP
FLOP: Final = Phase.FLOP
POST_FLOP: Final = Phase.POST_FLOP
SHOWDOWN: Final = Phase.SHOWDOWN
#: The Raise wager is this multiple of the ante (keyed by text: looked up on every decision,
#: and a text-keyed dict is the fast one; see Hand._KEY_TEXTS).
RAISE_MULTIPLE = {text_of(RAISE): 3, text_of(BET): 1}
#: X-Tra Bonus pays on these (10-high or lower); J-high or worse pushes.
XTRA_BONUS_CLASSES = ace_to_five.HAND_CLASSES[:6]
#: Lowdown Bonus pays on these (J-high or lower); anything worse loses.
LOWDOWN_BONUS_CLASSES = ace_to_five.HAND_CLASSES[:7]
_XTRA_PAYS = frozenset(XTRA_BONUS_CLASSES)


class CaliLowballHand(Hand):
    game = text_of(Game.CALI_LOWBALL)
    WAGER_KEYS = (WagerKey.ANTE, WagerKey.XTRA_BONUS, WagerKey.LOWDOWN_BONUS)
    REQUIRED_WAGERS = (WagerKey.ANTE, WagerKey.XTRA_BONUS)
    WAGER_NAMES = {WagerKey.ANTE: "Ante", WagerKey.XTRA_BONUS: "X-Tra Bonus",
                   WagerKey.LOWDOWN_BONUS: "Lowdown Bonus", WagerKey.RAISE: "Raise"}

    def __init__(self, setup: GameSetup, wagers: Mapping[int, Mapping[str, int]],
                 players: Mapping[int, str] | None = None) -> None:
        super().__init__(setup, wagers, players)
        self.cards[COMMUNITY] = []
        self.cards[BURN] = []
        #: seat -> the Raise wager (3x or 1x ante) once made
        self.raised: dict[int, int] = {}
        self.checked: list[int] = []
        self.folded: set[int] = set()
        self._start_phase(HOLE_CARDS)
        self._expect_cards([*self.seats, DEALER] * 2)

    def wagers_at_stake(self) -> tuple[Wager, ...]:
        return super().wagers_at_stake() + tuple(
            Wager(seat, "raise", amount, self.players.get(seat, ""))
            for seat, amount in sorted(self.raised.items()))

    def _cards_complete(self) -> None:
        if self.phase == HOLE_CARDS:
            self._start_phase(PRE_FLOP)
            self._ask(self.seats, (RAISE, CHECK))
        elif self.phase == FLOP:
            if self.checked:
                self._start_phase(POST_FLOP)
                self._ask(tuple(self.checked), (BET, FOLD))
            else:
                self._showdown()

    def _apply_decision(self, seat: int, decision: Decision) -> None:
        action = decision.action
        raised = self.wagers[seat]["ante"] * RAISE_MULTIPLE.get(action, 0)
        if raised:
            self.raised[seat] = raised
        elif action == CHECK:
            self.checked.append(seat)
        else:
            self.folded.add(seat)
        self._record_decision(seat, decision, raised)
        if self._due:
            return
        if self.phase == PRE_FLOP:
            self._start_phase(FLOP)
            self._expect_cards([BURN, COMMUNITY, COMMUNITY, COMMUNITY]
                               if self.rules.burn_before_flop else [COMMUNITY] * 3)
        else:
            self._showdown()

    def final_hand(self, recipient: Recipient) -> tuple[Card, ...]:
        return (*self.cards[recipient], *self.cards[COMMUNITY])

    def _showdown(self) -> None:
        self._start_phase(SHOWDOWN)
        history = self.history
        dealer_hand = self.final_hand(DEALER)
        dealer_strength, dealer_class = ace_to_five.strength_and_class(dealer_hand)
        history.append(HandShown(DEALER, dealer_hand, dealer_class, False))
        ante_pushes = ace_to_five.is_pair_of_jacks_or_higher(dealer_hand)
        paytable = self.setup.paytable
        xtra_odds = paytable.for_wager("xtra_bonus")
        lowdown_odds = paytable.for_wager("lowdown_bonus")
        rules = self.rules
        players_net = 0
        players = self.players
        for seat in self.seats:
            player = players.get(seat, "")  # once a seat, not once a wager
            hand = self.final_hand(seat)
            strength, hand_class = ace_to_five.strength_and_class(hand)
            folded = seat in self.folded
            history.append(HandShown(seat, hand, hand_class, folded))
            wagers = self.wagers[seat]
            ante, xtra = wagers["ante"], wagers["xtra_bonus"]
            lowdown = wagers.get("lowdown_bonus")
            if folded:
                net = (self._settle(seat, player, "ante", ante, FORFEIT)
                       + self._settle(seat, player, "xtra_bonus", xtra, FORFEIT))
                if lowdown:
                    if rules.lowdown_bonus_survives_fold:
                        net += self._settle_lowdown(seat, player, lowdown, hand_class, lowdown_odds)
                    else:
                        net += self._settle(seat, player, "lowdown_bonus", lowdown, FORFEIT)
            else:
                player_wins = strength <= dealer_strength
                main = WIN if player_wins else LOSE
                net = self._settle(seat, player, "ante", ante, PUSH if ante_pushes else main)
                if hand_class in _XTRA_PAYS:
                    net += self._settle(seat, player, "xtra_bonus", xtra, WIN,
                                        xtra_odds[hand_class])
                elif rules.xtra_bonus_loses_on_loss and not player_wins:
                    net += self._settle(seat, player, "xtra_bonus", xtra, LOSE)
                else:
                    net += self._settle(seat, player, "xtra_bonus", xtra, PUSH)
                if lowdown:
                    net += self._settle_lowdown(seat, player, lowdown, hand_class, lowdown_odds)
                net += self._settle(seat, player, "raise", self.raised[seat], main)
            players_net += net
        self._finish(players_net)

    def _settle_lowdown(self, seat: int, player: str, amount: int, hand_class: str,
                        lowdown_odds: Mapping[str, Odds]) -> int:
        odds = lowdown_odds[hand_class] if hand_class in lowdown_odds else None
        return self._settle(seat, player, "lowdown_bonus", amount, WIN if odds else LOSE, odds)

"""A simulated dealer: plays hands continuously against the running daemon, as a dealer
would, through the same command channel and the same (simulated) shoe.

Each hand: the players' wagers are placed on a few random spots, a fresh shuffled deck goes
into the shoe, the wagers are locked, and then the dealer does what the table asks for: a card
(the shoe deals one), a player's decision (keyed in by a simple player strategy), a continue
after a device fault, a supervisor's void after a misdeal, a supervisor's jackpot
verification. It is for the demo and for soak runs; it never decides anything the table
computes (payouts, the Three Card dealer's house way).
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from typing import Any

import zmq

from controller.core.cards import Card, parse_card
from controller.stream.command_client import CommandClient
from controller.stream.command_replies import Refused, Status

DEFAULT_SPOTS = (1, 2, 3, 4, 5, 6, 7)


class SimulatedDealer:
    def __init__(self, *, command_endpoint: str, shoe: Any, game: str,
                 supervisor_credential: str | None = None, seed: int | None = None,
                 pace_s: float = 0.4, card_wait_s: float = 3.0,
                 context: zmq.Context[zmq.Socket[bytes]] | None = None):
        self.shoe = shoe
        self.game = game
        self.rng = random.Random(seed)
        self.pace_s = pace_s
        self.card_wait_s = card_wait_s
        self.client = CommandClient(command_endpoint, context=context, by="sim-dealer",
                                    credential=supervisor_credential)
        self.hands_played = 0

    # -- talking to the daemon --------------------------------------------------------------

    def ask(self, request: dict[str, Any], supervisor: bool = False) -> None:
        """Give a command (the table's answer shows in the next status; a refusal is
        journaled by the table)."""
        self.client.ask(request, supervisor=supervisor)

    def status(self) -> dict[str, Any]:
        reply = self.client.ask({"command": "status"})
        assert isinstance(reply, Status), reply
        return reply.state

    # -- playing ----------------------------------------------------------------------------

    def run(self, stop: threading.Event, hands: int | None = None) -> None:
        """Play until ``stop`` is set (or ``hands`` hands have settled)."""
        try:
            while not stop.is_set() and (hands is None or self.hands_played < hands):
                self.step(stop)
        finally:
            self.client.close()

    def step(self, stop: threading.Event) -> None:
        """Do the one thing the table needs now."""
        state = self.status()
        if state["jackpot_pending"]:
            stop.wait(self.pace_s * 3)
            self.ask({"command": "verify_jackpot"}, supervisor=True)
        elif state["state"] == "CLOSED":
            self.ask({"command": "open"})
        elif state["state"] == "PAUSED":
            stop.wait(self.pace_s * 2)
            if state["fault"]["recoverable"]:
                self.ask({"command": "continue"})
            elif state["fault"].get("burnable"):
                self.ask({"command": "burn", "reason": f"card out of play: "
                                                       f"{state['fault']['code']}"},
                         supervisor=True)
            else:
                self.ask({"command": "void", "reason": f"misdeal: {state['fault']['code']}"},
                         supervisor=True)
        elif state["state"] in ("OPEN", "SETTLED") and state["hand"] is None:
            if state["state"] == "SETTLED":
                self.hands_played += 1
                stop.wait(self.pace_s * 3)
            self.new_hand()
        elif state["hand"] is not None:
            self.play(state, stop)

    def new_hand(self) -> None:
        spots = sorted(self.rng.sample(DEFAULT_SPOTS, self.rng.randint(2, 6)))
        progressive: list[int] = []
        for spot in spots:
            ante = self.rng.choice((500, 1000, 2500, 5000))
            second = "xtra_bonus" if self.game == "cali_lowball" else "bonus"
            self.ask({"command": "place", "spot": spot, "wager": "ante", "amount": ante,
                      "player": f"player-{spot}"})
            self.ask({"command": "place", "spot": spot, "wager": second, "amount": ante})
            if self.game == "cali_lowball" and self.rng.random() < 0.5:
                self.ask({"command": "place", "spot": spot, "wager": "lowdown_bonus",
                          "amount": 500})
            if self.game == "three_card_lowball" and self.rng.random() < 0.7:
                self.ask({"command": "place", "spot": spot, "wager": "progressive",
                          "amount": 100})
                progressive.append(spot)
        self.shoe.load(seed=self.rng.randrange(2**32))
        reply = self.client.ask({"command": "lock"})
        if isinstance(reply, Refused) and "the pool link is down" in reply.error:
            # a linked table whose pool is out of reach: the progressive comes off, the rest
            # is dealt
            for spot in progressive:
                self.ask({"command": "cancel", "spot": spot, "wager": "progressive"})
            self.ask({"command": "lock"})

    def play(self, state: dict[str, Any], stop: threading.Event) -> None:
        hand = state["hand"]
        step = hand["next"]
        if step["kind"] == "card":
            seq = state["hand_number"], sum(len(c) for c in hand["cards"].values())
            self.shoe.deal(1)
            self._wait_for_change(seq, stop)
            stop.wait(self.pace_s / 4)
            return
        if step["kind"] == "decision":
            spot = step["seats"][0]
            # what the table shows: a Cali LowBall player's cards are face down to the dealer
            # (the player decides on them; this simulated one decides without them)
            cards = [parse_card(text) for text in hand["cards"].get(str(spot), []) if text]
            community = [parse_card(text) for text in hand["cards"].get("community", [])]
            decision = self.decision(hand["phase"], cards, community)
            stop.wait(self.pace_s / 2)
            self.ask({"command": "decide", "spot": spot, "decision": decision})

    def _wait_for_change(self, before: tuple[int, int], stop: threading.Event) -> None:
        deadline = time.monotonic() + self.card_wait_s
        while not stop.is_set() and time.monotonic() < deadline:
            state = self.status()
            hand = state["hand"]
            now = (state["hand_number"],
                   sum(len(c) for c in hand["cards"].values()) if hand else -1)
            if now != before or state["state"] == "PAUSED":
                return
            stop.wait(0.01)

    def decision(self, phase: str, cards: list[Card], community: list[Card]) -> str:
        """A plain player strategy (the table does not care how players decide)."""
        ranks = [card.rank for card in cards]
        if phase in ("pre-flop", "post-flop") and not cards:  # face down: a player's whim
            return ("raise" if self.rng.random() < 0.3 else "check") if phase == "pre-flop" \
                else ("bet" if self.rng.random() < 0.75 else "fold")
        if phase == "pre-flop":
            paired = len(set(ranks)) < len(ranks)
            return "raise" if not paired and max(ranks) <= 5 else "check"
        if phase == "post-flop":
            counts = Counter(ranks + [card.rank for card in community])
            return "bet" if max(counts.values()) == 1 else "fold"
        # Three Card Lowball: break pairs, throw cards above seven (at most two).
        keep: list[Card] = []
        discard: list[Card] = []
        for card in sorted(cards, key=lambda c: c.rank):
            if card.rank > 7 or any(k.rank == card.rank for k in keep):
                discard.append(card)
            else:
                keep.append(card)
        discard = discard[-2:]
        return "discard:" + ",".join(str(c) for c in discard) if discard else "stand"

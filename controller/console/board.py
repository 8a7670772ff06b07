"""What the dealer's screen shows, computed from the stream: the board.

:class:`Board` keeps what the table's snapshot does not say but the screen must (who folded,
the settled hand's cards and discards, the settlement wager by wager with the progressive
awards, faults and alarms) by noting each event of the table family
(:mod:`controller.stream.table_family`), and joins it with the latest snapshot into one
*view*: plain JSON for the browser, with the buttons valid now. The browser draws the view and
decides nothing: a button is on the screen only if the view lists it.

While a hand is in play its cards are the snapshot's, as the table shows them: a hidden card
is ``null`` (drawn as a card back), never its name. Once the hand is over the table family
sends the cards it held, and the board shows the whole hand until the next one starts.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from controller.core.card_faces import printed_card, printed_text
from controller.core.games import CaliLowballHand, ThreeCardLowballHand
from controller.core.money import format_cents
from controller.core.table_view import void_lines
from controller.core.vocabulary import Game, game_name

#: The wagers a dealer places from the chip tray, per game, in the layout's order.
WAGERS = {Game.CALI_LOWBALL: CaliLowballHand.WAGER_KEYS,
          Game.THREE_CARD_LOWBALL: ThreeCardLowballHand.WAGER_KEYS}
#: The chip tray, in cents.
CHIPS = (100, 500, 2500, 10000, 50000)
#: Faults the screen keeps (the most recent).
KEPT = 8


class Board:
    """The screen's memory of the stream, for one table."""

    def __init__(self, spots: int = 7) -> None:
        self.spots = spots
        self.hand_id: str | None = None
        #: the dealer's discard by the house way (the players' are known at the showdown)
        self.discards: dict[str, list[str]] = {}
        #: the settled hand's cards (the table family sends them once the hand is over)
        self.cards: dict[str, list[str]] = {}
        #: each holder's final hand at the showdown (``hand_shown``)
        self.shown: dict[str, list[str]] = {}
        self.decisions: dict[str, str] = {}
        self.settlements: list[dict[str, Any]] = []
        self.awards: list[dict[str, Any]] = []
        self.settled_hand: str | None = None
        self.devices: dict[str, str] = {}
        self.faults: deque[dict[str, Any]] = deque(maxlen=KEPT)
        self.last_seq = 0

    def note(self, seq: int, kind: str, hand_id: str | None, data: dict[str, Any]) -> None:
        """One event of the stream, in seq order, as published (cards as text)."""
        self.last_seq = seq
        if kind == "hand_started":
            self.hand_id = data["hand_id"]
            self.discards, self.decisions, self.cards, self.shown = {}, {}, {}, {}
            self.settlements, self.awards = [], []
        elif kind == "card_dealt":
            self.cards.setdefault(str(data["to"]), []).append(data["card"])
        elif kind == "decision_made":
            self.decisions[str(data["seat"])] = data["decision"]
        elif kind == "hand_shown":
            self.shown[str(data["to"])] = list(data["cards"])
        elif kind == "house_way":
            if data["discard"]:
                self.discards["dealer"] = list(data["discard"])
        elif kind == "wager_settled":
            self.settlements.append(dict(data))
            self.settled_hand = hand_id
        elif kind == "progressive_awarded":
            self.awards.append(dict(data))
            self.settled_hand = hand_id
        elif kind == "device_status":
            self.devices[data["device"]] = data["status"]
        elif kind == "device_fault":
            self.devices[data["device"]] = f"fault {data['code']}"
        elif kind == "fault":
            self.faults.append({"seq": seq, **data})

    def settled_discards(self) -> dict[str, list[str]]:
        """The settled hand's discards: each holder's cards not in its final hand (a Three Card
        Lowball draw; a Cali LowBall hand keeps every card), the dealer's by the house way."""
        gone = {who: [card for card in held if card not in self.shown[who]]
                for who, held in self.cards.items() if who in self.shown}
        return {**{who: cards for who, cards in gone.items() if cards}, **self.discards}

    def payouts(self) -> list[dict[str, Any]]:
        """The last settled hand, spot by spot: whom (the player the settled records name,
        "" when none), what to pay and what to collect, wager by wager, progressive awards
        apart (highlighted on the screen), and the total."""
        spots: dict[int, dict[str, Any]] = {}
        for entry in self.settlements:
            spot = spots.setdefault(entry["seat"], {"spot": entry["seat"], "lines": [],
                                                    "total": 0, "player": ""})
            spot["player"] = spot["player"] or entry.get("player", "")
            net = entry["net"]
            action = "pay" if net > 0 else "collect" if net < 0 else "return"
            shown = net if net > 0 else -net if net < 0 else entry["amount"]
            spot["lines"].append({"wager": entry["wager"], "result": entry["result"],
                                  "action": action, "amount": shown, "text": format_cents(shown),
                                  "award": False})
            spot["total"] += net
        for award in self.awards:
            spot = spots.setdefault(award["seat"], {"spot": award["seat"], "lines": [],
                                                    "total": 0, "player": ""})
            spot["player"] = spot["player"] or award.get("player", "")
            spot["lines"].append({"wager": "progressive", "result": award["award"],
                                  "action": "pay", "amount": award["amount"],
                                  "text": format_cents(award["amount"]), "award": True})
            spot["total"] += award["amount"]
        for spot in spots.values():
            spot["total_text"] = format_cents(spot["total"])
        return [spots[spot] for spot in sorted(spots)]

    def view(self, state: dict[str, Any], seq: int, *, connected: bool = True) -> dict[str, Any]:
        """Everything the dealer's screen shows, from the snapshot at ``seq``."""
        hand = state.get("hand")
        settled = state.get("state") == "SETTLED" and hand is None \
            and self.settled_hand == state.get("last_settled_hand")
        in_hand = hand is not None and hand.get("hand_id") == self.hand_id
        discards = (hand or {}).get("discarded") or {} if in_hand else \
            self.settled_discards() if settled else {}
        #: where a hidden holder's discards lie among its cards (their names are hidden)
        places = (hand or {}).get("discarded_places") or {} if in_hand else {}
        wagers = (hand or {}).get("wagers") or state.get("layout") or {}
        # After settlement the cards stay on the screen until the next hand starts.
        cards = (hand or {}).get("cards") or (self.cards if settled else {})
        lamps = state.get("lamps") or {}
        step = (hand or {}).get("next") or {}
        # who plays each spot: the hand's players while it is in play, else those seated for
        # the next hand (seat_player, or a place's player)
        players = (hand.get("players") if hand is not None else state.get("seated")) or {}
        spots = []
        for number in range(1, self.spots + 1):
            key = str(number)
            spot_wagers = wagers.get(key) or {}
            held = cards.get(key) or []
            gone = discards.get(key, [])
            hidden_gone = places.get(key, [])
            spots.append({
                "spot": number,
                "wagers": [{"wager": wager, "amount": amount, "text": format_cents(amount)}
                           for wager, amount in spot_wagers.items()],
                "cards": [{"card": card, "discarded": card in gone if card is not None
                           else at in hidden_gone} for at, card in enumerate(held)],
                "lamp": lamps.get(key, "off"),
                "player": players.get(key, ""),
                "decision": self.decisions.get(key) if in_hand or settled else None,
                "to_act": step.get("kind") == "decision" and number in step.get("seats", ()),
                "to_deal": step.get("kind") == "card" and step.get("to") == number,
            })
        dealer_gone = discards.get("dealer", [])
        dealer = [{"card": card, "discarded": card in dealer_gone}
                  for card in cards.get("dealer") or []]
        community = [{"card": card, "discarded": False} for card in cards.get("community") or []]
        house_way = (hand or {}).get("house_way")
        game = state.get("game", "")
        return {
            "type": "view", "seq": seq, "connected": connected,
            "table_id": state.get("table_id"), "game": game, "game_name": game_name(game),
            "paytable": state.get("paytable"), "state": state.get("state"),
            "hand_number": state.get("hand_number"), "hand_id": (hand or {}).get("hand_id"),
            "phase": (hand or {}).get("phase"),
            "banner": banner(state),
            "spots": spots, "dealer": dealer, "community": community,
            "house_way": house_way,
            "meter": state.get("meter"),
            "meter_text": None if state.get("meter") is None else format_cents(state["meter"]),
            "jackpot": jackpot_view(state.get("jackpot_pending")),
            "fault": state.get("fault"),
            "payouts": self.payouts() if settled else [],
            "voided": void_view(state.get("last_void")) if hand is None else None,
            "devices": dict(self.devices),
            "actions": actions(state),
            "seating": list((state.get("allowed") or {}).get("seating") or []),
            "dealer_name": state.get("dealer") or "",
            "supervisor_actions": supervisor_actions(state),
            "wager_kinds": list(WAGERS.get(game, ())),
            "chips": [{"amount": chip, "text": format_cents(chip)} for chip in CHIPS],
        }


def void_view(summary: dict[str, Any] | None) -> dict[str, Any] | None:
    """After a void, until the next hand: what to give back to whom, line by line (the
    table's summary, :func:`controller.core.table_view.void_summary`; it names no card)."""
    if not summary:
        return None
    return {**summary, "lines": void_lines(summary)}


def jackpot_view(pending: dict[str, Any] | None) -> dict[str, Any] | None:
    if pending is None:
        return None
    return {**pending, "text": format_cents(pending["amount"])}


def banner(state: dict[str, Any]) -> str:
    """The next step, in one line a dealer reads across the table."""
    hand, fault, pending = state.get("hand"), state.get("fault"), state.get("jackpot_pending")
    expecting: str = state.get("expecting", "")
    if state.get("state") == "PAUSED" and fault is not None:
        way_out = "Clear it, then touch Continue" if fault["recoverable"] \
            else "Call a supervisor to burn the card or void the hand" \
            if fault.get("burnable") else "Call a supervisor to void the hand"
        return printed_text(f"Paused: {fault['detail']}. {way_out}")
    if pending is not None:
        return f"JACKPOT {format_cents(pending['amount'])} on spot " \
               f"{', '.join(map(str, pending['seats']))}: call a supervisor to verify the hand-pay"
    if hand is None and state.get("last_void") and state.get("state") == "OPEN":
        return "Hand voided: give the wagers back as listed, then place wagers for the next hand"
    if hand is None:
        prompts = {"CLOSED": "Table closed: touch Open",
                   "OPEN": "Place wagers from the chip tray, then Lock",
                   "SETTLED": "Pay and collect, then place wagers for the next hand"}
        return prompts.get(state.get("state", ""), expecting)
    step = hand["next"]
    if step["kind"] == "card":
        to = step["to"]
        if to == "dealer" and hand.get("house_way"):
            way = hand["house_way"]
            discard = " ".join(printed_card(card) for card in way["discard"])
            return f"House way: dealer discards {discard}, then deal the dealer a card" \
                if discard else "House way: dealer stands"
        who = "the dealer" if to == "dealer" else f"spot {to}" if isinstance(to, int) \
            else f"the {to}"
        return f"Deal a card to {who}"
    if step["kind"] == "decision":
        seats = step["seats"]
        named = ", ".join(map(str, seats))
        return f"Spot{'s' if len(seats) > 1 else ''} {named}: {' or '.join(step['options'])}"
    return expecting


def actions(state: dict[str, Any]) -> list[dict[str, Any]]:
    """The dealer's buttons: the commands the table takes now, as its snapshot lists them
    (:meth:`controller.core.table.Table.allowed`); the screen derives none itself."""
    return list((state.get("allowed") or {}).get("dealer") or [])


def supervisor_actions(state: dict[str, Any]) -> list[dict[str, Any]]:
    """A signed-in supervisor's buttons valid now (the dealer's screen never shows them)."""
    return list((state.get("allowed") or {}).get("supervisor") or [])

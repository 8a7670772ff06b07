"""Whether a member table's ``jackpot_pending`` is a jackpot the pool owes.

A table's claim is not the pool's proof: a compromised table can journal anything. Before the
pool pays a hit, the hand it names is read back from the table's own events in the floor store
(every seq below the claim is stored: the pool reads a table only up to its resume point):

* the claim's ``hand_id`` is its record's, of at most :data:`MAX_HAND_ID` characters (the pool
  channel's bound: a claim the channel cannot carry is no claim);
* the hand was started (``hand_started``, Three Card Lowball) and settled, not voided, before
  the claim;
* each seat named had the pool's progressive wager locked (the hand's ``wagers_locked``);
* the cards dealt make the jackpot by the game's rule (the core's ranking): the dealer's three
  dealt cards and each named seat's are a pat 4-2-A, from one deck; and the seats named are
  exactly the seats with the progressive wager whose dealt hand is a pat 4-2-A.

A claim that fails any check is :class:`Disputed`, the problem named; the pool holds it for a
supervisor (``floor_pool_disputes``) and pays nothing.
"""

from __future__ import annotations

from typing import Any

import psycopg

from controller.core.cards import Card, CardError, parse_card
from controller.core.rankings import three_card
from controller.errors import LowballError
from controller.settings.validation import MAX_CENTS
from controller.stream.pool_channel import MAX_HAND_ID

GAME = "three_card_lowball"
DEALER = "dealer"
#: The events of a hand the check reads.
HAND_EVENTS = ("hand_started", "wagers_locked", "card_dealt", "hand_settled", "hand_voided")
DEALT = 3


class Disputed(LowballError, ValueError):
    """A jackpot claim the pool does not pay; the message names what is wrong."""


def claimed_hand(data: object, record_hand_id: str | None) -> str:
    """The hand id a ``jackpot_pending`` claims: bounded, and its record's own."""
    if not isinstance(data, dict):
        raise Disputed("the claim's data is not an object")
    hand_id = data.get("hand_id")
    if not isinstance(hand_id, str) or not 0 < len(hand_id) <= MAX_HAND_ID:
        raise Disputed(f"hand_id: {_shown(hand_id)} is not a hand id of 1 to {MAX_HAND_ID} "
                       "characters")
    if hand_id != record_hand_id:
        raise Disputed(f"hand_id: {_shown(hand_id)} is not its record's hand "
                       f"({_shown(record_hand_id)})")
    return hand_id


def claimed_seats(data: dict[str, Any]) -> tuple[int, ...]:
    value = data.get("seats")
    if not isinstance(value, list) or not value or not all(
            isinstance(seat, int) and not isinstance(seat, bool) and 1 <= seat <= 64
            for seat in value) or len(set(value)) != len(value):
        raise Disputed(f"seats: {_shown(value)} is not a list of distinct seats (1 to 64)")
    return tuple(value)


def claimed_amount(data: dict[str, Any]) -> int:
    value = data.get("amount")
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_CENTS:
        raise Disputed(f"amount: {_shown(value)} is not a whole number of cents from 0 to "
                       f"{MAX_CENTS}")
    return value


def check_hand(connection: psycopg.Connection, table_id: str, seq: int, hand_id: str,
               seats: tuple[int, ...], wager: int) -> int:
    """:class:`Disputed` unless the table's stored events before ``seq`` show hand
    ``hand_id`` dealt a jackpot to exactly ``seats``, each with the pool's progressive
    ``wager`` locked; the seq of the hand's ``hand_started``."""
    rows = connection.execute(
        """SELECT seq, type, message->'data' FROM floor_events
            WHERE table_id = %s AND hand_id = %s AND seq < %s AND type = ANY(%s)
            ORDER BY seq""", (table_id, hand_id, seq, list(HAND_EVENTS))).fetchall()
    starts = [i for i, (_, kind, data) in enumerate(rows)
              if kind == "hand_started" and isinstance(data, dict)
              and data.get("hand_id") == hand_id]
    if not starts:
        raise Disputed(f"hand {hand_id} was never started at {table_id} (no hand_started "
                       f"stored before seq {seq})")
    hand = rows[starts[-1]:]
    if hand[0][2].get("game") != GAME:
        raise Disputed(f"hand {hand_id} is not a game of {GAME}")
    kinds = [kind for _, kind, _ in hand]
    if "hand_voided" in kinds:
        raise Disputed(f"hand {hand_id} was voided")
    if "hand_settled" not in kinds:
        raise Disputed(f"hand {hand_id} was not settled before the claim")
    locked = _progressive_wagers([data for _, kind, data in hand if kind == "wagers_locked"])
    for seat in seats:
        if locked.get(seat) != wager:
            raise Disputed(f"seat {seat} had no progressive wager of {wager} cents locked in "
                           f"hand {hand_id}")
    dealt = _dealt([data for _, kind, data in hand if kind == "card_dealt"])
    if len(dealt.get(DEALER, ())) < DEALT:
        raise Disputed(f"hand {hand_id}: the dealer was not dealt {DEALT} cards")
    if three_card.hand_class(dealt[DEALER][:DEALT]) not in three_card.PAT_4_2_A_CLASSES:
        raise Disputed(f"hand {hand_id}: the dealer's dealt cards are not a pat 4-2-A: no "
                       "jackpot")
    winners = {seat for seat in locked if locked[seat] == wager
               and len(dealt.get(seat, ())) >= DEALT
               and three_card.hand_class(dealt[seat][:DEALT]) in three_card.PAT_4_2_A_CLASSES}
    if set(seats) != winners:
        raise Disputed(f"hand {hand_id}: the cards dealt give the jackpot to seat(s) "
                       f"{sorted(winners) or 'none'}, not {sorted(seats)}")
    return int(hand[0][0])


def _progressive_wagers(locks: list[Any]) -> dict[int, int]:
    """Seat -> the progressive wager locked (the hand's one ``wagers_locked``)."""
    if len(locks) != 1 or not isinstance(locks[0], dict) \
            or not isinstance(locks[0].get("wagers"), list):
        raise Disputed(f"the hand has {len(locks)} readable wagers_locked, not one")
    wagers: dict[int, int] = {}
    for wager in locks[0]["wagers"]:
        if isinstance(wager, dict) and wager.get("wager") == "progressive":
            seat, amount = wager.get("seat"), wager.get("amount")
            if isinstance(seat, int) and isinstance(amount, int) and seat not in wagers:
                wagers[seat] = amount
    return wagers


def _dealt(cards: list[Any]) -> dict[object, tuple[Card, ...]]:
    """Recipient -> the cards dealt to it, in deal order; the cards are one deck's."""
    dealt: dict[object, list[Card]] = {}
    seen: set[Card] = set()
    for data in cards:
        if not isinstance(data, dict) or not isinstance(data.get("to"), (int, str)) \
                or isinstance(data.get("to"), bool):
            raise Disputed(f"a card_dealt of the hand is not readable: {_shown(data)}")
        try:
            card = parse_card(data.get("card"))
        except CardError as error:
            raise Disputed(f"a card_dealt of the hand: {str(error)[:120]}") from None
        if card in seen:
            raise Disputed(f"{card} is dealt twice in the hand")
        seen.add(card)
        dealt.setdefault(data["to"], []).append(card)
    return {to: tuple(held) for to, held in dealt.items()}


def _shown(value: object) -> str:
    """``value`` for a problem's text, cut short (a hostile value may be long)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."

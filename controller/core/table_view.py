"""What the dealer and a late joiner see of a table: the dealer's prompt (what the table waits
for, in the dealer's words) and the snapshot (the table's state as plain data, for a late
joiner and the screens). A view: it reads the table and changes nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from controller.core.events import DEALER, DecisionMade, HouseWay
from controller.core.games import ThreeCardLowballHand
from controller.core.money import format_cents
from controller.core.hidden_cards import table_cards, without_cards
from controller.core.table_states import CLOSED, OPEN, PAUSED, SETTLED

if TYPE_CHECKING:
    from controller.core.table import Table


def expecting(table: Table, *, table_side: bool = False) -> str:
    """What the table waits for, in the dealer's words (``table_side``: naming no hidden
    card, see :func:`snapshot`)."""
    if table.state == PAUSED and table.fault is not None:
        detail = without_cards(table.fault.detail) if table_side else table.fault.detail
        return f"paused: {detail}; {way_out(table.fault.recoverable, table.fault.burnable)}"
    jackpot = table.jackpot
    if jackpot is not None and table.pool is not None and jackpot.claimed is None:
        return f"jackpot on hand {jackpot.hand_id}: waiting for pool {table.pool}'s claim"
    if jackpot is not None:
        amount = jackpot.amount if jackpot.claimed is None else jackpot.claimed.paid
        return f"jackpot {format_cents(amount)} on hand {jackpot.hand_id}: " \
               f"supervisor must verify the hand-pay"
    if table.hand is None:
        return {CLOSED: "table closed", OPEN: "place wagers, then lock",
                SETTLED: "hand settled: place wagers for the next hand"}[table.state]
    step = table.hand.next_step()
    if step.kind == "card":
        who = "the dealer" if step.to == DEALER else (
            f"spot {step.to}" if isinstance(step.to, int) else f"the {step.to}")
        way = house_way(table)
        if way is not None and step.to == DEALER:
            discard = " ".join(str(card) for card in way.discard)
            return f"house way: dealer discards {discard} ({way.rule}); " \
                   f"deal a card to the dealer"
        return f"deal a card to {who} ({table.hand.phase})"
    spots = ", ".join(map(str, step.seats))
    return f"decision from spot{'s' if len(step.seats) > 1 else ''} {spots}: " \
           f"{' or '.join(step.options)}"


def way_out(recoverable: bool, burnable: bool) -> str:
    """Who ends a pause, and how, in the dealer's words (sentence case: it follows a stop)."""
    if recoverable:
        return "clear it, then continue"
    if burnable:
        return "call a supervisor to burn the card or void the hand"
    return "call a supervisor to void the hand"


def house_way(table: Table) -> HouseWay | None:
    """The Three Card Lowball dealer's draw, once the controller has computed it."""
    if table.hand is None:
        return None
    return next((event for event in reversed(table.hand.history)
                 if type(event) is HouseWay), None)


def discarded(table: Table) -> dict[str, list[str]]:
    """The cards each holder of the hand in play has discarded (a Three Card Lowball draw: a
    player's discard, the dealer's by the house way), by seat number or ``dealer``. They are
    among the holder's ``cards`` and no longer part of the hand."""
    if table.hand is None:
        return {}
    gone: dict[str, list[str]] = {}
    for event in table.hand.history:
        if type(event) is DecisionMade and event.cards:
            gone[str(event.seat)] = [str(card) for card in event.cards]
        elif type(event) is HouseWay and event.discard:
            gone[DEALER] = [str(card) for card in event.discard]
    return gone


def snapshot(table: Table, *, table_side: bool = False) -> dict[str, Any]:
    """The table's state as plain data, for a late joiner and the screens.

    ``table_side``: the snapshot for the table's side (the dealer's screen and command line,
    the pit's live view): a hidden card (:mod:`controller.core.hidden_cards`) is ``None``, a
    discard is named only where its holder's cards are shown, and no text names a card. Without
    it, every card (surveillance's)."""
    hand, way = table.hand, house_way(table)
    hand_view = None
    if hand is not None:
        cards: dict[str, list[str | None]]
        gone = discarded(table)
        places: dict[str, list[int]] = {}
        step = hand.next_step()
        if table_side:
            dealt = hand.dealt if isinstance(hand, ThreeCardLowballHand) else None
            cards = table_cards(table.game, hand.phase,
                                step.seats if step.kind == "decision" else (),
                                hand.cards, dealt)
            # a discard is named only where its holder's cards are shown; elsewhere its
            # places among the holder's cards are (a card back, struck through)
            held_by = {str(who): [str(card) for card in held] for who, held in hand.cards.items()}
            places = {who: [at for at, card in enumerate(held_by.get(who, [])) if card in held]
                      for who, held in gone.items()
                      if any(card is None for card in cards.get(who, ()))}
            gone = {who: held for who, held in gone.items() if who not in places}
        else:
            cards = {str(who): [str(card) for card in held]
                     for who, held in hand.cards.items() if held}
        hand_view = {
            "hand_id": table.hand_id, "phase": hand.phase,
            "wagers": {str(spot): dict(amounts) for spot, amounts in hand.wagers.items()},
            "players": {str(seat): player for seat, player in sorted(hand.players.items())},
            "cards": cards,
            "discarded": gone,
            **({"discarded_places": places} if table_side else {}),
            "next": step._asdict(),
            "house_way": None if way is None else {
                "discard": [str(card) for card in way.discard], "rule": way.rule},
        }
    fault = None if table.fault is None else table.fault._asdict()
    if table_side and fault is not None:
        fault["detail"] = without_cards(fault["detail"])
    return {
        "table_id": table.table_id, "game": table.game, "paytable": table.setup.paytable_name,
        "state": table.state.value, "expecting": expecting(table, table_side=table_side),
        "hand_number": table.hand_number,
        "hand": hand_view,
        "layout": {str(spot): dict(amounts) for spot, amounts in table.wagers.items()
                   if amounts},
        "lamps": {str(spot): lamp for spot, lamp in sorted(table.lamps.items())},
        # who plays each spot in the next hand ("seat_player", or a place's player) and the
        # dealer signed in ("change_dealer")
        "seated": {str(spot): player for spot in range(1, table.settings.spots + 1)
                   if (player := table.seated_player(spot))},
        "dealer": table.dealer,
        "meter": table.meter if table.engine.HAS_PROGRESSIVE else None,
        "jackpot_pending": None if table.jackpot is None else {
            "hand_id": table.jackpot.hand_id, "seats": list(table.jackpot.seats),
            "amount": table.jackpot.amount if table.jackpot.claimed is None
            else table.jackpot.claimed.paid},
        "fault": fault,
        "last_settled_hand": table.last_settled_hand,
        "last_settlement": [settlement._asdict() for settlement in table.last_settlement],
        "last_awards": [award._asdict() for award in table.last_awards],
        "last_void": void_summary(table, table_side=table_side),
        # the commands the table takes now (Table.allowed): the screens' buttons
        "allowed": table.allowed(),
    }


def void_summary(table: Table, *, table_side: bool = False) -> dict[str, Any] | None:
    """What the dealer gives back after the last void, until the next hand locks: each spot's
    wagers (and its player) and how many cards go to the discard rack. It names no card (on
    the table's side the supervisor's reason names none either)."""
    if table.last_void is None:
        return None
    voided, cards_out = table.last_void
    names = table.engine.WAGER_NAMES
    spots: dict[int, dict[str, Any]] = {}
    for wager in voided.returned:
        spot = spots.setdefault(wager.seat, {"spot": wager.seat, "player": wager.player,
                                             "wagers": [], "total": 0})
        spot["wagers"].append({"wager": wager.wager, "amount": wager.amount,
                               "name": names.get(wager.wager, wager.wager)})
        spot["total"] += wager.amount
    return {"hand_id": voided.hand_id, "by": voided.by,
            "reason": without_cards(voided.reason) if table_side else voided.reason,
            "returns": [spots[spot] for spot in sorted(spots)], "cards_out": cards_out,
            "contributions_reversed": voided.contributions_reversed}


def void_lines(summary: dict[str, Any]) -> list[str]:
    """The void summary in the dealer's words, one line each: whom to give what back, then the
    cards. Amounts in dollars; no card named."""
    lines = [f"Hand {summary['hand_id']} voided by {summary['by']}: give every wager back"]
    for spot in summary["returns"]:
        wagers = ", ".join(f"{wager.get('name', wager['wager'])} {format_cents(wager['amount'])}"
                           for wager in spot["wagers"])
        player = f" ({spot['player']})" if spot["player"] else ""
        lines.append(f"Spot {spot['spot']}{player}: return {format_cents(spot['total'])} "
                     f"({wagers})")
    cards = summary["cards_out"]
    lines.append(f"Cards: all {cards} card{'s' if cards != 1 else ''} of the hand to the discard "
                 f"rack" if cards else "Cards: none came out of the shoe")
    return lines

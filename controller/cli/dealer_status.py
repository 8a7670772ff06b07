"""``lowball-table dealer status`` in the dealer's words: the table, the dealer signed in, the
players named at the spots for the next hand, the hand in play (each
spot's player and the cards the table shows, the others counted face down; discarded cards as
discarded), the wagers on the layout and the meter in dollars, the progressive awards the dealer
must pay, to whom, and after a void what to give back to whom, until the next hand. Cards are
shown as printed on them (``10♥``), or with the suit's letter (``10h``) where the terminal
cannot print the suits (``ascii_only``).

The status is the daemon's (:class:`controller.stream.command_replies.Status`); a player id
is the dealer's text, shown with anything unprintable replaced (a journal written before
player ids were bounded may hold any text)."""

from __future__ import annotations

from typing import Any

from controller.core.card_faces import printed_card, printed_text
from controller.core.money import format_cents
from controller.core.table_view import void_lines


def shown(text: Any) -> str:
    """Client text as a terminal may print it: every unprintable character a ``?``."""
    return "".join(char if char.isprintable() else "?" for char in str(text))


def _holder(who: str, players: dict[str, Any]) -> str:
    if not who.isdigit():
        return shown(who)  # the dealer, the community cards
    player = players.get(who)
    return f"spot {who} ({shown(player)})" if player else f"spot {who}"


def _payee(award: dict[str, Any]) -> str:
    player = award.get("player")
    return f"spot {award.get('seat')}, " + (f"player {shown(player)}" if player
                                            else "no player named")


def status_lines(state: dict[str, Any], seq: int, journal: dict[str, Any], *,
                 ascii_only: bool = False) -> list[str]:
    """The lines ``dealer status`` prints for a table snapshot."""
    def card(text: Any) -> str:
        return printed_card(shown(text), ascii_only=ascii_only)

    meter = state.get("meter")
    lines = [f"{shown(state.get('table_id'))}  {shown(state.get('game'))} "
             f"{shown(state.get('paytable'))}  {shown(state.get('state'))}  journal seq {seq}"
             + (f"  jackpot {format_cents(meter)}" if isinstance(meter, int) else ""),
             f"next: {printed_text(shown(state.get('expecting')), ascii_only=ascii_only)}"]
    if journal.get("broken_at") is not None:
        lines.append(f"JOURNAL BROKEN at seq {journal['broken_at']}: {shown(journal.get('broken'))}")
    elif journal.get("verified_through") is not None:
        lines.append(f"journal verified through seq {journal['verified_through']} (at start-up "
                     f"through {journal.get('verified_at_start')})")
    hand = state.get("hand")
    dealer = state.get("dealer")
    lines.append(f"dealer: {shown(dealer)}" if dealer else "dealer: none signed in")
    if seated := (state.get("seated") or {}) if not hand else {}:
        lines.append("players for the next hand: " + ", ".join(
            f"spot {shown(spot)} {shown(player)}" for spot, player in seated.items()))
    if hand:
        players, discarded = hand.get("players") or {}, hand.get("discarded") or {}
        lines.append(f"hand {shown(hand.get('hand_id'))} ({shown(hand.get('phase'))})")
        for who, cards in (hand.get("cards") or {}).items():
            if who in ("burn",):
                continue
            gone = discarded.get(who, [])
            held = " ".join(card(held) for held in cards if held is not None and held not in gone)
            down = sum(1 for held in cards if held is None)
            if down:
                held = f"{held} + {down} face down" if held else f"{down} face down"
            line = f"  {_holder(who, players)}: {held or '-'}"
            if gone:
                line += f"  discarded: {' '.join(card(held) for held in gone)}"
            lines.append(line)
    layout = state.get("layout") or {}
    if not hand and layout:
        lines.append("wagers on the layout:")
        for spot, amounts in layout.items():
            wagers = ", ".join(f"{shown(wager)} {format_cents(amount)}"
                               for wager, amount in amounts.items() if isinstance(amount, int))
            lines.append(f"  spot {shown(spot)}: {wagers}")
    void = state.get("last_void")
    if not hand and void:
        lines += [shown(line) for line in void_lines(void)]
    awards = state.get("last_awards") or []
    if not hand and awards:
        lines.append(f"pay the progressive awards of hand {shown(state.get('last_settled_hand'))}:")
        pending = state.get("jackpot_pending")
        for award in awards:
            amount = award.get("amount")
            money = format_cents(amount) if isinstance(amount, int) else shown(amount)
            line = f"  {_payee(award)}: {shown(award.get('award'))} {money}"
            if award.get("award") == "jackpot" and pending:
                line += "  (hand-pay: a supervisor verifies it first)"
            lines.append(line)
    return lines

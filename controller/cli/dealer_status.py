"""``lowball-table dealer status`` in the dealer's words: the table, the dealer signed in, the
players named at the spots for the next hand, the hand in play (each
spot's player and the cards the table shows, the others counted face down; discarded cards as
discarded) and the progressive awards the dealer must pay, in dollars, to whom.

The status is the daemon's (:class:`controller.stream.command_replies.Status`); a player id
is the dealer's text, shown with anything unprintable replaced (a journal written before
player ids were bounded may hold any text)."""

from __future__ import annotations

from typing import Any

from controller.core.money import format_cents


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


def status_lines(state: dict[str, Any], seq: int, journal: dict[str, Any]) -> list[str]:
    """The lines ``dealer status`` prints for a table snapshot."""
    lines = [f"{shown(state.get('table_id'))}  {shown(state.get('game'))} "
             f"{shown(state.get('paytable'))}  {shown(state.get('state'))}  journal seq {seq}",
             f"next: {shown(state.get('expecting'))}"]
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
            held = " ".join(shown(card) for card in cards if card is not None and card not in gone)
            down = sum(1 for card in cards if card is None)
            if down:
                held = f"{held} + {down} face down" if held else f"{down} face down"
            line = f"  {_holder(who, players)}: {held or '-'}"
            if gone:
                line += f"  discarded: {' '.join(shown(card) for card in gone)}"
            lines.append(line)
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

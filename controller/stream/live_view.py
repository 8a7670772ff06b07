"""The live terminal view of a table: seats, wagers, cards, lamps, meter, settlements, faults.

It renders from the table's snapshot (the same one late joiners get from the replay socket)
and the most recent events, so what it shows is what the stream says.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from controller.core.money import format_cents
from controller.core.vocabulary import SpotLamp, game_name

CLEAR = "\x1b[H\x1b[2J"
BOLD, DIM, RED, GREEN, YELLOW, RESET = "\x1b[1m", "\x1b[2m", "\x1b[31m", "\x1b[32m", "\x1b[33m", \
    "\x1b[0m"
LAMP_COLOURS = {SpotLamp.WIN: GREEN, SpotLamp.LOSE: DIM, SpotLamp.PUSH: YELLOW,
                SpotLamp.TO_ACT: YELLOW, SpotLamp.PROGRESSIVE_WINNER: BOLD,
                SpotLamp.CHANGED_AFTER_LOCK: RED}
SHORT = {"ante": "ante", "xtra_bonus": "xtra", "lowdown_bonus": "lowdown", "bonus": "bonus",
         "progressive": "prog", "raise": "raise"}


def _text(value: Any) -> str:
    """A field of an event's wire data as a dealer reads it: cards ``2s Ah Jd``, none ``-``."""
    if isinstance(value, list):
        return " ".join(_text(item) for item in value) or "-"
    return "-" if value is None else str(value)


class LiveView:
    def __init__(self, spots: int = 7, recent: int = 8):
        self.spots = spots
        self.recent: deque[str] = deque(maxlen=recent)
        self.faults: deque[str] = deque(maxlen=3)
        self.hands_settled = 0

    def event(self, seq: int, kind: str, data: dict[str, Any]) -> None:
        """Note an event from the stream for the 'recent events' lines."""
        if kind in ("lamp_set", "state_changed", "phase_started", "decisions_due"):
            return
        summary = ", ".join(f"{key}={_text(value)}" for key, value in data.items()
                            if key not in ("wagers", "returned"))
        self.recent.append(f"#{seq:<6} {kind:<20} {summary[:90]}")
        if kind == "fault":
            self.faults.append(f"#{seq} {data['code']}: {data['detail']}")
        if kind == "hand_settled":
            self.hands_settled += 1

    def render(self, snapshot: dict[str, Any], devices: dict[str, str], seq: int) -> str:
        lines = []
        game = game_name(snapshot["game"])
        lines.append(f"{BOLD}LOWBALL TABLE {snapshot['table_id']}{RESET}  {game}, paytable "
                     f"{snapshot['paytable']}      state {BOLD}{snapshot['state']}{RESET}"
                     f"      hand #{snapshot['hand_number']}")
        lines.append(f"next: {YELLOW}{snapshot['expecting']}{RESET}")
        meter = snapshot.get("meter")
        extra = f"   jackpot meter {BOLD}{format_cents(meter)}{RESET}" if meter is not None else ""
        if snapshot.get("jackpot_pending"):
            pending = snapshot["jackpot_pending"]
            extra += f"   {RED}JACKPOT {format_cents(pending['amount'])} awaiting verification" \
                     f"{RESET}"
        device_text = "  ".join(f"{name} {'ok' if status == 'connected' else RED + status + RESET}"
                                for name, status in devices.items())
        lines.append(f"devices: {device_text}{extra}")
        lines.append("")
        hand = snapshot.get("hand") or {}
        wagers = hand.get("wagers") or snapshot.get("layout") or {}
        cards = hand.get("cards", {})
        lamps = snapshot.get("lamps", {})
        lines.append(f"{BOLD} spot  lamp                wagers                               "
                     f"cards{RESET}")
        for spot in range(1, self.spots + 1):
            key = str(spot)
            lamp = lamps.get(key, "-")
            colour = LAMP_COLOURS.get(lamp, "")
            wager_text = " ".join(f"{SHORT.get(w, w)} {format_cents(a)}"
                                  for w, a in (wagers.get(key) or {}).items())
            lines.append(f"  {spot:>2}   {colour}{lamp:<18}{RESET}  {wager_text:<36} "
                         f"{' '.join(cards.get(key, []))}")
        lines.append(f"  dealer{'':<56}{' '.join(cards.get('dealer', []))}")
        if cards.get("community"):
            lines.append(f"  flop  {'':<56}{' '.join(cards['community'])}")
        lines.append("")
        settled = snapshot.get("last_settlement") or []
        if settled:
            lines.append(f"{BOLD}last settlement{RESET}  hand {snapshot.get('last_settled_hand')}")
            by_spot: dict[int, list[str]] = {}
            for entry in settled:
                net = entry["net"]
                colour = GREEN if net > 0 else DIM if net < 0 else ""
                by_spot.setdefault(entry["seat"], []).append(
                    f"{SHORT.get(entry['wager'], entry['wager'])} {colour}{entry['result']} "
                    f"{format_cents(net)}{RESET}")
            for spot, parts in sorted(by_spot.items()):
                lines.append(f"  spot {spot}: " + "  ".join(parts))
            lines.append("")
        if self.faults:
            lines.append(f"{BOLD}faults{RESET}")
            lines += [f"  {RED}{fault}{RESET}" for fault in self.faults]
            lines.append("")
        lines.append(f"{BOLD}recent events{RESET}  (journal seq {seq}, hands settled "
                     f"{self.hands_settled})")
        lines += [f"  {DIM}{line}{RESET}" for line in self.recent]
        lines.append("")
        lines.append(f"{DIM}Ctrl-C stops the table, the simulators and the dealer.{RESET}")
        return CLEAR + "\n".join(lines) + "\n"

"""The pit's memory of the stream: the last hands in full (GLI's "last game recall") and the
alarms surveillance must acknowledge.

:class:`Recall` keeps, for each of the last :data:`HANDS` hands, every step as the stream
published it: the locked wagers and who played each spot (the ``player`` each locked wager
names; from the ``wager_placed`` before the hand for a hand journaled before version 3), every card in order, every
decision, the house way, the hands shown, every settlement and award, faults, the void.
:class:`Alarms` keeps faults, lost devices, failed credentials and pending jackpots
(:func:`controller.stream.alarms.alarm_text`) and their acknowledgements as the table
journaled them (``alarm_acknowledged``: who, and the record's time): a supervisor's
acknowledgement is a command to the table, so every console, restarted or not, shows the same.
Both are written by the link's thread and read by the web side: each holds a lock.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from controller.stream.alarms import ACKNOWLEDGED, alarm_text

#: Hands kept for recall (GLI asks for at least the last 100... games).
HANDS = 120
#: Alarms kept (the oldest acknowledged go first).
ALARMS = 200
#: The steps of a hand worth recalling (lamps, meters and accepted commands are not).
STEPS = frozenset({"wagers_locked", "card_dealt", "decisions_due", "decision_made",
                   "house_way", "hand_shown", "wager_settled", "progressive_awarded",
                   "hand_settled", "hand_voided", "fault", "hand_continued", "jackpot_pending",
                   "jackpot_verified"})


class Recall:
    def __init__(self, size: int = HANDS) -> None:
        self.size = size
        self._hands: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._players: dict[int, str] = {}
        self._lock = threading.Lock()

    def note(self, seq: int, kind: str, hand_id: str | None, ts: str,
             data: dict[str, Any]) -> None:
        with self._lock:
            if kind == "wager_placed":
                if data.get("player"):
                    self._players[data["spot"]] = data["player"]
            elif kind == "hand_started":
                self._hands[data["hand_id"]] = {
                    "hand_id": data["hand_id"], "number": data["number"], "started": ts,
                    "players": {str(spot): player for spot, player in self._players.items()},
                    "steps": [], "result": "in play", "house_result": None}
                self._players = {}
                while len(self._hands) > self.size:
                    self._hands.popitem(last=False)
            elif kind in STEPS and hand_id is not None and hand_id in self._hands:
                hand = self._hands[hand_id]
                hand["steps"].append({"seq": seq, "ts": ts, "type": kind, "data": data})
                if kind == "wagers_locked":
                    named = {str(wager["seat"]): wager["player"] for wager in data["wagers"]
                             if wager.get("player")}
                    if named:   # the hand's own record of who played: it decides
                        hand["players"] = named
                if kind == "hand_settled":
                    hand["result"], hand["house_result"] = "settled", data["house_result"]
                elif kind == "hand_voided":
                    hand["result"] = f"voided by {data['by']}: {data['reason']}"

    def hands(self) -> list[dict[str, Any]]:
        """The last hands, newest first, without their steps."""
        with self._lock:
            return [{key: value for key, value in hand.items() if key != "steps"}
                    | {"steps": len(hand["steps"])} for hand in reversed(self._hands.values())]

    def hand(self, hand_id: str) -> dict[str, Any] | None:
        """One hand, its steps in seq order (the table family sends a hand's cards after
        the hand is over: until then its steps hold only what the table shows)."""
        with self._lock:
            hand = self._hands.get(hand_id)
            return None if hand is None else {
                **hand, "steps": sorted(hand["steps"], key=lambda step: step["seq"])}


class Alarms:
    def __init__(self, size: int = ALARMS) -> None:
        self.size = size
        self._alarms: OrderedDict[int, dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def note(self, seq: int, kind: str, ts: str, data: dict[str, Any]) -> None:
        if kind == ACKNOWLEDGED:
            self._acknowledged(data["seq"], data["by"], ts)
            return
        text = alarm_text(kind, data)
        if text is None:
            return
        with self._lock:
            if seq in self._alarms:   # seen before the console followed the table again
                return
            self._alarms[seq] = {"seq": seq, "ts": ts, "type": kind, "text": text,
                                 "acknowledged_by": None, "acknowledged_at": None}
            while len(self._alarms) > self.size:
                oldest = next((s for s, a in self._alarms.items() if a["acknowledged_by"]),
                              next(iter(self._alarms)))
                del self._alarms[oldest]

    def journal_broken(self, seq: int, ts: str) -> None:
        """The table says its journal's hash chain is broken at ``seq``: an alarm that no
        command can acknowledge (the table is held; a supervisor quarantines the journal).
        Kept under ``-seq``, a number no journal record has."""
        with self._lock:
            if -seq not in self._alarms:
                self._alarms[-seq] = {
                    "seq": -seq, "ts": ts, "type": "journal_broken",
                    "text": f"journal hash chain broken at seq {seq}: the table is held until "
                            f"a supervisor quarantines the journal",
                    "acknowledged_by": None, "acknowledged_at": None}

    def _acknowledged(self, seq: int, by: str, ts: str) -> None:
        """The table journaled a supervisor's acknowledgement (of an alarm this console may
        no longer keep)."""
        with self._lock:
            alarm = self._alarms.get(seq)
            if alarm is not None:
                alarm["acknowledged_by"], alarm["acknowledged_at"] = by, ts

    def all(self) -> list[dict[str, Any]]:
        """Newest first."""
        with self._lock:
            return [dict(alarm) for alarm in reversed(self._alarms.values())]

"""The journal's alarms and who acknowledged each: the daemon journals an acknowledgement
(``alarm_acknowledged {seq, by}``) only for an alarm that waits for one.

Rebuilt from the journal at start and kept with every record the daemon journals; what is an
alarm is :func:`controller.stream.alarms.alarm_text`'s rule, the consoles' too."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from controller.stream.alarms import ACKNOWLEDGED, ALARM_KINDS, alarm_text

#: The record types the book looks at; any other passes without its fields being read.
NOTED = ALARM_KINDS | {ACKNOWLEDGED}


class AlarmBook:
    """The seqs of the journal's alarms and who acknowledged each: the daemon's, rebuilt
    from the journal at start and kept with every record it journals."""

    def __init__(self) -> None:
        #: alarm seq -> who acknowledged it ("" while it waits)
        self._alarms: dict[int, str] = {}

    def note(self, seq: int, kind: str, data: Mapping[str, Any]) -> None:
        """One journaled record (its type and fields); call only for a type in :data:`NOTED`."""
        if kind == ACKNOWLEDGED:
            if data["seq"] in self._alarms:
                self._alarms[data["seq"]] = data["by"] or "?"
        elif alarm_text(kind, data) is not None:
            self._alarms[seq] = ""

    def refusal(self, seq: int) -> str | None:
        """Why the alarm at ``seq`` cannot be acknowledged now, or None when it can."""
        by = self._alarms.get(seq)
        if by is None:
            return f"seq {seq} is not an alarm of this table's journal: nothing to acknowledge"
        if by:
            return f"the alarm at seq {seq} was already acknowledged by {by}"
        return None

    def entries(self) -> list[tuple[int, str]]:
        """Every alarm's seq and who acknowledged it ("" while it waits), oldest first: what a
        checkpoint keeps (:mod:`controller.daemon.checkpoints`)."""
        return sorted(self._alarms.items())

    def restore(self, entries: Iterable[tuple[int, str]]) -> None:
        """The book as :meth:`entries` gave it (at start, from a checkpoint)."""
        self._alarms = dict(entries)

    def waiting(self) -> list[int]:
        """The seqs of the alarms no one has acknowledged yet, oldest first."""
        return sorted(seq for seq, by in self._alarms.items() if not by)

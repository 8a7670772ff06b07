"""Journals for the checks of the journal's triggers and schema."""

from __future__ import annotations

from pathlib import Path

from controller.core.events import PhaseStarted
from controller.stream.journal import Journal, journal_path


TABLE = "CALI-01"


HAND = "CALI-01-000017"


def journal_of(state: Path, records: int) -> Journal:
    """A journal of ``records`` records in ``state``, open for writing."""
    journal = Journal(journal_path(state))
    for _ in range(records):
        journal.append(PhaseStarted("hole cards"), table_id=TABLE, hand_id=HAND)
    return journal

"""Quarantine carries the jackpot meter (the players' money) into the new journal. It once took
it from the last meter_changed *before the first bad record*: one damaged record early in a
long journal (bit rot, not an attack: every later record is intact and chained) rolled the
meter back to what it was then. It reads past the break now, carries the last meter found,
names the last verified one beside it, and holds the meter until a supervisor confirms it."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from controller.core.table_events import DeviceStatus, MeterChanged
from controller.core.vocabulary import Device, DeviceCondition
from controller.daemon.journal_quarantine import quarantine
from controller.stream.journal import Journal, journal_path

TS = datetime(2026, 11, 21, 23, 50, tzinfo=UTC)
TABLE = "TCL-01"


def rot(state_dir: Path, seq: int) -> None:
    """One byte of record ``seq``'s message changed on disk (the triggers put back)."""
    connection = sqlite3.connect(journal_path(state_dir), isolation_level=None)
    message = connection.execute("SELECT message FROM journal WHERE seq = ?", (seq,)).fetchone()[0]
    connection.execute("DROP TRIGGER journal_no_update")
    connection.execute("UPDATE journal SET message = ? WHERE seq = ?",
                       (message.replace(b"shoe-port", b"shoe-porT"), seq))
    connection.execute("CREATE TRIGGER journal_no_update BEFORE UPDATE ON journal BEGIN "
                       "SELECT RAISE(ABORT, 'the journal is append-only: UPDATE refused'); END")
    connection.close()


def test_quarantine_keeps_the_meter_the_players_last_saw(tmp_path: Path) -> None:
    with Journal(journal_path(tmp_path)) as journal:
        journal.append(MeterChanged(100_000, "seed"), table_id=TABLE, hand_id=None, ts=TS)
        journal.append(DeviceStatus(Device.SHOE, DeviceCondition.CONNECTED, "shoe-port"), table_id=TABLE,
                       hand_id=None, ts=TS)
        for amount in range(101_000, 151_000, 1_000):       # fifty hands' contributions
            journal.append(MeterChanged(amount, "contribution"), table_id=TABLE, hand_id=None,
                           ts=TS)
    rot(tmp_path, 2)
    done = quarantine(tmp_path, "bit rot at seq 2", by="sam")
    assert done.record.first_bad_seq == 2
    assert done.record.meter == 150_000, (
        f"the new journal starts the meter at {done.record.meter} ({done.record.meter_from}); "
        f"the sign showed 150000")
    assert done.record.meter_from == ("meter_changed seq 52 (after the first bad record: "
                                      "found, not verified)")
    assert (done.record.verified_meter, done.record.verified_meter_from) == (
        100_000, "meter_changed seq 1")
    assert done.record.meter_held and done.voided is None

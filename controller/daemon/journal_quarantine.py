"""A supervisor's way out of a broken journal: move it aside, whole, and start a new one.

The daemon refuses to play on a journal whose hash chain is broken (it runs held). The broken
journal is evidence: :func:`quarantine` never alters it. It moves the database file (with its
``-wal`` and ``-shm`` companions, which hold committed records too) into
``<state dir>/quarantine/`` under a name that says when and where it broke, and starts a new
journal whose first record, :class:`controller.core.table_events.JournalContinued`, names the
archived file, its last record's seq and hash as found, the first bad seq, and the jackpot
meter carried over from the last verified ``meter_changed`` (the meter is the players' money).
It holds the state directory's lock while it works, so it cannot run beside a daemon.
"""

from __future__ import annotations

import getpass
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from controller.errors import LowballError
from controller.stream import wire
from controller.stream.journal import ChainCheck, Journal, JournalBroken, journal_path
from controller.daemon.state_lock import StateLock
from controller.core.table_events import JournalContinued, MeterChanged

QUARANTINE_DIR = "quarantine"
MAX_REASON = 200
_COMPANIONS = ("", "-wal", "-shm")


class QuarantineRefused(LowballError, RuntimeError):
    """Nothing was moved: the message says why."""


class Quarantined(NamedTuple):
    archived: Path
    record: JournalContinued


def quarantine(state_dir: str | Path, reason: str, by: str | None = None) -> Quarantined:
    """Quarantine the broken journal of ``state_dir`` (see the module docstring).
    :class:`QuarantineRefused` if its chain is sound, or a daemon holds the directory."""
    state_dir = Path(state_dir)
    if not reason.strip() or len(reason) > MAX_REASON:
        raise QuarantineRefused(f"a reason of 1 to {MAX_REASON} characters is required "
                                f"(it is journaled)")
    lock = StateLock(state_dir)
    try:
        lock.acquire()
    except RuntimeError as error:
        raise QuarantineRefused(f"{error} (quarantine with the daemon stopped)") from None
    try:
        path = journal_path(state_dir)
        with Journal.open_readonly(path) as journal:
            check, meter, meter_from = ChainCheck(), None, "none"
            broken: JournalBroken | None = None
            try:
                for record in journal.records():
                    event = wire.to_event(check(record))
                    if type(event) is MeterChanged:
                        meter, meter_from = event.amount, f"meter_changed seq {record.seq}"
                    elif type(event) is JournalContinued and event.meter is not None:
                        meter, meter_from = event.meter, f"journal_continued seq {record.seq}"
                if missing := journal.missing_triggers():
                    raise JournalBroken(check.last_seq + 1, f"append-only trigger(s) missing: "
                                                            f"{', '.join(missing)}")
            except JournalBroken as error:
                broken = error
            if broken is None:
                raise QuarantineRefused(f"{path}: the hash chain is sound ({check.checked} "
                                        f"records): nothing to quarantine")
            head = journal.last_record()
            table_id = check.table_id or journal.table_id
        if table_id is None:
            raise QuarantineRefused(f"{path}: no record names the table: cannot continue it")
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        folder = state_dir / QUARANTINE_DIR
        folder.mkdir(exist_ok=True)
        archived = folder / f"journal-{stamp}-broken-at-seq-{broken.seq}.sqlite3"
        for suffix in _COMPANIONS:
            source = Path(f"{path}{suffix}")
            if source.exists():
                os.rename(source, f"{archived}{suffix}")
        continued = JournalContinued(
            archived=str(archived.relative_to(state_dir)),
            archived_seq=head.seq if head else 0, archived_hash=head.hash if head else "",
            first_bad_seq=broken.seq, broken=broken.reason, meter=meter, meter_from=meter_from,
            by=by or getpass.getuser(), reason=reason.strip())
        with Journal(path) as fresh:
            fresh.append(continued, table_id=table_id, hand_id=None)
        return Quarantined(archived, continued)
    finally:
        lock.release()



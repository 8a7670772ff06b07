"""A power cut in the middle of a quarantine. The write-ahead log holds committed records that
were never checkpointed into the database file (the daemon that wrote them lost power; the
held daemon and quarantine open the journal read-only, which never checkpoints). A quarantine
that moved the database file and was cut before it moved the log once left the daemon to
create a new journal over the old log, which SQLite discards: the records only there, the
evidence and the meter's last value, were gone, and the table started at its seed. Now the
daemon refuses to start beside a journal's leftover files, and a quarantine cut at any
instant loses nothing and is finished by running it again."""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
import zmq

from controller.core.table_events import MeterChanged
from controller.daemon.journal_quarantine import quarantine
from controller.errors import StartupError
from controller.stream.journal import Journal, JournalError, journal_path

from tests.support.daemon import run_config, tamper
from tests.support.daemon import Daemon

TS = datetime(2026, 11, 21, 23, 50, tzinfo=UTC)
RECORDS = 30


def files_at_power_cut(source: Path, state: Path) -> None:
    """The journal's files as the disk holds them while their writer is still open."""
    state.mkdir()
    for suffix in ("", "-wal", "-shm"):
        shutil.copy(f"{journal_path(source)}{suffix}", f"{journal_path(state)}{suffix}")


def test_a_start_after_a_cut_between_renames_loses_no_record(tmp_path: Path) -> None:
    path, state = run_config(tmp_path), tmp_path / "state"
    writer = Journal(journal_path(tmp_path / "before"))
    try:
        for amount in range(750_000, 750_000 + RECORDS):  # last: 7,500.29 $
            writer.append(MeterChanged(amount, "contribution"), table_id="TCL-01",
                          hand_id=None, ts=TS)
        files_at_power_cut(tmp_path / "before", state)
    finally:
        writer.close()
    # quarantine's first rename, then the power cut
    (state / "quarantine").mkdir()
    archived = state / "quarantine" / "journal-20261125T000000Z-broken-at-seq-7.sqlite3"
    os.rename(journal_path(state), archived)
    context = zmq.Context()
    try:
        with pytest.raises(StartupError, match="journal.sqlite3-wal") as refused:
            Daemon(tmp_path, path, context)
        assert "never delete them" in str(refused.value)
        # The supervisor puts the archive's log beside it, as quarantine meant to.
        for suffix in ("-wal", "-shm"):
            if os.path.exists(f"{journal_path(state)}{suffix}"):
                os.rename(f"{journal_path(state)}{suffix}", f"{archived}{suffix}")
        try:
            with Journal.open_readonly(archived) as evidence:
                kept = f"{evidence.last_seq} of {RECORDS} records"
        except JournalError as error:
            kept = f"nothing readable ({error})"
        assert kept == f"{RECORDS} of {RECORDS} records", f"the archive holds {kept}"
    finally:
        context.term()


class PowerCut(BaseException):
    """The process stops here: files stay as they are on disk."""


def broken_journal_in_its_log(source: Path, state: Path) -> None:
    """A journal whose records (and a damaged one) are only in its write-ahead log."""
    writer = Journal(journal_path(source))
    try:
        for amount in range(750_000, 750_000 + RECORDS):
            writer.append(MeterChanged(amount, "contribution"), table_id="TCL-01",
                          hand_id=None, ts=TS)
        tamper(source, 7, b'"contribution"', b'"contributiom"')
        files_at_power_cut(source, state)
    finally:
        writer.close()


@pytest.mark.parametrize("cut_at", [1, 2, 3, 4, 5])
def test_a_quarantine_cut_at_any_rename_loses_nothing_and_finishes_when_run_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cut_at: int) -> None:
    state = tmp_path / "state"
    broken_journal_in_its_log(tmp_path / "writer", state)
    renames: list[str] = []
    rename = os.rename

    def cut(source: str, target: str) -> None:
        renames.append(source)
        if len(renames) == cut_at:
            raise PowerCut(source)
        rename(source, target)
    monkeypatch.setattr(os, "rename", cut)
    with pytest.raises(PowerCut):
        quarantine(state, "bit rot at seq 7", by="sam")
    monkeypatch.setattr(os, "rename", rename)
    if journal_path(state).exists():  # the journal as it was: a start holds the table
        with Journal.open_readonly(journal_path(state)) as journal:
            assert journal.last_seq == RECORDS and journal.verify().first_bad_seq == 7
    else:                             # a start refuses, naming the files that hold records
        with pytest.raises(JournalError, match="Run `lowball-table journal quarantine"):
            Journal(journal_path(state))
    done = quarantine(state, "bit rot at seq 7", by="sam")
    assert (done.record.meter, done.record.first_bad_seq) == (750_000 + RECORDS - 1, 7)
    with Journal.open_readonly(journal_path(state)) as journal:
        assert [record.type for record in journal.records()] == ["journal_continued"]
    for archive in (done.archived, done.archived.with_suffix(".copy.sqlite3")):
        with Journal.open_readonly(archive) as evidence:
            assert evidence.last_seq == RECORDS, archive
    assert not list(state.glob("journal.sqlite3?*"))  # nothing left beside the new journal

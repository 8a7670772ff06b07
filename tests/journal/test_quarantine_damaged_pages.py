"""A journal whose pages a failing disk wrote over (red team 9: the running check holds the
table at a ``sqlite3.Error``). The supervisor's way out, ``journal quarantine``, once died on
the same error (``database disk image is malformed``) and left the table held for ever. It
salvages what can be read now: the records it cannot read are neither verified nor found, the
new journal's seqs and hand numbers go on past anything the damaged file may hold, and a file
of which nothing can be read is refused with what to do, never a traceback."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import struct
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import zmq

from controller.daemon import journal_quarantine
from controller.daemon.journal_quarantine import (
    BYTE_COPY_NOTE,
    COPY_SUFFIX,
    QuarantineRefused,
    Quarantined,
    quarantine,
)
from controller.stream.archive import Archives, Lost, Run
from controller.stream.journal import Journal, JournalRecord, journal_path

from tests.support.daemon import play_a_hand, play_a_voided_hand, run_config
from tests.support.daemon import Daemon

TABLE = "TCL-01"
HANDS = 300                                           # about 8,700 records, 1,000 pages
PAGE = 4096


class Shift(NamedTuple):
    state: Path
    last: JournalRecord
    hand_in_play: str
    meter: int


@pytest.fixture(scope="module")
def shift(tmp_path_factory: pytest.TempPathFactory) -> Shift:
    """A table's state directory after a shift: HANDS hands played and voided, one more in
    play (its progressive contribution on the meter)."""
    root = tmp_path_factory.mktemp("shift")
    context = zmq.Context()
    try:
        table = Daemon(root, run_config(root), context)
        table.daemon.start()
        try:
            for _ in range(HANDS):
                play_a_voided_hand(table.ask)
            play_a_hand(table.ask)
            hand, meter = table.daemon.table.hand_id, table.daemon.table.meter
            assert hand == f"{TABLE}-{HANDS + 1:06d}"
        finally:
            table.daemon.close()
    finally:
        context.term()
    with Journal.open_readonly(journal_path(root / "state")) as journal:
        last = journal.last_record()
    assert last is not None
    return Shift(root / "state", last, hand, meter)


@pytest.fixture
def context() -> Iterator[zmq.Context[Any]]:
    context = zmq.Context()
    yield context
    context.term()


def at_table(shift: Shift, tmp_path: Path) -> tuple[Path, Path]:
    """The shift's state directory under ``tmp_path``, and a config for a daemon on it."""
    shutil.copytree(shift.state, tmp_path / "state")
    return run_config(tmp_path), tmp_path / "state"


def damage(state: Path, page: int, pages: int) -> bytes:
    """``pages`` pages from page index ``page`` (0: the header's) written over, as the red team
    does (tests/journal/test_damaged_pages_hold_the_table.py); the file's bytes after."""
    path = journal_path(state)
    with path.open("r+b") as file:
        file.seek(page * PAGE)
        file.write(b"\xa5" * pages * PAGE)
    return path.read_bytes()


def page_count(state: Path) -> int:
    return journal_path(state).stat().st_size // PAGE


def journal_tree(state: Path) -> tuple[int, list[int], list[int]]:
    """The journal's b-tree in the file (the file holds the checkpoints' too): its root page,
    its interior pages and its leaves in seq order (page numbers, from 1)."""
    connection = sqlite3.connect(journal_path(state))
    (root,), = connection.execute("SELECT rootpage FROM sqlite_master WHERE name = 'journal'")
    connection.close()
    data = journal_path(state).read_bytes()
    interior: list[int] = []
    leaves: list[int] = []

    def walk(number: int) -> None:
        start = (number - 1) * PAGE
        header = start + (100 if number == 1 else 0)
        if data[header] == 0x0D:
            leaves.append(number)
        elif data[header] == 0x05:
            interior.append(number)
            cells = struct.unpack(">H", data[header + 3:header + 5])[0]
            for cell in range(cells):
                at = start + struct.unpack(">H", data[header + 12 + 2 * cell:
                                                      header + 14 + 2 * cell])[0]
                walk(struct.unpack(">I", data[at:at + 4])[0])
            walk(struct.unpack(">I", data[header + 8:header + 12])[0])

    walk(root)
    return root, interior, leaves


def interior_page_off_the_end(state: Path) -> int:
    """The index of an interior page of the journal's b-tree under its root, not on the path to
    its last record (the root's right-most child)."""
    root, pages, _ = journal_tree(state)
    data = journal_path(state).read_bytes()
    right_most = struct.unpack(">I", data[(root - 1) * PAGE + 8:(root - 1) * PAGE + 12])[0]
    interior = sorted(number for number in pages if number not in (root, right_most))
    assert interior, "the shift's journal has no interior page under its root"
    return interior[0] - 1


def hand_number(hand_id: str) -> int:
    return int(hand_id.rsplit("-", 1)[1])


def runs_on(tmp_path: Path, config: Path, context: zmq.Context[Any], done: Quarantined,
            shift: Shift) -> None:
    """A daemon starts on the new journal, takes the meter confirmed, and plays a hand
    numbered after every hand the archived journal used, at a seq after all of its."""
    table = Daemon(tmp_path, config, context)
    table.daemon.start()
    try:
        assert table.daemon.journal_broken is None
        with Journal.open_readonly(journal_path(tmp_path / "state")) as journal:
            first = next(journal.records())
        assert first.type == "journal_continued" and first.seq == done.record.archived_seq + 1
        assert first.seq > shift.last.seq, "a seq of the archived journal is used again"
        assert table.ask(command="adjust_meter", amount=0, reason="sign checked",
                         supervisor=True)["ok"]
        play_a_hand(table.ask)
        hand = table.daemon.table.hand_id
        assert hand is not None and hand_number(hand) > hand_number(shift.hand_in_play), (
            f"hand {hand} reuses a number the archived journal used")
    finally:
        table.daemon.close()


def served(state: Path, through: int) -> list[Run | Lost]:
    with Journal(journal_path(state), durability="batched") as journal:
        return list(Archives(journal, TABLE).serve(0, through))


def test_damaged_early_pages_met_by_the_running_check_are_quarantined_and_the_table_runs(
        shift: Shift, tmp_path: Path, context: zmq.Context[Any]) -> None:
    config, state = at_table(shift, tmp_path)
    table = Daemon(tmp_path, config, context)
    table.daemon.start()
    try:
        for page in journal_tree(state)[2][1:5]:        # the disk fails under early pages
            damage(state, page - 1, 1)
        table.daemon.check_chain()
        assert table.daemon.journal_broken is not None
    finally:
        table.daemon.close()
    as_damaged = journal_path(state).read_bytes()
    connection = sqlite3.connect(journal_path(state))  # the restart's records after the shift's
    last_seq, last_hash = connection.execute(
        "SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1").fetchone()
    connection.close()
    assert last_seq > shift.last.seq
    done = quarantine(state, "disk damage", by="sam")
    record, (gap, *more) = done.record, done.unreadable
    assert not more and 1 < gap.first <= gap.last < 100, done.unreadable
    assert record.first_bad_seq <= gap.first
    assert (record.archived_seq, record.archived_hash) == (last_seq, last_hash)
    assert done.records_read == last_seq - (gap.last - gap.first + 1)
    assert "unreadable (damaged pages" in record.broken
    assert record.hand_number >= HANDS + 1
    assert done.voided is not None and done.voided.hand_id == shift.hand_in_play
    assert record.meter == shift.meter and record.meter_held
    assert not done.byte_copy
    assert hashlib.sha256(done.archived.read_bytes()).digest() == \
        hashlib.sha256(as_damaged).digest(), "the archived journal is not the file as found"
    assert Path(f"{done.archived.with_suffix('')}{COPY_SUFFIX}").is_file()
    # the published replay serves the records verified before the damage, names the rest
    runs = served(state, record.archived_seq)
    assert [record.seq for run in runs if isinstance(run, Run) for record in run.records] == \
        list(range(1, record.first_bad_seq))
    assert [(lost.first, lost.last) for lost in runs if isinstance(lost, Lost)] == [
        (record.first_bad_seq, record.archived_seq)]
    runs_on(tmp_path, config, context, done, shift)


def test_damaged_last_pages_continue_seqs_and_hands_past_anything_the_file_holds(
        shift: Shift, tmp_path: Path, context: zmq.Context[Any]) -> None:
    config, state = at_table(shift, tmp_path)
    damage(state, page_count(state) - 2, 2)             # the hand in play's records among them
    done = quarantine(state, "disk damage", by="sam")
    record = done.record
    assert record.archived_seq > shift.last.seq and record.archived_hash == ""
    assert "the journal's end cannot be read" in record.broken
    assert record.first_bad_seq == done.unreadable[0].first <= shift.last.seq
    assert done.hands_skipped > 0
    assert record.hand_number >= hand_number(shift.hand_in_play)
    # the archive cannot be opened past its damaged end: all of it is named, none served
    assert [(run.first, run.last) for run in served(state, record.archived_seq)
            if isinstance(run, Lost)] == [(1, record.archived_seq)]
    runs_on(tmp_path, config, context, done, shift)


def test_a_damaged_index_page_loses_the_records_under_it_only(
        shift: Shift, tmp_path: Path, context: zmq.Context[Any]) -> None:
    config, state = at_table(shift, tmp_path)
    damage(state, interior_page_off_the_end(state), 1)
    done = quarantine(state, "disk damage", by="sam")
    record, (gap, *more) = done.record, done.unreadable
    assert not more and gap.last - gap.first > 100, done.unreadable   # a page of leaves
    assert gap.last < shift.last.seq
    assert done.records_read == shift.last.seq - (gap.last - gap.first + 1)
    # Pages no b-tree reaches (those under the damaged one) could as well be a lost write
    # hiding the end: the stored end is not trusted, the seqs go on past what the file can hold
    assert record.archived_seq > shift.last.seq and record.archived_hash == ""
    assert record.first_bad_seq <= gap.first
    assert done.voided is not None and done.voided.hand_id == shift.hand_in_play
    runs_on(tmp_path, config, context, done, shift)


@pytest.mark.parametrize("first_page, what", [
    (1, "no record can be read"),                       # every page but the schema's
    (0, "cannot read the journal's header")])           # the header too
def test_a_wholly_unreadable_journal_is_refused_naming_what_to_do(
        shift: Shift, tmp_path: Path, first_page: int, what: str) -> None:
    _, state = at_table(shift, tmp_path)
    as_damaged = damage(state, first_page, page_count(state) - first_page)
    with pytest.raises(QuarantineRefused) as refused:
        quarantine(state, "disk damage", by="sam")
    message = str(refused.value)
    assert what in message and "Restore the journal from a backup" in message, message
    assert "nothing moved" in message
    assert journal_path(state).read_bytes() == as_damaged
    assert not list(state.rglob(f"*{COPY_SUFFIX}*"))
    assert not Path(f"{journal_path(state)}.continuing").exists()


class _BackupFails:
    """A connection whose backup fails as SQLite's does on some damaged files."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    def backup(self, *args: Any, **kwargs: Any) -> None:
        raise sqlite3.DatabaseError("database disk image is malformed")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._connection, name)


def test_a_journal_the_backup_cannot_read_is_copied_byte_for_byte_and_said_so(
        shift: Shift, tmp_path: Path, context: zmq.Context[Any],
        monkeypatch: pytest.MonkeyPatch) -> None:
    config, state = at_table(shift, tmp_path)
    as_damaged = damage(state, 3, 4)
    monkeypatch.setattr(journal_quarantine, "sqlite3", types.SimpleNamespace(
        connect=lambda *args, **kwargs: _BackupFails(sqlite3.connect(*args, **kwargs)),
        Error=sqlite3.Error))
    done = quarantine(state, "disk damage", by="sam")
    monkeypatch.undo()
    assert done.byte_copy and BYTE_COPY_NOTE in done.record.broken
    copy = Path(f"{done.archived.with_suffix('')}{COPY_SUFFIX}")
    assert copy.read_bytes() == as_damaged
    assert not Path(f"{copy}.partial").exists()
    runs_on(tmp_path, config, context, done, shift)

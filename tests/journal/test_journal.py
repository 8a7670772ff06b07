"""The journal: gapless seq, hash chain, reopen, append-only, tamper detection, crash safety."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from controller.core.events import PhaseStarted
from controller.stream import wire
from controller.stream.journal import GENESIS_HASH, Journal, JournalError, chain_hash, journal_path

from tests.support.stream import HAND, SAMPLES, TABLE, TS, sample_events

ROOT = Path(__file__).resolve().parents[2]


def fill(journal: Journal, count: int) -> list[Any]:
    return [journal.append(event, table_id=TABLE, hand_id=HAND, ts=TS)
            for event in sample_events(count)]


def raw(path: Path) -> sqlite3.Connection:
    """A connection that bypasses the journal, for tampering (autocommit)."""
    return sqlite3.connect(path, isolation_level=None)


def test_append_numbers_from_one_and_chains_hashes(tmp_path: Path) -> None:
    with Journal(tmp_path / "new" / "dir" / "journal.sqlite3") as journal:
        assert journal.last_seq == 0 and journal.last_record() is None
        records = fill(journal, 5)
    assert [record.seq for record in records] == [1, 2, 3, 4, 5]
    assert records[0].prev_hash == GENESIS_HASH
    for before, record in zip([None, *records], records):
        assert record.prev_hash == (before.hash if before else GENESIS_HASH)
        assert record.hash == chain_hash(record.prev_hash, record.message)
        envelope = wire.decode_event(record.message)
        assert (envelope.seq, envelope.type, envelope.hand_id) == (
            record.seq, record.type, record.hand_id)
        assert record.ts == "2026-11-21T23:50:00.123456Z"
    assert wire.to_event(wire.decode_event(records[0].message)) == SAMPLES[0]


def test_the_message_is_exactly_what_wire_encode_gives(journal: Journal) -> None:
    record = journal.append(SAMPLES[2], table_id=TABLE, hand_id=HAND, ts=TS)
    assert record.message == wire.encode(SAMPLES[2], table_id=TABLE, seq=1, ts=TS,
                                         hand_id=HAND)
    assert list(journal.records()) == [record]


def test_reopen_continues_seq_and_chain(tmp_path: Path) -> None:
    path = journal_path(tmp_path)
    with Journal(path) as journal:
        first = fill(journal, 3)
    with Journal(path) as journal:
        assert journal.last_seq == 3 and journal.last_hash == first[-1].hash
        assert journal.last_record() == first[-1]
        assert journal.table_id == TABLE
        fourth = journal.append(PhaseStarted("showdown"), table_id=TABLE, hand_id=None)
        assert fourth.seq == 4 and fourth.prev_hash == first[-1].hash
        report = journal.verify()
    assert report.ok and report.records_checked == 4 and report.last_hash == fourth.hash


def test_records_after_and_limit(journal: Journal) -> None:
    fill(journal, 1200)  # more than one read batch
    assert [r.seq for r in journal.records(after_seq=1195)] == [1196, 1197, 1198, 1199, 1200]
    assert [r.seq for r in journal.records(after_seq=10, limit=3)] == [11, 12, 13]
    assert len(list(journal.records(limit=700))) == 700
    assert len(list(journal.records())) == 1200
    assert list(journal.records(after_seq=1200)) == []


def test_a_refused_event_uses_no_seq(journal: Journal) -> None:
    fill(journal, 2)
    with pytest.raises(wire.WireError):
        journal.append(PhaseStarted(7), table_id=TABLE, hand_id=None)
    with pytest.raises(JournalError, match="table 'CALI-01'"):
        journal.append(PhaseStarted("flop"), table_id="OTHER-02", hand_id=None)
    assert journal.append(PhaseStarted("flop"), table_id=TABLE, hand_id=None).seq == 3
    assert journal.verify().ok


def test_append_all_is_one_transaction(journal: Journal) -> None:
    fill(journal, 2)
    records = journal.append_all(sample_events(3), table_id=TABLE, hand_id=HAND, ts=TS)
    assert [r.seq for r in records] == [3, 4, 5]
    assert records[0].prev_hash == list(journal.records(after_seq=1))[0].hash
    with pytest.raises(wire.WireError):  # one bad event: none of them is written
        journal.append_all([PhaseStarted("flop"), PhaseStarted(None)], table_id=TABLE,
                           hand_id=None)
    assert journal.last_seq == 5 and journal.append_all([], table_id=TABLE, hand_id=None) == []
    assert journal.verify().ok


def test_a_failed_write_rolls_back_and_keeps_the_seq(journal: Journal) -> None:
    fill(journal, 2)
    connection = raw(journal.path)  # another writer sneaks a (chain-breaking) row in
    connection.execute("INSERT INTO journal VALUES (3, 't', 'x', NULL, x'00', 'p', 'h')")
    connection.close()
    with pytest.raises(JournalError, match="cannot append seq 3"):
        journal.append(PhaseStarted("flop"), table_id=TABLE, hand_id=None)
    assert journal.last_seq == 2


@pytest.mark.parametrize("count", [3, 200])  # one INSERT statement; past its rows, BEGIN..COMMIT
def test_a_failed_input_writes_none_of_its_records(journal: Journal, count: int) -> None:
    fill(journal, 2)
    connection = raw(journal.path)  # another writer takes the next seq
    connection.execute("INSERT INTO journal VALUES (3, 't', 'x', NULL, x'00', 'p', 'h')")
    connection.close()
    with pytest.raises(JournalError, match=f"cannot append seq 3-{2 + count}"):
        journal.append_all(sample_events(count), table_id=TABLE, hand_id=HAND, ts=TS)
    assert journal.last_seq == 2
    assert [record.seq for record in journal.records()] == [1, 2, 3]  # its row, none of ours
    connection = raw(journal.path)
    connection.execute("DROP TRIGGER journal_no_delete")
    connection.execute("DELETE FROM journal WHERE seq = 3")
    connection.close()
    records = journal.append_all(sample_events(count), table_id=TABLE, hand_id=HAND, ts=TS)
    assert [record.seq for record in records] == list(range(3, 3 + count))
    assert list(journal.records(after_seq=2)) == records


def test_update_and_delete_are_refused_by_triggers(journal: Journal) -> None:
    fill(journal, 3)
    connection = raw(journal.path)
    with pytest.raises(sqlite3.IntegrityError, match="append-only: UPDATE refused"):
        connection.execute("UPDATE journal SET type = 'x' WHERE seq = 2")
    with pytest.raises(sqlite3.IntegrityError, match="append-only: DELETE refused"):
        connection.execute("DELETE FROM journal WHERE seq = 3")
    with pytest.raises(sqlite3.IntegrityError, match="gapless"):
        connection.execute("INSERT INTO journal VALUES (9, 't', 'x', NULL, x'00', 'p', 'h')")
    connection.close()
    assert journal.verify().ok


def tamper(path: Path, *statements: str, params: Sequence[Any] = ()) -> None:
    connection = raw(path)
    connection.execute("DROP TRIGGER journal_no_update")
    connection.execute("DROP TRIGGER journal_no_delete")
    for statement in statements:
        connection.execute(statement, params)
    connection.execute("CREATE TRIGGER journal_no_update BEFORE UPDATE ON journal "
                       "BEGIN SELECT RAISE(ABORT, 'no'); END")
    connection.execute("CREATE TRIGGER journal_no_delete BEFORE DELETE ON journal "
                       "BEGIN SELECT RAISE(ABORT, 'no'); END")
    connection.close()


def rehash(seq: int, message: bytes, prev_hash: str) -> tuple[str, bytes, str, int]:
    return ("UPDATE journal SET message = ?, hash = ? WHERE seq = ?",
            message, chain_hash(prev_hash, message), seq)


def test_verify_detects_an_edited_message(journal: Journal) -> None:
    records = fill(journal, 6)
    edited = records[3].message.replace(b'"Td"', b'"Th"')
    assert edited != records[3].message
    tamper(journal.path, "UPDATE journal SET message = ? WHERE seq = 4", params=(edited,))
    report = journal.verify()
    assert (report.ok, report.first_bad_seq, report.records_checked) == (False, 4, 3)
    assert "hash does not match" in report.reason


def test_verify_detects_an_edit_with_its_hash_recomputed(journal: Journal) -> None:
    records = fill(journal, 6)
    edited = records[3].message.replace(b'"Td"', b'"Th"')
    statement, *params = rehash(4, edited, records[3].prev_hash)
    tamper(journal.path, statement, params=params)
    report = journal.verify()
    assert (report.ok, report.first_bad_seq) == (False, 5)
    assert "prev_hash does not match" in report.reason


def test_verify_detects_a_deleted_record(journal: Journal) -> None:
    fill(journal, 6)
    tamper(journal.path, "DELETE FROM journal WHERE seq = 3")
    report = journal.verify()
    assert (report.ok, report.first_bad_seq) == (False, 3)
    assert report.reason == "record seq 3 missing (next record is seq 4)"


def test_verify_detects_swapped_records(journal: Journal) -> None:
    records = fill(journal, 6)
    r2, r3 = records[1], records[2]
    tamper(journal.path,
           "UPDATE journal SET message = ?, hash = ?, type = ?, prev_hash = ? WHERE seq = 2",
           params=(r3.message, r3.hash, r3.type, r3.prev_hash))
    report = journal.verify()
    assert (report.ok, report.first_bad_seq) == (False, 2)


def test_verify_detects_a_column_that_disagrees_with_its_message(journal: Journal) -> None:
    fill(journal, 4)
    tamper(journal.path, "UPDATE journal SET type = 'hand_settled' WHERE seq = 2")
    report = journal.verify()
    assert (report.ok, report.first_bad_seq) == (False, 2)
    assert "type 'hand_settled' but the message says 'phase_started'" in report.reason


def test_verify_detects_a_time_column_that_disagrees_with_its_message(journal: Journal) -> None:
    fill(journal, 4)
    tamper(journal.path, "UPDATE journal SET ts = '2026-01-01T00:00:00.000000Z' WHERE seq = 3")
    report = journal.verify()
    assert (report.ok, report.first_bad_seq) == (False, 3)
    assert "ts '2026-01-01T00:00:00.000000Z' but the message says '2026-11-21T23:50:00" \
        in report.reason


def test_verify_detects_a_message_that_does_not_parse(journal: Journal) -> None:
    records = fill(journal, 3)
    statement, *params = rehash(3, b'{"type":"card_dealt"}', records[2].prev_hash)
    tamper(journal.path, statement, params=params)
    report = journal.verify()
    assert (report.ok, report.first_bad_seq) == (False, 3)
    assert report.reason.startswith("message does not parse: ")


def test_verify_reports_missing_triggers(journal: Journal) -> None:
    fill(journal, 2)
    connection = raw(journal.path)
    connection.execute("DROP TRIGGER journal_no_delete")
    connection.close()
    report = journal.verify()
    assert (report.ok, report.first_bad_seq, report.records_checked) == (False, None, 2)
    assert "journal_no_delete" in report.reason


@pytest.mark.parametrize("records", [1, 3])
def test_a_trigger_of_another_process_that_skips_a_record_refuses_the_write(
        journal: Journal, records: int) -> None:
    # RAISE(IGNORE) drops a row without an error: the daemon would publish a record its
    # journal does not hold. The write is refused whole, and verify names the trigger.
    fill(journal, 2)
    connection = raw(journal.path)
    connection.execute(f"CREATE TRIGGER quiet BEFORE INSERT ON journal "  # the input's last
                       f"WHEN NEW.seq = {2 + records} BEGIN SELECT RAISE(IGNORE); END")
    connection.close()
    before = (journal.last_seq, journal.last_hash, journal.written_after(0))
    events = sample_events(records)
    with pytest.raises(JournalError, match="a trigger the journal does not have"):
        journal.append_all(events, table_id=TABLE, hand_id=HAND)
    assert (journal.last_seq, journal.last_hash, journal.written_after(0)) == before
    assert [record.seq for record in journal.records()] == [1, 2]
    report = journal.verify()
    assert (report.ok, report.first_bad_seq) == (False, None)
    assert report.reason == "trigger(s) the journal does not have: quiet"


def test_the_names_of_foreign_triggers_are_shown_short_escaped_and_few(journal: Journal) -> None:
    # Another process chooses the names; the reason goes to replies, logs and terminals.
    fill(journal, 1)
    connection = raw(journal.path)
    names = ["\x1b[2Jwiped\nline", "x" * 100, *(f"t{number}" for number in range(5))]
    for name in names:
        quoted = name.replace('"', '""')
        connection.execute(f'CREATE TRIGGER "{quoted}" AFTER INSERT ON journal BEGIN '
                           f"SELECT 1; END")
    connection.close()
    assert journal.verify().reason == ("trigger(s) the journal does not have: "
                                       "'\\x1b[2Jwiped\\nline', t0, t1, t2, t3 and 2 more")
    connection = raw(journal.path)
    for name in names[2:]:
        connection.execute(f"DROP TRIGGER {name}")
    connection.close()
    assert journal.verify().reason == ("trigger(s) the journal does not have: "
                                       f"'\\x1b[2Jwiped\\nline', '{'x' * 64}'...")


def test_an_empty_journal_verifies(journal: Journal) -> None:
    assert journal.verify() == (True, 0, None, "", 0, GENESIS_HASH)


def test_opening_something_that_is_not_a_journal(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello, this is not a database at all" * 10)
    with pytest.raises(JournalError, match="notes.txt"):
        Journal(text)
    other = tmp_path / "other.db"
    connection = sqlite3.connect(other)
    connection.execute("CREATE TABLE t (x)")
    connection.close()
    with pytest.raises(JournalError, match="not a lowball-table journal"):
        Journal(other)
    with pytest.raises(JournalError, match="no journal at"):
        Journal.open_readonly(tmp_path / "missing.sqlite3")
    with pytest.raises(ValueError, match="durability"):
        Journal(tmp_path / "j.sqlite3", durability="fast")  # type: ignore[arg-type]


def test_read_only_journal_refuses_appends(tmp_path: Path) -> None:
    path = journal_path(tmp_path)
    with Journal(path) as journal:
        fill(journal, 2)
    with Journal.open_readonly(path) as journal:
        assert journal.last_seq == 2 and journal.verify().ok
        with pytest.raises(JournalError, match="read-only"):
            journal.append(PhaseStarted("flop"), table_id=TABLE, hand_id=None)


def test_full_durability_is_the_default(tmp_path: Path) -> None:
    with Journal(tmp_path / "a.sqlite3") as full, \
            Journal(tmp_path / "b.sqlite3", durability="batched") as batched:
        assert full._connection.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert batched._connection.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        assert full._connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


CHILD = """
import sys
from controller.core.events import PhaseStarted
from controller.stream.journal import Journal
journal = Journal(sys.argv[1])
while True:
    record = journal.append(PhaseStarted("deal"), table_id="CALI-01", hand_id=None)
    print(record.seq, record.hash, flush=True)
"""


def test_a_killed_writer_loses_no_acknowledged_record(tmp_path: Path) -> None:
    """Power-loss-like: the writer is SIGKILLed mid-stream. Every seq it reported (it reports
    only after append returned) is in the journal, and the journal verifies. (A SIGKILL keeps
    the OS page cache; a real power cut is what ``synchronous=FULL`` is for.)"""
    path = tmp_path / "journal.sqlite3"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path)], cwd=ROOT,
                             stdout=subprocess.PIPE, text=True)
    acknowledged: dict[int, str] = {}
    assert child.stdout is not None
    try:
        for line in child.stdout:
            seq, hash_ = line.split()
            acknowledged[int(seq)] = hash_
            if len(acknowledged) == 200:
                child.send_signal(signal.SIGKILL)
                break
    finally:
        child.kill()
        child.wait()
        child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    assert sorted(acknowledged) == list(range(1, 201))
    with Journal(path) as journal:
        report = journal.verify()
        assert report.ok, report
        assert journal.last_seq >= 200
        stored = {record.seq: record.hash for record in journal.records(limit=200)}
        assert stored == acknowledged
        assert journal.append(PhaseStarted("showdown"), table_id=TABLE,
                              hand_id=None).seq == journal.last_seq
        assert journal.verify().ok

"""Red team 20: session 14's commit 831ff24 attacked as another process with write access to the
journal's file, its state directory and its log stream would: the running check's batch taken
as sound in one list comparison (``_Follow.read``), the written copy extended from lists
(``Journal.append_all``), the shorter log chain (``controller.cli.logs``).

One hole, mended in session 14 (both tests pass now): Python's ``==`` takes a REAL seq for the
INTEGER the daemon wrote, so a journal table rebuilt with ``seq REAL`` (the triggers put back)
was followed as the daemon's records; the break the schema check then found was at a float
seq, and the held table's heartbeat could not be encoded (``WireError`` out of the loop's
turn). Before 831ff24 the same rebuild raised ``TypeError`` out of the check (a float index
into the written copy) or, after a reopen (no copy kept), gave the same floats. A seq that is
no int now breaks the chain where it is read, in the running check and at start (where a TEXT
seq raised ``TypeError`` too).

Tried and held (a differential run of the old and new ``chain_watch`` over 1,344 tamperings:
messages as TEXT, REAL, with a NUL; hashes in upper case, as BLOB or INTEGER; a deleted
record; at seqs 1, 2, 499-502, 999-1001, the last, the edge of the kept copy after 5,300
appends; limits 499/500/501/5000; with and without a reopen: same break, seq and reason every
time); a continued journal's first seq; the follower's place after a read that fails between
batches; the written copy after a refused append; a log line with a traceback, a value not
UTF-8, a reader gone. Seen and left alone (as before 831ff24): with the daemon's stdout closed
at start (``sys.stdout`` None) a log call raises, with ``PrintLoggerFactory`` too."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.core.table_events import TableClosed
from controller.daemon.chain_watch import ChainWatch, _Follow
from controller.stream.journal import GENESIS_HASH, ChainCheck, Journal, JournalBroken, journal_path

from tests.support.daemon import beating
from tests.support.seq_types import TABLE, _JOURNAL_TABLE, journal_of, other_process


def rebuilt_with_real_seqs(state_dir: Path) -> None:
    """The journal's table made again with ``seq REAL``: the same rows, each seq a float."""
    other_process(state_dir, [("ALTER TABLE journal RENAME TO kept", ()),
                              (_JOURNAL_TABLE, ()),
                              ("INSERT INTO journal SELECT * FROM kept", ()),
                              ("DROP TABLE kept", ())])


def test_a_table_rebuilt_with_real_seqs_breaks_at_an_integer_seq(tmp_path: Path) -> None:
    journal = journal_of(tmp_path, 3)
    watch = ChainWatch(journal, 0, GENESIS_HASH)
    rebuilt_with_real_seqs(tmp_path)
    broken = watch.check()
    assert broken is not None
    # A seq is an integer everywhere it is said (heartbeat, status, the held mark).
    assert type(broken.seq) is int and type(watch.verified_through) is int
    journal.close()


def test_the_held_table_still_beats_after_its_table_was_rebuilt_with_real_seqs(
        tmp_path: Path) -> None:
    with beating(tmp_path) as (table, beat):
        assert table.ask(command="open")["ok"]
        rebuilt_with_real_seqs(tmp_path / "state")
        heartbeat = beat()  # was: WireError (journal_broken_at: a valid integer)
        # Broken at the first record whose seq is no integer: none in the file is the daemon's.
        assert heartbeat is not None and heartbeat.journal_broken_at == 1
        status = table.ask(command="status")["journal"]
        assert type(status["broken_at"]) is int and type(status["verified_through"]) is int


@pytest.mark.parametrize("seq", [500, 501])
@pytest.mark.parametrize("edit", ["message = CAST(message AS TEXT)", "hash = upper(hash)"])
def test_a_record_equal_but_for_its_storage_class_or_case_breaks_where_it_is(
        tmp_path: Path, seq: int, edit: str) -> None:
    # The record at a read's edge (500 rows a read): the list comparison must not take a TEXT
    # message for the bytes, nor an upper-case hash for the daemon's.
    journal = journal_of(tmp_path, 1001, per_input=250)
    watch = ChainWatch(journal, 0, GENESIS_HASH)
    other_process(tmp_path, [(f"UPDATE journal SET {edit} WHERE seq = ?", (seq,))])
    broken = watch.check(sweep=1)
    assert broken is not None
    assert (broken.seq, "altered" in broken.reason) == (seq, True)
    assert watch.verified_through == 0
    journal.close()


def test_a_record_altered_at_the_edge_of_the_kept_copy_is_found(tmp_path: Path) -> None:
    # More than the 5,000 appends kept between two checks: the first records are hashed, the
    # rest compared; the one just before the copy and the first in it are both checked.
    journal = journal_of(tmp_path, 5300, per_input=500)
    assert journal.written_after(0).first_seq == 301
    for seq in (300, 301):
        written = next(journal.records(seq - 1, 1)).message
        watch = ChainWatch(journal, 0, GENESIS_HASH)
        other_process(tmp_path, [("UPDATE journal SET message = ? WHERE seq = ?",
                                  (written + b"\0", seq))])
        broken = watch.check(sweep=1)
        assert broken is not None and broken.seq == seq and "altered" in broken.reason
        other_process(tmp_path, [("UPDATE journal SET message = ? WHERE seq = ?",
                                  (written, seq))])
    assert ChainWatch(journal, 0, GENESIS_HASH).check(sweep=1) is None
    journal.close()


def test_the_first_records_of_a_continued_journal_are_compared_from_its_first_seq(
        tmp_path: Path) -> None:
    # A journal that continues a quarantined one starts above seq 1, its first record linked
    # to 64 zeros: the first read of its copy starts there, not at seq 1.
    journal = Journal(journal_path(tmp_path), durability="batched", first_seq=9_000)
    journal.append_all([TableClosed(f"closer {number}") for number in range(600)],
                       table_id=TABLE, hand_id=None)
    assert ChainWatch(journal, 8_999, GENESIS_HASH).check(sweep=1) is None
    written = next(journal.records(8_999, 1)).message
    other_process(tmp_path, [("UPDATE journal SET message = ? WHERE seq = 9000",
                              (written.replace(b"closer 0", b"closer 9"),))])
    watch = ChainWatch(journal, 8_999, GENESIS_HASH)
    broken = watch.check(sweep=1)
    assert broken is not None and broken.seq == 9_000 and "altered" in broken.reason
    journal.close()


def test_a_read_that_fails_between_batches_leaves_the_place_of_the_last_sound_batch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    journal = journal_of(tmp_path, 1200, per_input=400)
    reads = journal.link_batches

    def failing(after_seq: int, limit: int) -> Iterator[list[tuple[int, str, str, bytes]]]:
        batches = reads(after_seq, limit)
        yield next(batches)
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(journal, "link_batches", failing)
    follow = _Follow(0, GENESIS_HASH)
    with pytest.raises(sqlite3.DatabaseError):
        follow.read(journal, 1200, journal.written_after(0))
    assert (follow.seq, follow.hash, follow.read_count) == (500, journal.hash_at(500), 500)
    watch = ChainWatch(journal, 0, GENESIS_HASH)
    broken = watch.check()
    assert broken is not None and broken.seq == 1 and "cannot be read" in broken.reason
    assert watch.verified_through == 0
    journal.close()


def test_a_refused_append_leaves_the_written_copy_as_the_file_is(tmp_path: Path) -> None:
    journal = journal_of(tmp_path, 3)
    before = journal.written_after(0)
    connection = sqlite3.connect(journal_path(tmp_path), isolation_level=None)
    connection.execute("CREATE TRIGGER quiet BEFORE INSERT ON journal "
                       "BEGIN SELECT RAISE(IGNORE); END")
    with pytest.raises(Exception, match="a trigger the journal does not have"):
        journal.append_all([TableClosed("a"), TableClosed("b")], table_id=TABLE, hand_id=None)
    assert journal.written_after(0) == before and journal.last_seq == 3
    connection.execute("DROP TRIGGER quiet")
    connection.close()
    journal.append_all([TableClosed("c"), TableClosed("d")], table_id=TABLE, hand_id=None)
    kept = journal.written_after(0)
    stored = list(journal.links(0, 10))
    assert [(seq, prev, hash_, message) for seq, prev, hash_, message in stored] == [
        (1 + index, kept.hashes[index], kept.hashes[index + 1], kept.messages[index])
        for index in range(5)]
    assert ChainWatch(journal, 0, GENESIS_HASH).check() is None
    journal.close()


@pytest.mark.parametrize("column", ["REAL", "TEXT"])
def test_a_journal_rebuilt_with_seqs_that_are_no_integers_is_broken_at_start(
        tmp_path: Path, column: str) -> None:
    # Found with the hole above: the start-up check took a REAL seq for the integer (the
    # held table's heartbeat then said a float seq), and a TEXT one raised TypeError.
    journal = journal_of(tmp_path, 3)
    journal.close()
    other_process(tmp_path, [("ALTER TABLE journal RENAME TO kept", ()),
                             (_JOURNAL_TABLE.replace("seq REAL", f"seq {column}"), ()),
                             ("INSERT INTO journal SELECT * FROM kept", ()),
                             ("DROP TABLE kept", ())])
    check, reopened = ChainCheck(), Journal.open_readonly(journal_path(tmp_path))
    try:
        with pytest.raises(JournalBroken) as broken:
            for record in reopened.records():
                check(record)
    finally:
        reopened.close()
    assert broken.value.seq == 1 and type(broken.value.seq) is int
    assert "not an integer" in broken.value.reason

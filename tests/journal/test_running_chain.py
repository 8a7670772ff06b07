"""The journal's chain, checked again while the daemon runs (controller/daemon/chain_watch.py):
what it finds, and how the table says so (heartbeat, status) and holds."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from controller.core.table_events import TableClosed
from controller.daemon.chain_watch import ChainWatch, _Follow, check_interval
from controller.stream.journal import GENESIS_HASH, Journal, chain_hash, journal_path

from tests.support.daemon import tamper
from tests.support.daemon import beating
from tests.support.waits import wait_for


TABLE = "CALI-01"


def journal_of(tmp_path: Path, records: int) -> Journal:
    journal = Journal(journal_path(tmp_path))
    for number in range(records):
        journal.append(TableClosed(f"closer {number}"), table_id=TABLE, hand_id=None)
    return journal


def test_new_records_are_verified_as_they_come(tmp_path: Path) -> None:
    journal = journal_of(tmp_path, 3)
    watch = ChainWatch(journal, 0, GENESIS_HASH)
    assert watch.check() is None and watch.verified_through == 3
    journal.append(TableClosed("later"), table_id=TABLE, hand_id=None)
    assert watch.check(limit=10, sweep=1) is None
    assert (watch.verified_at_start, watch.verified_through) == (0, 4)
    journal.close()


def test_a_record_rewritten_after_its_check_is_found_by_the_next_pass(tmp_path: Path) -> None:
    journal = journal_of(tmp_path, 6)
    watch = ChainWatch(journal, 0, GENESIS_HASH)
    assert watch.check(sweep=2) is None             # verified through 6; pass at seq 2
    tamper(tmp_path, 4, b"closer 3", b"closer 9")   # a checked record, triggers put back
    broken = watch.check(sweep=10)
    assert broken is not None and broken.seq == 4 and "altered" in broken.reason
    journal.close()


def test_a_trigger_another_process_added_breaks_the_chain_at_the_next_record(
        tmp_path: Path) -> None:
    journal = journal_of(tmp_path, 3)
    watch = ChainWatch(journal, 0, GENESIS_HASH)
    assert watch.check() is None
    connection = sqlite3.connect(journal_path(tmp_path), isolation_level=None)
    connection.execute("CREATE TRIGGER quiet BEFORE INSERT ON journal "
                       "BEGIN SELECT RAISE(IGNORE); END")
    connection.close()
    broken = watch.check()
    assert broken is not None and broken.seq == 4
    assert broken.reason == "trigger(s) the journal does not have: quiet"
    journal.close()


def rewrite(tmp_path: Path, statements: list[tuple[str, tuple[object, ...]]]) -> None:
    """Another process changes the journal's file, its triggers dropped and put back."""
    connection = sqlite3.connect(journal_path(tmp_path), isolation_level=None)
    triggers = connection.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger'") \
        .fetchall()
    connection.execute("DROP TRIGGER journal_no_update")
    for statement, values in statements:
        connection.execute(statement, values)
    for (sql,) in triggers:
        if "journal_no_update" in sql:
            connection.execute(sql)
    connection.close()


def test_records_compared_with_the_daemons_copy_break_as_the_chain_would(
        tmp_path: Path) -> None:
    # The follow takes a record equal to the one the daemon wrote without hashing it: a
    # record rewritten with its hash recomputed, and the next one pointing at it but holding
    # the daemon's own hash and message, is still found where the chain breaks.
    journal = journal_of(tmp_path, 5)
    prev_hash = journal.hash_at(2)
    assert prev_hash is not None
    watch = ChainWatch(journal, 2, prev_hash)
    kept = journal.written_after(2)
    assert (kept.first_seq, kept.hashes[0], len(kept.messages)) == (3, prev_hash, 3)
    assert journal.written_after(5).messages == []
    message = kept.messages[0].replace(b"closer 2", b"closer 7")
    forged = chain_hash(prev_hash, message)
    rewrite(tmp_path, [("UPDATE journal SET message = ?, hash = ? WHERE seq = 3",
                        (message, forged)),
                       ("UPDATE journal SET prev_hash = ? WHERE seq = 4", (forged,))])
    broken = watch.check()
    assert broken is not None and broken.seq == 4 and "altered" in broken.reason
    journal.close()


def test_records_as_written_are_sound_together_only_linked_to_the_record_before(
        tmp_path: Path) -> None:
    # The follow takes a batch equal, row for row, to the records the daemon wrote in one
    # comparison: only if its first record links to the one followed before it, which, read
    # outside the daemon's copy or hashed, may not be the one the daemon wrote.
    journal = journal_of(tmp_path, 5)
    written = journal.written_after(2)
    stray = _Follow(2, chain_hash(GENESIS_HASH, b"not the daemon's record 2"))
    broken = stray.read(journal, 3, written)
    assert broken is not None and broken.seq == 3 and "prev_hash" in broken.reason
    assert stray.seq == 2
    linked = _Follow(2, written.hashes[0])
    assert linked.read(journal, 3, written) is None
    assert (linked.seq, linked.hash, linked.read_count) == (5, journal.last_hash, 3)
    journal.close()


def test_a_chain_recomputed_over_the_daemons_records_is_not_the_one_it_wrote(
        tmp_path: Path) -> None:
    journal = journal_of(tmp_path, 4)
    watch = ChainWatch(journal, 0, GENESIS_HASH)
    statements: list[tuple[str, tuple[object, ...]]] = []
    prev_hash = GENESIS_HASH
    for record in list(journal.records()):
        message = record.message.replace(b"closer", b"opener")
        hash_ = chain_hash(prev_hash, message)
        statements.append(("UPDATE journal SET message = ?, prev_hash = ?, hash = ? "
                           "WHERE seq = ?", (message, prev_hash, hash_, record.seq)))
        prev_hash = hash_
    rewrite(tmp_path, statements)
    broken = watch.check()
    assert broken is not None and broken.seq == 4 and "not the one" in broken.reason
    journal.close()


def test_a_missing_trigger_or_a_missing_last_record_is_found(tmp_path: Path) -> None:
    journal = journal_of(tmp_path, 2)
    watch = ChainWatch(journal, 0, GENESIS_HASH)
    connection = sqlite3.connect(journal_path(tmp_path), isolation_level=None)
    connection.execute("DROP TRIGGER journal_no_delete")
    broken = watch.check()
    assert broken is not None and "trigger" in broken.reason
    connection.execute("DELETE FROM journal WHERE seq = 2")
    connection.close()
    broken = ChainWatch(journal, 0, GENESIS_HASH).check()
    assert broken is not None and broken.seq == 2 and "missing" in broken.reason
    journal.close()


def test_the_daemon_states_it_and_holds_the_table_when_it_fails(tmp_path: Path) -> None:
    with beating(tmp_path) as (table, beat):
        at_start = table.daemon.journal.last_seq
        assert table.ask(command="open")["ok"]
        assert table.ask(command="place", spot=2, wager="ante", amount=700)["ok"]
        heartbeat = wait_for(beat, "a heartbeat")
        assert heartbeat.journal_verified_at_start == at_start
        assert heartbeat.journal_verified_through == table.daemon.journal.last_seq
        assert heartbeat.journal_broken_at is None
        journal = table.ask(command="status")["journal"]
        assert journal["verified_through"] == table.daemon.journal.last_seq
        placed = table.daemon.journal.last_of("wager_placed")
        assert placed is not None
        tamper(tmp_path / "state", placed.seq, b'"amount":700', b'"amount":70000')
        heartbeat = wait_for(lambda: b if (b := beat()) and b.journal_broken_at else None,
                             "the break")
        assert heartbeat.journal_broken_at == placed.seq
        refused = table.ask(command="place", spot=3, wager="ante", amount=700)
        assert not refused["ok"] and f"broken at seq {placed.seq}" in refused["error"]


def test_the_chain_is_checked_every_second_between_heartbeats_set_further_apart(
        tmp_path: Path) -> None:
    # heartbeat_s may be set to a minute: the check must not wait for it (a rewrite is to be
    # found within FOUND_WITHIN_S whatever the heartbeat).
    with beating(tmp_path) as (table, _):
        daemon = table.daemon
        assert table.ask(command="open")["ok"]
        now = daemon.clock()
        daemon.clock = lambda: now
        daemon._next_heartbeat = now + 3600
        daemon._next_chain_check = now + 3600
        assert daemon._poll_timeout() > 3_000_000  # nothing due: the loop may sleep an hour
        assert table.ask(command="place", spot=2, wager="ante", amount=700)["ok"]
        daemon._next_chain_check = 0.0
        daemon._tick()                  # what the loop does at its next turn (no loop runs here)
        assert daemon.chain is not None
        assert daemon.chain.verified_through == daemon.journal.last_seq
        assert daemon._next_heartbeat == now + 3600      # no heartbeat was sent for it
        assert daemon._poll_timeout() <= check_interval(60.0) * 1000 + 1


def test_a_command_a_foreign_trigger_would_drop_holds_the_table_and_publishes_nothing(
        tmp_path: Path) -> None:
    # Another process adds a trigger that skips the daemon's next rows without an error: the
    # command is not carried out (nothing published that the journal lacks), the table is held
    # with the trigger named, and the daemon goes on serving.
    with beating(tmp_path) as (table, beat):
        assert table.ask(command="open")["ok"]
        last = table.daemon.journal.last_seq
        connection = sqlite3.connect(journal_path(tmp_path / "state"), isolation_level=None)
        connection.execute("CREATE TRIGGER quiet BEFORE INSERT ON journal "
                           "BEGIN SELECT RAISE(IGNORE); END")
        connection.close()
        refused = table.ask(command="place", spot=2, wager="ante", amount=700)
        assert not refused["ok"] and "trigger(s) the journal does not have: quiet" \
            in refused["error"]
        assert table.daemon.journal.last_seq == last
        assert table.daemon.publisher is not None
        assert table.daemon.publisher.last_seq == last
        heartbeat = wait_for(beat, "a heartbeat")
        assert heartbeat.journal_broken_at == last + 1
        assert table.ask(command="status")["ok"]

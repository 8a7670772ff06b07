"""Records another process appends and a file renamed over the journal, found while the daemon
runs (controller/daemon/chain_watch.py): the table is held, the next write is answered held,
and the break outlives a restart (controller/daemon/held_mark.py) until a quarantine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import zmq

from controller.daemon import held_mark
from controller.daemon.chain_watch import JournalReplaced
from controller.daemon.journal_quarantine import QUARANTINE_DIR, quarantine
from controller.stream.journal import Journal, journal_path

from tests.support.daemon import run_config
from tests.support.daemon import Daemon
from tests.support.forgery import FORGED_METER, append_forged
from tests.support.journal_files import swap_in_a_copy


def started(tmp_path: Path, context: zmq.Context[Any]) -> Daemon:
    table = Daemon(tmp_path, run_config(tmp_path), context)
    table.daemon.start()
    return table


def test_a_write_refused_by_a_forged_record_holds_the_table_and_a_restart_holds_it(
        tmp_path: Path) -> None:
    context = zmq.Context()
    state = tmp_path / "state"
    table = started(tmp_path, context)
    try:
        assert table.ask(command="open")["ok"]
        meter, written = table.daemon.table.meter, table.daemon.journal.last_seq
        forged = append_forged(state, table.daemon.table_id)
        reply = table.ask(command="place", spot=1, wager="ante", amount=500)
        assert not reply["ok"] and f"broken at seq {forged}" in reply["error"]
        assert "another process" in reply["error"]
        assert table.ask(command="status")["journal"]["broken_at"] == forged
    finally:
        table.daemon.close()
    with Journal.open_readonly(journal_path(state)) as journal:
        assert journal.last_seq == forged  # nothing journaled after the forged record
    table = started(tmp_path, context)
    try:
        status = table.ask(command="status")["journal"]
        assert (status["broken_at"], status["verified_at_start"]) == (forged, written)
        assert not table.ask(command="close")["ok"]
    finally:
        table.daemon.close()
    done = quarantine(state, "a record the daemon did not write")
    assert (done.record.first_bad_seq, done.record.meter, done.record.verified_meter) == \
        (forged, FORGED_METER, meter)
    assert done.record.meter_held  # a supervisor confirms the meter before the table opens
    assert not held_mark.mark_path(state).exists()
    assert held_mark.read(done.archived.parent / "x") is None
    assert (done.archived.parent / f"{done.archived.name}.held").is_file()
    table = started(tmp_path, context)
    try:
        assert table.daemon.journal_broken is None
    finally:
        table.daemon.close()
        context.term()


def test_a_swapped_file_is_held_and_the_daemons_records_are_kept(tmp_path: Path) -> None:
    context = zmq.Context()
    state = tmp_path / "state"
    table = started(tmp_path, context)
    try:
        assert table.ask(command="open")["ok"]
        copied = table.daemon.journal.last_seq
        swap_in_a_copy(state)
        assert table.ask(command="place", spot=1, wager="ante", amount=500)["ok"]
        written, last_hash = table.daemon.journal.last_seq, table.daemon.journal.last_hash
        table.daemon.check_chain()
        broken = table.daemon.journal_broken
        assert isinstance(broken, JournalReplaced) and broken.seq == 1
        assert not table.ask(command="place", spot=2, wager="ante", amount=500)["ok"]
    finally:
        table.daemon.close()
    [kept] = (state / QUARANTINE_DIR).glob("*as-the-daemon-wrote-it.sqlite3")
    with Journal.open_readonly(kept) as journal:
        assert (journal.last_seq, journal.last_hash) == (written, last_hash)
        assert journal.verify().ok
    [found] = (state / QUARANTINE_DIR).glob("*found-at-the-name.sqlite3")
    with Journal.open_readonly(found) as journal:
        assert journal.last_seq == copied and journal.verify().ok
    table = started(tmp_path, context)
    try:
        assert table.daemon.journal_broken is not None
        assert table.daemon.journal_broken.seq == 1
        assert str(kept.relative_to(state)) in table.ask(command="status")["journal"]["broken"]
    finally:
        table.daemon.close()
        context.term()


def test_a_mark_that_does_not_parse_holds_the_table_from_seq_1(tmp_path: Path) -> None:
    for content in (b"\xff", b"[]", b'{"first_bad_seq": -1}', b"{" * 20_000,
                    b'{"first_bad_seq": 3, "daemon_seq": 2, "reason": 5, "found": "", '
                    b'"daemon_hash": ""}'):
        held_mark.mark_path(tmp_path).write_bytes(content)
        broken = held_mark.read(tmp_path)
        assert broken is not None and broken.seq == 1 and "does not parse" in broken.reason


def test_a_write_ahead_log_moved_away_is_a_replaced_file(tmp_path: Path) -> None:
    from controller.core.table_events import TableClosed
    from controller.daemon.chain_watch import ChainWatch
    from controller.stream.journal import GENESIS_HASH

    journal = Journal(journal_path(tmp_path))
    journal.append(TableClosed("closer"), table_id="CALI-01", hand_id=None)
    watch = ChainWatch(journal, 0, GENESIS_HASH)
    assert watch.check() is None
    journal_path(tmp_path).with_name("journal.sqlite3-wal").rename(tmp_path / "elsewhere")
    broken = watch.check()
    assert isinstance(broken, JournalReplaced) and broken.seq == 1
    assert "journal.sqlite3-wal" in broken.reason and "journal.sqlite3," not in broken.reason
    journal.close()


def test_a_mark_that_cannot_be_written_is_written_at_a_later_heartbeat(tmp_path: Path) -> None:
    context = zmq.Context()
    state = tmp_path / "state"
    table = started(tmp_path, context)
    blocker = held_mark.mark_path(state)
    try:
        assert table.ask(command="open")["ok"]
        forged = append_forged(state, table.daemon.table_id)
        blocker.mkdir()  # a folder at the mark's name: nothing can be renamed over it
        table.daemon.check_chain()
        assert table.daemon.journal_broken is not None      # held, written down or not
        assert held_mark.read(state) is not None and blocker.is_dir()
        blocker.rmdir()
        table.daemon._next_heartbeat = 0.0
        table.daemon._tick()
        marked = held_mark.read(state)
        assert marked is not None and marked.seq == forged
    finally:
        table.daemon.close()
        context.term()
    assert [path.name for path in state.iterdir() if "partial" in path.name] == []

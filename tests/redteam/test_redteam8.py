"""Red team 8: the last changes (archived replay, the claim ledger, the console's sign-in
turns, the vocabularies) attacked from outside.

Each test states the behaviour the project promises and is marked xfail (strict) while the
hole is open: a fix turns it into a pass, and strict makes the suite say so."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import zmq

from controller.core.events import Wager
from controller.core.table_events import HandVoided
from controller.daemon.journal_quarantine import quarantine
from controller.stream import wire
from controller.stream.archive import COPY_SUFFIX
from controller.stream.journal import Journal, journal_path
from tests.stream.conftest import HAND, TABLE, context  # noqa: F401 (fixture)
from tests.stream.test_archived_replay import alter, append, replayed

FORGED_REFUND = 9_999_900


def _forge_verified_prefix(archived: Path, first_bad: int) -> None:
    """Rewrite the archived journal's records before ``first_bad`` as a chain of their own
    (plain sha256: anyone can), keep the records from the break on as they are, so the file
    still ends at the seq and hash ``journal_continued`` names."""
    with Journal.open_readonly(archived) as original:
        kept = list(original.records(after_seq=first_bad - 1))
    forged = archived.with_name("forged.sqlite3")
    with Journal(forged, durability="batched") as journal:
        for _ in range(1, first_bad):
            journal.append(HandVoided(HAND, "supervisor-7", "misdeal",
                                      (Wager(2, "ante", FORGED_REFUND),), 150),
                           table_id=TABLE, hand_id=HAND)
    connection = sqlite3.connect(forged, isolation_level=None)
    connection.executemany(
        "INSERT INTO journal (seq, ts, type, hand_id, message, prev_hash, hash) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)", [tuple(record) for record in kept])
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{forged}{suffix}").unlink(missing_ok=True)
    os.replace(forged, archived)


def test_an_archive_whose_verified_records_were_rewritten_is_not_served_as_verified(
        context: zmq.Context[Any], tmp_path: Path) -> None:  # noqa: F811
    append(tmp_path, 10)
    alter(journal_path(tmp_path), 8)                   # the break: seq 8
    archived = quarantine(tmp_path, "disk damage", by="sam").archived
    _forge_verified_prefix(archived, 8)
    events, client = replayed(context, tmp_path)
    refunds = [wager.amount for event in events if event.type == "hand_voided"
               for wager in getattr(event.data, "returned")]
    assert FORGED_REFUND not in refunds, (
        f"forged records served as verified from {client.archived}")


def test_the_archives_copy_is_not_read_through_a_link_out_of_the_state_directory(
        context: zmq.Context[Any], tmp_path: Path) -> None:  # noqa: F811
    state = tmp_path / "state"
    append(state, 6)
    alter(journal_path(state), 6)
    archived = quarantine(state, "disk damage", by="sam").archived
    outside = tmp_path / "elsewhere" / "journal.sqlite3"
    outside.parent.mkdir()
    os.replace(archived, outside)
    copy = Path(f"{archived.with_suffix('')}{COPY_SUFFIX}")
    copy.unlink(missing_ok=True)
    copy.symlink_to(outside)
    archived.write_bytes(b"not a journal")            # the archive itself unreadable
    events, client = replayed(context, state)
    assert not client.archived, (
        f"records served from {outside} (outside {state}): {client.archived}")
    assert [event.seq for event in events] == [7]


# --- the console's sign-in turns ---------------------------------------------------------------

def _under_a_guesser(now: list[float]) -> Any:
    from controller.console.sessions import CONSOLE_FAILURES, Sessions

    sessions = Sessions(15, {}, clock=lambda: now[0])
    for guess in range(CONSOLE_FAILURES):
        sessions.failed(f"10.1.{guess}.1")
    return sessions


def test_a_turn_is_one_check_under_a_guesser() -> None:
    from controller.console.sessions import SPACING_S

    now = [0.0]
    sessions = _under_a_guesser(now)
    now[0] += SPACING_S
    checked = 0
    for name in ("alice", "bob", "carol", "dave", "erin", "frank"):
        if sessions.locked_for("10.66.0.1") == 0:   # sign_in's look, then the check
            checked += 1
            sessions.failed("10.66.0.1")
        now[0] += 0.1
    assert checked == 1, f"{checked} credentials checked within one turn of {SPACING_S} s"


def test_a_full_waiting_line_does_not_keep_the_supervisor_out() -> None:
    from controller.console.sessions import MAX_WAITING

    now = [0.0]
    sessions = _under_a_guesser(now)
    guessers = [f"2001:db8::{index:x}" for index in range(MAX_WAITING)]
    for guesser in guessers:                         # each asks once, within the first minute
        sessions.locked_for(guesser)
        now[0] += 60.0 / MAX_WAITING
    checked, turn = 0, 0
    while now[0] < 11 * 60:                          # ten more minutes
        for _ in range(17):                          # a guesser's request, round the line
            guesser = guessers[turn % MAX_WAITING]
            turn += 1
            if sessions.locked_for(guesser) == 0:
                sessions.failed(guesser)
                sessions.locked_for(guesser)             # and back in line at once
        if int(now[0]) % 2 == 0 and sessions.locked_for("10.0.0.7") == 0:
            checked += 1                             # the supervisor, every 2 s
        now[0] += 1.0
    assert checked > 0, "the supervisor was kept out of line for ten minutes"


def test_a_dealers_sign_in_does_not_buy_guesses_at_a_supervisors_credential() -> None:
    from controller.console.sessions import CONSOLE_FAILURES, SPACING_S, WINDOW_S, Sessions

    now = [0.0]
    sessions = Sessions(15, {}, clock=lambda: now[0])
    screens = [f"2001:db8::{index:x}" for index in range(256)]
    for screen in screens:                  # first, the dealer's account signed in on each
        assert sessions.locked_for(screen) == 0
        sessions.signed_in_from(screen, "dealer")   # (what app.py does on a dealer's success)
    for guess in range(CONSOLE_FAILURES):   # then the guessing starts: the console slows
        sessions.failed(screens[guess])
    assert sessions.locked_for("10.9.9.9") > 0
    checked = 0
    while now[0] < WINDOW_S:
        for screen in screens:              # any name: the table tries every supervisor's
            if sessions.locked_for(screen) == 0:
                sessions.failed(screen)
                checked += 1
        now[0] += 1.0
    assert checked <= WINDOW_S / SPACING_S + 1, (
        f"{checked} supervisor credentials checked in one minute under a guesser")


# --- the publisher under a flood of replay requests --------------------------------------------

def test_a_flood_of_replays_on_one_family_does_not_starve_the_other(
        context: zmq.Context[Any], tmp_path: Path) -> None:  # noqa: F811
    import json
    import time

    from controller.stream.publisher import EventPublisher

    append(tmp_path, 1200)
    alter(journal_path(tmp_path), 1200)
    quarantine(tmp_path, "disk damage", by="sam")
    journal = Journal(journal_path(tmp_path), durability="batched")
    publisher = EventPublisher(
        context, table_id=TABLE, pub_endpoint="tcp://127.0.0.1:*",
        replay_endpoint="tcp://127.0.0.1:*", cms_pub_endpoint="tcp://127.0.0.1:*",
        cms_replay_endpoint="tcp://127.0.0.1:*", journal=journal,
        snapshot=lambda: {"journaled": journal.last_seq})
    flood, floor = context.socket(zmq.DEALER), context.socket(zmq.DEALER)
    try:
        flood.connect(publisher.replay_endpoint)
        floor.connect(publisher.cms_replay_endpoint)
        floor.send(b'{"request": "snapshot"}')
        surveillance_router, cms_router = publisher.sockets
        assert cms_router.poll(10_000, zmq.POLLIN)      # the floor's request is waiting
        answered_at = None
        for turn in range(1, 31):                        # the daemon's loop, turn by turn
            for _ in range(8):                           # a surveillance client keeps asking
                flood.send(json.dumps({"request": "replay", "after": 0}).encode())
            assert surveillance_router.poll(10_000, zmq.POLLIN)
            publisher.handle_replay(deadline=time.monotonic() + 0.02)
            while flood.poll(0):
                flood.recv()
            if floor.poll(0):
                answered_at = turn
                break
        assert answered_at is not None, "the floor's snapshot went unanswered for 30 turns"
    finally:
        flood.close(0)
        floor.close(0)
        publisher.close()
        journal.close()


# --- a damaged archive ------------------------------------------------------------------------

def test_a_damaged_archive_is_read_from_its_copy_or_named_lost(
        context: zmq.Context[Any], tmp_path: Path) -> None:  # noqa: F811
    append(tmp_path, 400)
    alter(journal_path(tmp_path), 400)
    archived = quarantine(tmp_path, "disk damage", by="sam").archived
    with archived.open("r+b") as file:             # page 1 (the header, the schema) intact
        size = file.seek(0, os.SEEK_END)
        file.seek(4096)
        file.write(b"\xa5" * (size - 4096))
    events, client = replayed(context, tmp_path)
    assert events and events[-1].seq == 401, "the new journal's records were not served"
    assert sorted([*((first, last) for first, last, _ in client.archived),
                   *((lost.first, lost.last) for lost in client.lost)])[0][0] == 1


# --- the floor behind a quarantine, served a swapped archive -----------------------------------

def _inflate_contributions(archived: Path, first_bad: int, factor: int) -> None:
    """Rewrite the archive's verified records with every meter contribution ``factor`` times
    what was journaled, the chain recomputed (sha256, no key), the records from the break on
    (and so the head journal_continued names) as they were."""
    import json

    from controller.core.canonical_json import canonical_json
    from controller.stream.journal import GENESIS_HASH, chain_hash

    connection = sqlite3.connect(archived, isolation_level=None)
    connection.execute("DROP TRIGGER journal_no_update")
    prev = GENESIS_HASH
    rows = connection.execute("SELECT seq, message FROM journal WHERE seq < ? ORDER BY seq",
                              (first_bad,)).fetchall()
    for seq, message in rows:
        envelope = json.loads(message)
        if envelope["type"] == "meter_contributed":
            envelope["data"]["contribution"] *= factor
        message = canonical_json(envelope)
        digest = chain_hash(prev, message)
        connection.execute("UPDATE journal SET message = ?, prev_hash = ?, hash = ? "
                           "WHERE seq = ?", (message, prev, digest, seq))
        prev = digest
    connection.close()


def test_the_pool_does_not_count_contributions_from_a_swapped_archive(
        postgres: Any, database: str, tmp_path: Path) -> None:  # noqa: F811
    from bench.floor_rig import FloorProcess, PoolDealer, wait_until, write_floor_config
    from tests.floor.test_pool_floor import journal, link_up, linked_table, query, settled
    from tests.redteam.test_floor_after_quarantine import caught_up, contributions
    from tests.redteam.test_quarantine_mid_hand import damage_last_record

    endpoint = f"ipc://{tmp_path}/pool"
    table = linked_table("TCL-01", endpoint)
    floor = None
    try:
        config = write_floor_config(tmp_path / "floor.toml", database, [table], {},
                                    pools={"LINK-1": [table.table_id]}, pool_link=endpoint)
        floor = FloorProcess(config, tmp_path / "floor.log")
        wait_until(lambda: link_up(table), "the table hears the pool")
        dealer = PoolDealer(table, {1: "P-1"})
        dealer.hand()
        wait_until(lambda: settled(database, table), "the first hand in the pool")
        floor.stop()                                    # the floor is behind from here
        dealer.hand()
        dealer.hand()
        table.kill()
        old = contributions(table)
        damaged = damage_last_record(table.state_dir)
        archived = quarantine(table.state_dir, "disk damage found at start", by="sam").archived
        _inflate_contributions(archived, damaged, 100)  # someone with the state dir's rights
        table.start()
        floor.start()
        assert table.ask({"command": "open"})["ok"]
        wait_until(lambda: link_up(table), "the table hears the pool again")
        PoolDealer(table, {1: "P-1"}).hand()
        wait_until(lambda: caught_up(database, table), "the floor and the pool caught up",
                   timeout=60)
        new = contributions(table)
        (pooled,), = query(database, "SELECT contributions FROM floor_pool_meters")
    finally:
        if floor is not None:
            floor.stop()
        table.close()
    assert pooled == old + new, f"the table journaled {old} + {new} cents; the pool {pooled}"


def test_a_damaged_page_inside_an_archive_is_named_not_a_wall(
        context: zmq.Context[Any], tmp_path: Path) -> None:  # noqa: F811
    append(tmp_path, 3000)
    alter(journal_path(tmp_path), 3000)
    archived = quarantine(tmp_path, "disk damage", by="sam").archived
    size = archived.stat().st_size
    with archived.open("r+b") as file:             # one page, half way through
        file.seek(size // 4096 // 2 * 4096)
        file.write(b"\xa5" * 4096)
    events, client = replayed(context, tmp_path, after=1000)
    assert events and events[-1].seq == 3001, "the new journal's records were not served"

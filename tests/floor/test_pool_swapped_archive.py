"""The pool counts no contribution from a swapped archive.

Red team 8: the last changes (archived replay, the claim ledger, the console's sign-in
turns, the vocabularies) attacked from outside.

Each test states the behaviour the project promises and is marked xfail (strict) while the
hole is open: a fix turns it into a pass, and strict makes the suite say so."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from controller.daemon.journal_quarantine import quarantine


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
    from tests.support.processes import FloorProcess, PoolDealer, wait_until, write_floor_config
    from tests.support.pool import journal, link_up, linked_table, query, settled
    from tests.support.pool import caught_up, contributions
    from tests.support.journal_files import damage_last_record

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

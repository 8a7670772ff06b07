"""The table side of the linked pool, with real table daemons on the simulators, the floor
service and a real PostgreSQL: the signs show the pool's meter; a hit locks the pool and every
linked sign shows JACKPOT and the winning table; verification is refused until the floor has
claimed the hit; the floor stopped, the tables journal the link lost, refuse progressive wagers
at lock naming each spot (the spot's lamp says so) while ante and bonus deal on, and rejoin by
themselves when it is back; a linked table killed mid-hand while PostgreSQL restarts shows the
pool again, and no contribution is counted twice or lost."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg

from bench.power_loss import CREDENTIAL
from controller.floor.local_cluster import LocalCluster
from drivers.meter import meter_text
from drivers.spots import PROGRESSIVE_CLOSED

from tests.support.pool import SEED, journal, pool_caught_up, query
from tests.support.processes import FloorProcess, PoolDealer, TableProcess, wait_until, \
    write_floor_config

POOL = "LINK-1"


def sign(table: TableProcess) -> str | None:
    text: str | None = table.meter.device.text
    return text


def journaled(table: TableProcess, kind: str) -> list[dict[str, Any]]:
    return [data for _, record, data in journal(table) if record == kind]


def test_linked_tables_show_the_pool_wait_for_its_claim_and_survive_the_link_cut(
        postgres: LocalCluster, database: str, tmp_path: Path) -> None:
    endpoint = f"ipc://{tmp_path}/pool"
    tables: list[TableProcess] = []
    floor = None
    try:
        for table_id in ("TCL-01", "TCL-02"):
            tables.append(TableProcess(table_id, link=(POOL, endpoint)))
        first, second = tables
        config = write_floor_config(tmp_path / "floor.toml", database, tables, {},
                                    pools={POOL: [t.table_id for t in tables]},
                                    pool_link=endpoint)
        floor = FloorProcess(config, tmp_path / "floor.log")

        # the signs show the pool's meter, and a contribution on one table reaches both
        wait_until(lambda: all(journaled(t, "pool_meter") for t in tables), "the pool's meter")
        assert all(sign(t) == meter_text(SEED) for t in tables)
        dealer = PoolDealer(first, {1: "P-1"})
        dealer.hand()
        wait_until(lambda: all(sign(t) == meter_text(SEED + 20) for t in tables),
                   "the contribution on both signs")

        # the jackpot dealt while the floor is stopped: verification waits for its claim
        dealer.jackpot_next()
        dealer.after_lock = floor.stop
        dealer.hand()
        (pending,) = journaled(first, "jackpot_pending")
        refused = first.ask({"command": "verify_jackpot", "credential": CREDENTIAL})
        assert not refused["ok"] and "not claimed by pool LINK-1" in str(refused)

        # the link lost: progressive refused at lock naming the spot, its lamp says so
        wait_until(lambda: journaled(second, "pool_link")[-1]["status"] == "lost",
                   "the link lost", timeout=15)
        for wager, amount in (("ante", 500), ("bonus", 500), ("progressive", 100)):
            assert second.ask({"command": "place", "spot": 2, "wager": wager,
                               "amount": amount})["ok"]
        lock = second.ask({"command": "lock"})
        assert not lock["ok"]
        assert "spot 2: the pool link is down: no progressive wagers" in str(lock)
        wait_until(lambda: second.spots.device.lamps[2] == PROGRESSIVE_CLOSED,
                   "the spot's lamp")
        assert second.ask({"command": "cancel", "spot": 2, "wager": "progressive"})["ok"]
        assert second.ask({"command": "lock"})["ok"]                # ante and bonus deal on
        assert second.ask({"command": "void", "reason": "the test deals no cards",
                           "credential": CREDENTIAL})["ok"]

        # the floor back: both rejoin by themselves, the hit is claimed, every sign shows it
        floor.start()
        wait_until(lambda: all(journaled(t, "pool_link")[-1]["status"] == "connected"
                               for t in tables), "the link back", timeout=30)
        (claimed,) = wait_until(lambda: journaled(first, "jackpot_claimed"), "the claim")
        assert claimed["hand_id"] == pending["hand_id"] and claimed["lock_order"] == 1
        assert claimed["paid"] == SEED + 40                # the seed and both contributions
        jackpot = f"JACKPOT TCL-01 {meter_text(claimed['paid'])}"
        wait_until(lambda: all(sign(t) == jackpot for t in tables), "JACKPOT on both signs")
        assert journaled(second, "pool_meter")[-1]["state"] == "locked"

        # verified: the pool reseeds and unlocks, the signs show the meter again
        assert first.ask({"command": "verify_jackpot", "credential": CREDENTIAL})["ok"]
        wait_until(lambda: all(sign(t) == meter_text(SEED) for t in tables), "the reseed")

        # a linked table killed mid-hand (its contribution journaled at lock) while PostgreSQL
        # restarts, then started again: the hand voided, the sign the pool's, and the
        # contribution and its void each counted once
        for wager, amount in (("ante", 500), ("bonus", 500), ("progressive", 100)):
            assert second.ask({"command": "place", "spot": 3, "wager": wager,
                               "amount": amount})["ok"]
        assert second.ask({"command": "lock"})["ok"]
        second.kill()
        postgres.restart()
        second.start()
        assert second.ask({"command": "void", "reason": "controller restarted in a test",
                           "credential": CREDENTIAL})["ok"]
        # (the floor resumes the table's stream and PostgreSQL's connection: slower on a
        # loaded machine, as in test_pool_floor)
        wait_until(lambda: sign(second) == meter_text(SEED), "the sign after the restart",
                   timeout=60)
        wait_until(lambda: pool_caught_up(database, tables), "every event in the pool",
                   timeout=60)
        contributions = sum(data["contribution"] for table in tables
                            for data in journaled(table, "meter_contributed"))
    finally:
        status = floor.stop() if floor is not None else 0
        for table in tables:
            table.close()
    assert status == 0, floor.log_tail()
    assert contributions == 20 * 3
    with psycopg.connect(database) as connection:
        (meter, ledger_sum, contributed, voided), = connection.execute(
            "SELECT meter, ledger_sum, contributions, voided FROM floor_pool_meters").fetchall()
    assert contributed == contributions and voided == 20 and meter == ledger_sum == SEED

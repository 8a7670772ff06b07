"""The linked pool's ledger against a real PostgreSQL: filled from stored table events exactly
once, hits claimed in serializable transactions and ordered, concurrent claims from several
connections each paid once."""

from __future__ import annotations

import io
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from controller.floor import pool, report, store
from controller.settings.validation import MAX_CENTS

from tests.support.ledger import T0, SEED, linked, settings, Tables, connection, ledger


def meter(connection: psycopg.Connection, pool_id: str = "LINK-1") -> dict[str, Any]:
    (row,) = [row for row in pool.meters(connection) if row["pool_id"] == pool_id]
    assert row["meter"] == row["ledger_sum"] == (row["contributions"] - row["voided"]
                                                 - row["jackpots"] + row["reseeds"]
                                                 + row["adjustments"])
    return row


def test_the_ledger_is_the_tables_events_each_once(connection: psycopg.Connection) -> None:
    pool.configure(connection, [linked()])
    tables = Tables(connection)
    tables.hand("TCL-01", 1, entries=3)
    tables.hand("TCL-02", 1, entries=2, award="pat-4-2-A-one-color")
    voided = "TCL-01-000002"
    tables.event("TCL-01", "hand_started", voided)
    tables.event("TCL-01", "meter_contributed", voided, before=0, contribution=40, after=0)
    tables.event("TCL-01", "hand_voided", voided, hand_id=voided, by="sup", reason="misdeal",
                 returned=[], contributions_reversed=40)
    tables.store()
    assert pool.apply(connection, "LINK-1") == 5
    row = meter(connection)
    assert row["meter"] == SEED + 60 + 40
    assert (row["contributions"], row["voided"], row["fixed_awards"]) == (140, 40, 20000)

    # the whole stream again (a replay from seq 1), and the pool applied again: nothing moves
    store.store_batch(connection, tables.rows, {"TCL-01": 0, "TCL-02": 0})
    before = ledger(connection)
    assert pool.apply(connection, "LINK-1") == 0
    tables.store()
    assert pool.apply(connection, "LINK-1") == 0
    assert ledger(connection) == before


def test_a_hand_voided_twice_is_given_back_once(connection: psycopg.Connection) -> None:
    """A quarantine voids the hand its journal left in play; the floor may have stored that
    hand's void from the archived journal already (its record was the one found damaged)."""
    pool.configure(connection, [linked()])
    tables = Tables(connection)
    hand = "TCL-01-000001"
    tables.event("TCL-01", "hand_started", hand)
    tables.event("TCL-01", "meter_contributed", hand, before=0, contribution=40, after=0)
    for _ in range(2):
        tables.event("TCL-01", "hand_voided", hand, hand_id=hand, by="sup", reason="misdeal",
                     returned=[], contributions_reversed=40)
    tables.store()
    pool.apply(connection, "LINK-1")
    assert [(kind, amount) for kind, amount, *_ in ledger(connection)
            if kind != "reseed"] == [("contribution", 40), ("void", -40)]
    assert meter(connection)["meter"] == SEED


def test_a_hit_locks_the_pool_until_verified_then_reseeds(connection: psycopg.Connection) -> None:
    pool.configure(connection, [linked()])
    tables = Tables(connection)
    tables.hand("TCL-01", 1, entries=5)
    hand = tables.hand("TCL-01", 2, entries=1, award="jackpot", seats=(2, 5),
                       table_amount=SEED + 120)
    tables.hand("TCL-02", 1, entries=4)  # other tables keep dealing while the pool is locked
    tables.store()
    pool.apply(connection, "LINK-1")
    row = meter(connection)
    assert row["locked_by_table"] == "TCL-01" and row["locked_by_hand"] == hand
    assert row["jackpots"] == SEED + 120 and row["meter"] == 80

    with pytest.raises(pool.PoolError, match="locked"):
        pool.adjust(connection, "LINK-1", 100, "a test", "sup")
    tables.event("TCL-01", "jackpot_verified", None, hand_id=hand, by="sup-1", meter=0)
    tables.store(tables.rows[-1:])
    pool.apply(connection, "LINK-1")
    row = meter(connection)
    assert row["locked_by_table"] is None and row["meter"] == SEED + 80


def test_several_seats_share_a_hit_the_odd_cents_stay(connection: psycopg.Connection) -> None:
    pool.configure(connection, [linked(seed=1000)])
    tables = Tables(connection)
    tables.hand("TCL-01", 1, entries=1)  # 1020 on the meter
    tables.hand("TCL-01", 2, entries=1, award="jackpot", seats=(2, 5, 7))  # 1040
    tables.store()
    pool.apply(connection, "LINK-1")
    with connection.transaction():
        hit = connection.execute("SELECT paid, share FROM floor_pool_hits").fetchone()
    assert hit is not None
    paid, share = hit
    assert (paid, share) == (1038, 346)
    assert meter(connection)["meter"] == 2


@pytest.mark.parametrize("rule, second_paid, meter_after", [
    ("seed", SEED, 40),    # the house puts up the seed; the meter keeps what came since
    ("meter", 40, 0),      # the meter as it stands: what came since the first emptied it
])
def test_hits_in_one_batch_are_ordered_by_journal_time(connection: psycopg.Connection, rule: str,
                                                        second_paid: int, meter_after: int
                                                        ) -> None:
    pool.configure(connection, [linked(simultaneous_hit=rule)])
    tables = Tables(connection)
    tables.hand("TCL-02", 1, entries=2)
    second = tables.hand("TCL-02", 2, entries=0, award="jackpot")
    first = tables.hand("TCL-01", 1, entries=0, award="jackpot")
    # TCL-01's hit (and its settings before it) journaled first, before TCL-02's contributions
    tables.rows = [row._replace(ts=T0 - timedelta(seconds=1)) if row.table_id == "TCL-01"
                   else row for row in tables.rows]
    tables.store()
    pool.apply(connection, "LINK-1")
    with connection.transaction():
        hits = connection.execute("SELECT hand_id, lock_order, paid, reseed_due "
                                  "FROM floor_pool_hits ORDER BY hit").fetchall()
    assert hits == [(first, 1, SEED, SEED), (second, 2, second_paid, 0)]
    assert meter(connection)["meter"] == meter_after


def test_a_claim_its_hand_does_not_prove_is_held_disputed_never_paid(
        connection: psycopg.Connection) -> None:
    pool.configure(connection, [linked()])
    tables = Tables(connection)
    contributed = tables.hand("TCL-02", 1, entries=3)

    def started(table: str, number: int) -> str:
        hand = f"{table}-{number:06d}"
        tables.event(table, "hand_started", hand, hand_id=hand, game="three_card_lowball",
                     paytable="paytable-1", number=number)
        return hand

    def claim(table: str, hand: str, seats: tuple[int, ...] = (1,),
              claimed: str | None = None) -> None:
        tables.event(table, "hand_settled", hand, players_net=0, house_result=0)
        tables.event(table, "jackpot_pending", hand, hand_id=claimed or hand,
                     seats=list(seats), amount=SEED)

    claim("TCL-01", "TCL-01-000009")                       # a hand never dealt
    hand = started("TCL-01", 1)
    tables.jackpot_dealt("TCL-01", hand)
    claim("TCL-01", hand, claimed="TCL-02-000001")         # another hand's id
    hand = started("TCL-01", 2)
    tables.jackpot_dealt("TCL-01", hand)
    claim("TCL-01", hand, claimed="H" * 65)                # past the pool channel's bound
    hand = started("TCL-01", 3)
    tables.jackpot_dealt("TCL-01", hand, seats=(1, 2), wagered=(1,))
    claim("TCL-01", hand, seats=(1, 2))                    # seat 2 made no progressive wager
    hand = started("TCL-02", 2)
    tables.jackpot_dealt("TCL-02", hand, pats=())
    claim("TCL-02", hand)                                  # the dealer's pat alone: no jackpot
    hand = started("TCL-02", 3)
    tables.jackpot_dealt("TCL-02", hand, seats=(1, 2))
    claim("TCL-02", hand, seats=(2,))                      # seat 1 hit too
    tables.store()
    assert pool.apply(connection, "LINK-1") == 1           # the contribution, nothing else
    with connection.transaction():
        disputes = connection.execute("SELECT table_id, hand_id, problem "
                                      "FROM floor_pool_disputes ORDER BY dispute").fetchall()
        assert connection.execute("SELECT count(*) FROM floor_pool_hits").fetchone() == (0,)
    problems = [
        ("TCL-01-000009", "hand TCL-01-000009 was never started at TCL-01"),
        ("TCL-01-000001", "hand_id: 'TCL-02-000001' is not its record's hand "
                          "('TCL-01-000001')"),
        ("TCL-01-000002", "is not a hand id of 1 to 64 characters"),
        ("TCL-01-000003", "seat 2 had no progressive wager of 100 cents locked"),
        ("TCL-02-000002", "the cards dealt give the jackpot to seat(s) none, not [1]"),
        ("TCL-02-000003", "the cards dealt give the jackpot to seat(s) [1, 2], not [2]"),
    ]
    assert len(disputes) == len(problems)
    for (table, hand, problem), (expected_hand, expected) in zip(disputes, problems):
        assert hand == expected_hand and expected in problem, (hand, problem)
    assert meter(connection)["meter"] == SEED + 60 and contributed

    # every event read again (as a floor that lost its applied_through would): each dispute
    # is held once, none paid
    with connection.transaction():
        connection.execute("UPDATE floor_pool_tables SET applied_through = 0")
    assert pool.apply(connection, "LINK-1") == 0
    with connection.transaction():
        assert connection.execute("SELECT count(*) FROM floor_pool_disputes").fetchone() == \
            (len(problems),)
    printed = io.StringIO()
    with connection.transaction():
        report.print_report(connection, printed)
    shown = printed.getvalue().split("Disputed jackpot claims (not paid: a supervisor looks at "
                                      "each)\n")[1].splitlines()
    assert len(shown) == 1 + len(problems)
    assert shown[1].split()[:4] == ["LINK-1", "TCL-01", "TCL-01-000009", "3"]
    assert shown[1].endswith("hand TCL-01-000009 was never started at TCL-01 (no hand_started "
                             "stored before seq 3)")


def test_concurrent_claims_are_ordered_and_each_paid_once(connection: psycopg.Connection,
                                                          database: str) -> None:
    tables = [f"TCL-{n:02d}" for n in range(1, 9)]
    pool.configure(connection, [linked(tables)])
    hits = [pool.Hit(table, 10, f"{table}-000001", (1,), T0, SEED) for table in tables]
    results: dict[str, list[Any]] = {table: [] for table in tables}
    start = threading.Barrier(len(tables) * 2)

    def claimant(hit: pool.Hit) -> None:
        with store.connect(database) as own:
            start.wait()
            results[hit.table_id].append(pool.claim(own, "LINK-1", hit))

    threads = [threading.Thread(target=claimant, args=(hit,)) for hit in hits * 2]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    claims = []
    for table in tables:
        made = [claim for claim in results[table] if claim is not None]
        assert len(results[table]) == 2 and len(made) == 1, results[table]  # paid once
        claims.append(made[0])
    assert sorted(claim.lock_order for claim in claims) == list(range(1, len(tables) + 1))
    by_order = sorted(claims, key=lambda claim: claim.lock_order)
    assert by_order[0].paid == SEED and all(claim.paid == SEED for claim in by_order[1:])
    assert [claim.hit for claim in by_order] == sorted(claim.hit for claim in claims)
    row = meter(connection)
    assert row["jackpots"] == SEED * len(tables) and row["meter"] == 0
    assert row["reseeds"] == SEED * len(tables)  # the opening seed and one a later hit


def test_floor_services_applying_one_pool_at_once_count_each_event_once(
        connection: psycopg.Connection, database: str) -> None:
    tables = [f"TCL-{n:02d}" for n in range(1, 5)]
    pool.configure(connection, [linked(tables)])
    stream = Tables(connection)
    for number in range(1, 31):
        for table in tables:
            stream.hand(table, number, entries=1 + number % 3)
    stream.store()
    start = threading.Barrier(4)
    written: list[int] = []

    def service() -> None:
        with store.connect(database) as own:
            start.wait()
            written.append(pool.apply(own, "LINK-1"))

    threads = [threading.Thread(target=service) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(written) == [0, 0, 0, 120]
    expected = sum(20 * (1 + number % 3) for number in range(1, 31)) * len(tables)
    assert meter(connection)["meter"] == SEED + expected


def test_a_table_joins_a_pool_at_the_floors_resume_point(connection: psycopg.Connection) -> None:
    pool.configure(connection, [linked(("TCL-01",))])
    tables = Tables(connection)
    tables.hand("TCL-01", 1, entries=1)
    tables.hand("TCL-02", 1, entries=7)  # before TCL-02 was linked: not the pool's
    tables.store()
    pool.apply(connection, "LINK-1")
    pool.configure(connection, [linked(("TCL-01", "TCL-02"))])
    tables.rows = []
    tables.hand("TCL-02", 2, entries=2)
    tables.store()
    pool.apply(connection, "LINK-1")
    assert meter(connection)["contributions"] == 20 + 40


def test_adjustments_are_rows_with_reasons_refused_below_zero(
        connection: psycopg.Connection) -> None:
    pool.configure(connection, [linked(seed=100)])
    assert pool.adjust(connection, "LINK-1", -40, "meter sign test", "sup-1", "adj-1") == 60
    assert pool.adjust(connection, "LINK-1", -40, "meter sign test", "sup-1", "adj-1") == 60
    with pytest.raises(pool.PoolError, match=r"-\$0.61 would take the meter \(\$0.60\) below"):
        pool.adjust(connection, "LINK-1", -61, "too much", "sup-1")
    with pytest.raises(pool.PoolError, match="non-zero"):
        pool.adjust(connection, "LINK-1", 0, "nothing", "sup-1")
    pool.adjust(connection, "LINK-1", MAX_CENTS - 60, "to the most a meter holds", "sup-1")
    with pytest.raises(pool.PoolError, match=r"past \$10,000,000,000.00"):
        pool.adjust(connection, "LINK-1", 1, "one cent past it", "sup-1")
    pool.adjust(connection, "LINK-1", -(MAX_CENTS - 60), "back", "sup-1")
    with pytest.raises(pool.PoolError, match="no pool"):
        pool.adjust(connection, "LINK-9", 5, "no such pool", "sup-1")
    assert meter(connection)["adjustments"] == -40


def test_the_ledger_is_append_only(connection: psycopg.Connection) -> None:
    pool.configure(connection, [linked()])
    with pytest.raises(psycopg.errors.RaiseException, match="floor_pool_ledger is append-only"):
        with connection.transaction():
            connection.execute("UPDATE floor_pool_ledger SET amount = 0")


def test_a_garbled_event_is_left_out_and_the_rest_applied(connection: psycopg.Connection) -> None:
    pool.configure(connection, [linked()])
    tables = Tables(connection)
    tables.event("TCL-01", "meter_contributed", "TCL-01-000001", contribution="20")
    tables.event("TCL-01", "jackpot_pending", "TCL-01-000001", hand_id="TCL-01-000001",
                 seats=[], amount=5)
    tables.hand("TCL-01", 2, entries=1)
    for _ in range(2):   # the second would take the meter past what the pool channel carries
        tables.event("TCL-02", "meter_contributed", "TCL-02-000001", contribution=MAX_CENTS // 2)
    tables.store()
    assert pool.apply(connection, "LINK-1") == 2
    assert meter(connection)["meter"] == SEED + 20 + MAX_CENTS // 2
    with connection.transaction():   # a claim naming no seat is no claim: held, not paid
        assert connection.execute("SELECT problem FROM floor_pool_disputes").fetchall() == \
            [("seats: [] is not a list of distinct seats (1 to 64)",)]


def test_a_table_listed_but_not_linked_counts_nothing(connection: psycopg.Connection) -> None:
    """A table listed in floor.toml's pool whose settings do not link it keeps its own meter:
    its contributions and voids are not the pool's, its hit is disputed; linked later, it
    counts from its settings naming the pool; unlinked again, it stops."""
    pool.configure(connection, [linked(("TCL-01", "TCL-02", "TCL-03", "TCL-04"))])
    tables = Tables(connection, link=None)
    tables.hand("TCL-01", 1, entries=3)                              # never linked
    voided = "TCL-01-000002"
    tables.event("TCL-01", "meter_contributed", voided, before=0, contribution=40, after=0)
    tables.event("TCL-01", "hand_voided", voided, hand_id=voided, by="sup", reason="misdeal",
                 returned=[], contributions_reversed=40)
    hit = tables.hand("TCL-01", 3, entries=1, award="jackpot", table_amount=SEED)
    tables.configured("TCL-02", "LINK-9")                            # another pool's
    tables.hand("TCL-02", 1, entries=5)
    tables.hand("TCL-03", 1, entries=7)                              # not linked yet
    tables.configured("TCL-03", "LINK-1")
    tables.hand("TCL-03", 2, entries=2)                              # linked: the pool's
    tables.configured("TCL-03", None)
    tables.hand("TCL-03", 3, entries=4)                              # unlinked again
    tables.event("TCL-04", "config_applied", None, fingerprint="0" * 64, reason="opened",
                 changed=[], config={"progressive": {"pool": "LINK-1"}})  # not settings text
    tables.hand("TCL-04", 1, entries=6)
    tables.store()
    assert pool.apply(connection, "LINK-1") == 1
    row = meter(connection)
    assert (row["meter"], row["contributions"], row["voided"], row["jackpots"]) == \
        (SEED + 40, 40, 0, 0)
    with connection.transaction():
        assert connection.execute("SELECT count(*) FROM floor_pool_hits").fetchone() == (0,)
        disputes = connection.execute(
            "SELECT table_id, hand_id, seq, problem FROM floor_pool_disputes").fetchall()
        through = connection.execute("SELECT table_id, applied_through FROM floor_pool_tables "
                                     "ORDER BY table_id").fetchall()
    (hit_seq,) = [r.seq for r in tables.rows if r.type == "jackpot_pending"]
    assert disputes == [("TCL-01", hit, hit_seq, f"TCL-01 was not linked to pool LINK-1 at seq "
                                                 f"{hit_seq}: its meter is its own")]
    assert through == [(table, tables.seqs[table])
                       for table in ("TCL-01", "TCL-02", "TCL-03", "TCL-04")]

    # read again from seq 1: the same
    with connection.transaction():
        connection.execute("UPDATE floor_pool_tables SET applied_through = 0")
    assert pool.apply(connection, "LINK-1") == 0
    # linked from here on, TCL-01 counts: the settings in force before the batch are read
    tables.rows = []
    tables.configured("TCL-01", "LINK-1")
    tables.store()
    pool.apply(connection, "LINK-1")
    tables.rows = []
    tables.hand("TCL-01", 4, entries=1)
    tables.store()
    assert pool.apply(connection, "LINK-1") == 1
    assert meter(connection)["contributions"] == 60

    printed = io.StringIO()
    with connection.transaction():
        report.print_report(connection, printed)
    shown = printed.getvalue().split("Tables listed in a pool but not linked to it")[1]
    assert [line.split() for line in shown.splitlines()[2:5]] == \
        [["LINK-1", "TCL-02", "LINK-9"], ["LINK-1", "TCL-03", "no", "pool"],
         ["LINK-1", "TCL-04", "no", "pool"]]


def test_a_pool_left_out_of_the_config_keeps_its_ledger_and_follows_nothing(
        connection: psycopg.Connection) -> None:
    pool.configure(connection, [linked()])
    pool.configure(connection, [])
    with connection.transaction():
        assert connection.execute("SELECT count(*) FROM floor_pool_tables").fetchone() == (0,)
    assert meter(connection)["meter"] == SEED


def test_floor_adjust_and_report_from_the_command_line(database: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from controller.cli.main import main

    config = tmp_path / "floor.toml"
    config.write_text(f'[database]\ndsn = "{database}"\n\n'
                      '[[tables]]\nid = "TCL-01"\ncms_events = "ipc:///tmp/a"\n'
                      'cms_replay = "ipc:///tmp/b"\n\n'
                      '[[pools]]\nid = "LINK-1"\ntables = ["TCL-01"]\nseed = 100000\n',
                      encoding="utf-8")
    base = ["floor", "adjust", "--config", str(config), "--pool", "LINK-1"]
    assert main([*base, "--amount", "-25.00", "--reason", "sign repaired", "--by", "sup-7"]) == 0
    assert "pool LINK-1: meter $975.00" in capsys.readouterr().out
    assert main([*base, "--amount", "-975.01", "--reason", "too much", "--by", "sup-7"]) == 1
    assert "would take the meter ($975.00) below $0.00" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main([*base, "--amount", "5"])
    assert exited.value.code == 2
    assert "required: --reason, --by" in capsys.readouterr().err
    assert main(["floor", "report", "--config", str(config)]) == 0
    printed = capsys.readouterr().out
    assert "Pools: the meter's ledger" in printed
    assert "LINK-1  open" in printed and "-$25.00" in printed and "$975.00" in printed


def test_a_database_going_away_while_the_service_connects_is_retried(
        connection: psycopg.Connection, database: str, tmp_path: Path) -> None:
    """An operational error after connecting (here a lock not granted in time; a PostgreSQL
    shutting down is another) is the database being unavailable: retried, not fatal."""
    from controller.floor.config import load_floor_config
    from controller.floor.service import FloorService

    pool.configure(connection, [linked(("TCL-01",))])
    config = tmp_path / "floor.toml"
    config.write_text(f'[database]\ndsn = "{database} options=\'-c lock_timeout=50\'"\n\n'
                      '[service]\nretry_s = 0.05\n\n'
                      '[[tables]]\nid = "TCL-01"\ncms_events = "ipc:///tmp/a"\n'
                      'cms_replay = "ipc:///tmp/b"\n\n'
                      '[[pools]]\nid = "LINK-1"\ntables = ["TCL-01"]\n', encoding="utf-8")
    service = FloorService(load_floor_config(config))
    try:
        with store.connect(database) as holder:
            holder.execute("LOCK TABLE floor_pools IN ACCESS EXCLUSIVE MODE")
            assert service._database() is None
        assert service._database() is not None
    finally:
        if service.connection is not None:
            service.connection.close()
        service.context.term()

"""The linked pools' ledger in PostgreSQL, filled from the member tables' stored events.

Every movement of a pool's meter is one row of ``floor_pool_ledger``: the seed it opened at,
each table's journaled contribution (``meter_contributed``), a voided hand's contributions
taken back (``hand_voided``), each jackpot paid (``jackpot_pending``: the hit, claimed here),
the reseed after a verified jackpot (``jackpot_verified``) and a supervisor's adjustment.
Fixed awards (paid by the house, not the meter) are rows too, moving the meter by 0. The
meter (``floor_pools.meter``) moves in the same transaction as its rows, so it is always
their sum (``floor_pool_meters`` shows both). A hit is claimed only if its hand, read back
from the table's stored events, dealt it (:mod:`controller.floor.pool_hits`); any other
``jackpot_pending`` is held in ``floor_pool_disputes`` for a supervisor and never paid.

A table listed in the pool (floor.toml) counts only while it is *linked* to it: while its
settings in force (its last journaled ``config_applied`` before the record) name the pool
(``progressive.pool``). A table listed but not linked keeps its own meter and pays its own
jackpots, so its contributions and voids are left out of the ledger (logged once for the
table) and its hits are held as disputed.

Exactly once: a row that comes from a table's event is keyed by ``(table_id, seq, kind)``, and
each member table's ``applied_through`` (the last seq the pool has read) moves in the same
transaction as the rows. The pool reads only events up to the table's resume point
(``floor_cursors``): everything up to it is stored, so nothing arrives later below it. A
floor service killed, a table's stream replayed or PostgreSQL restarted leaves the ledger
where its last transaction did, and the next one goes on from there.

Each application and each claim is one SERIALIZABLE transaction that starts by locking the
pool's row; a transaction that loses a race with another floor service (two services may
follow tables of one pool) fails with a serialization failure and is run again. Hits are
ordered by that: the transaction that claims first is the first hit. Within one
transaction (one floor service's batch), the member tables' events are taken in the order of
their journal times, each table's in seq order.

While a hit awaits its supervisor's verification the pool is *locked*: tables keep dealing
and contributing, and a hit meanwhile is paid what the pool's ``simultaneous_hit`` says (the
seed, put up by the house, or the meter as it then stands). docs/floor.md says more.
"""

from __future__ import annotations

import heapq
import itertools
import json
import random
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, NamedTuple, TypeVar

import psycopg
import structlog
from psycopg import errors
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from controller.core.money import format_cents
from controller.floor.config import Pool
from controller.floor.pool_hits import (
    Disputed,
    check_hand,
    claimed_amount,
    claimed_hand,
    claimed_seats,
)
from controller.core.money import format_cents
from controller.settings.validation import MAX_CENTS
from controller.errors import LowballError

log = structlog.get_logger("floor.pool")

#: The table events a pool reads.
POOL_EVENTS = ("meter_contributed", "hand_voided", "progressive_awarded", "jackpot_pending",
               "jackpot_verified")
#: The table event that journals its settings, and with them the pool it is linked to.
SETTINGS_EVENT = "config_applied"
#: The longest settings text read for its pool (a table's whole settings are a few kB).
MAX_SETTINGS_TEXT = 1_000_000
#: How many times a transaction that lost a serialization race is run again.
ATTEMPTS = 50
T = TypeVar("T")


class PoolError(LowballError, ValueError):
    """A pool operation refused (an unknown pool, an adjustment the meter cannot take)."""


class Hit(NamedTuple):
    """A jackpot hit as a table journaled it (its ``jackpot_pending``)."""
    table_id: str
    seq: int
    hand_id: str
    seats: tuple[int, ...]
    ts: datetime
    #: What the table's own meter paid (its ``jackpot_pending`` amount).
    table_amount: int


class Claim(NamedTuple):
    """What the pool paid a hit: ``lock_order`` 1 is a hit on an open pool (paid the meter);
    2 and up came while earlier hits awaited verification."""
    hit: int
    lock_order: int
    paid: int
    share: int


class _Event(NamedTuple):
    table_id: str
    seq: int
    type: str
    hand_id: str | None
    ts: datetime
    data: dict[str, Any]


def serializable(connection: psycopg.Connection, work: Callable[[], T]) -> T:
    """``work()`` in one SERIALIZABLE transaction, run again (a little later each time) when
    it loses a race with a concurrent one."""
    for attempt in itertools.count(1):
        try:
            with connection.transaction():
                connection.execute("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")
                return work()
        except (errors.SerializationFailure, errors.DeadlockDetected):
            if attempt >= ATTEMPTS:
                raise
            time.sleep(random.uniform(0, 0.002 * attempt))
    raise AssertionError("unreachable")


# --- the configuration -------------------------------------------------------------------------

def configure(connection: psycopg.Connection, pools: Sequence[Pool]) -> None:
    """Make the pools and their tables those of floor.toml. A new pool opens at its seed (a
    ledger row); a pool's meter and ledger are never touched by its settings changing. A table
    newly linked to a pool joins it at the floor's resume point for it: what the floor had
    stored of that table before is not the pool's."""
    def work() -> None:
        for pool in pools:
            created = connection.execute(
                """INSERT INTO floor_pools (pool_id, seed, wager, contribution, contribution_rate,
                                            simultaneous_hit, awards, meter)
                   VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
                   ON CONFLICT (pool_id) DO UPDATE
                      SET seed = excluded.seed, wager = excluded.wager,
                          contribution = excluded.contribution,
                          contribution_rate = excluded.contribution_rate,
                          simultaneous_hit = excluded.simultaneous_hit,
                          awards = excluded.awards, configured_at = clock_timestamp()
                   RETURNING xmax = 0""",
                (pool.id, pool.seed, pool.wager, pool.contribution,
                 pool.model_dump(mode="json")["contribution_rate"], pool.simultaneous_hit,
                 Jsonb(pool.awards.model_dump(by_alias=True)), pool.seed)).fetchone()
            if created is not None and created[0]:
                connection.execute(
                    """INSERT INTO floor_pool_ledger (pool_id, kind, amount, reference, detail)
                       VALUES (%s, 'reseed', %s, 'opened', 'the pool opened at its seed')""",
                    (pool.id, pool.seed))
        members = [(table, pool.id) for pool in pools for table in pool.tables]
        connection.execute("DELETE FROM floor_pool_tables "
                           "WHERE NOT (table_id = ANY(%s::text[]))",
                           ([table for table, _ in members],))
        with connection.cursor() as cursor:
            cursor.executemany(
                """INSERT INTO floor_pool_tables (table_id, pool_id, applied_through)
                   SELECT %(table)s, %(pool)s, coalesce(
                          (SELECT resume_after FROM floor_cursors WHERE table_id = %(table)s), 0)
                   ON CONFLICT (table_id) DO UPDATE
                      SET pool_id = excluded.pool_id,
                          applied_through = CASE
                              WHEN floor_pool_tables.pool_id = excluded.pool_id
                              THEN floor_pool_tables.applied_through
                              ELSE excluded.applied_through END""",
                [{"table": table, "pool": pool_id} for table, pool_id in members])

    serializable(connection, work)


# --- filling the ledger ------------------------------------------------------------------------

class _Pool:
    """One pool inside one transaction: its settings, and its meter as the rows move it."""

    def __init__(self, connection: psycopg.Connection, pool_id: str):
        row = connection.execute(
            """SELECT seed, contribution, simultaneous_hit, awards, meter, wager FROM floor_pools
                WHERE pool_id = %s FOR UPDATE""", (pool_id,)).fetchone()
        if row is None:
            raise PoolError(f"no pool {pool_id!r} in the floor store")
        self.connection, self.pool_id = connection, pool_id
        self.seed: int = row[0]
        self.contribution: int = row[1]
        self.simultaneous_hit: str = row[2]
        self.awards: dict[str, int] = row[3]
        self.meter: int = row[4]
        self.wager: int = row[5]
        self.rows = 0
        #: Jackpot claims held as disputed in this transaction.
        self.disputes = 0

    def scalar(self, sql: str, *args: object) -> int:
        row = self.connection.execute(sql, args).fetchone()
        assert row is not None
        return int(row[0])

    def record(self, kind: str, amount: int, *, paid: int | None = None,
               event: _Event | Hit | None = None, hand_id: str | None = None,
               reference: str | None = None, detail: str = "") -> bool:
        """One ledger row, and the meter moved by ``amount``; False if the row was already
        there (its key: the event and kind, or the reference)."""
        table_id, seq, ts = (event.table_id, event.seq, event.ts) if event else (None, None, None)
        inserted = self.connection.execute(
            """INSERT INTO floor_pool_ledger (pool_id, kind, amount, paid, table_id, seq,
                                              hand_id, ts, reference, detail)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
               ON CONFLICT DO NOTHING RETURNING entry""",
            (self.pool_id, kind, amount, paid, table_id, seq, hand_id, ts, reference,
             detail)).fetchone()
        if inserted is None:
            return False
        self.meter += amount
        self.rows += 1
        return True

    def save(self) -> None:
        self.connection.execute("UPDATE floor_pools SET meter = %s WHERE pool_id = %s",
                                (self.meter, self.pool_id))

    # --- the events ---

    def contributed(self, event: _Event) -> None:
        amount = _cents(event, "contribution")
        if amount == 0:
            return
        if self.meter + amount > MAX_CENTS:
            raise _Refused(f"contribution: {amount} would take the meter ({self.meter}) past "
                           f"{MAX_CENTS} cents")
        detail = ""
        if self.contribution == 0 or amount % self.contribution:
            detail = (f"not a whole number of the pool's contribution ({self.contribution} "
                      "cents a wager): the table's contribution rate is not the pool's")
            log.warning("contribution at another rate than the pool's", pool=self.pool_id,
                        table=event.table_id, seq=event.seq, contribution=amount,
                        pool_contribution=self.contribution)
        self.record("contribution", amount, event=event, hand_id=event.hand_id, detail=detail)

    def voided(self, event: _Event) -> None:
        hand_id = _text(event, "hand_id")
        # what the hand put on the meter less what a void of it gave back already (a void
        # row is negative): a hand is given back once
        contributed = self.scalar(
            """SELECT coalesce(sum(amount), 0)::bigint FROM floor_pool_ledger
                WHERE pool_id = %s AND table_id = %s AND hand_id = %s
                  AND kind IN ('contribution', 'void')""",
            self.pool_id, event.table_id, hand_id)
        back = min(contributed, self.meter)
        if back <= 0:
            return
        detail = "" if back == contributed else (
            f"{contributed - back} of the hand's {contributed} cents had already gone to a "
            "jackpot: the meter gives back what it holds")
        self.record("void", -back, event=event, hand_id=hand_id, detail=detail)

    def awarded(self, event: _Event) -> None:
        award = _text(event, "award")
        if award == "jackpot":
            return  # the hit is claimed from the table's jackpot_pending
        amount = _cents(event, "amount")
        expected = self.awards.get(award)
        detail = "" if expected == amount else (
            f"the pool's {award} award is {expected} cents" if expected is not None
            else f"{award!r} is not one of the pool's awards")
        self.record("fixed_award", 0, paid=amount, event=event, hand_id=event.hand_id,
                    detail=detail)

    def claim(self, hit: Hit) -> Claim | None:
        """The pool pays ``hit``: the meter if no earlier hit awaits verification, otherwise
        what ``simultaneous_hit`` says; several seats share it equally, the odd cents staying
        on the meter. None if the hit was already claimed."""
        if not hit.seats:
            raise _Refused(f"jackpot of hand {hit.hand_id} names no seat")
        waiting = self.scalar(
            "SELECT count(*) FROM floor_pool_hits WHERE pool_id = %s AND verified_seq IS NULL",
            self.pool_id)
        first = waiting == 0
        from_house = not first and self.simultaneous_hit == "seed"
        available = self.seed if from_house else self.meter
        share = available // len(hit.seats)
        paid = share * len(hit.seats)
        claimed = self.connection.execute(
            """INSERT INTO floor_pool_hits (pool_id, table_id, seq, hand_id, seats, ts,
                                            lock_order, paid, share, reseed_due, table_amount)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
               ON CONFLICT DO NOTHING RETURNING hit""",
            (self.pool_id, hit.table_id, hit.seq, hit.hand_id, list(hit.seats), hit.ts,
             waiting + 1, paid, share, self.seed if first else 0,
             hit.table_amount)).fetchone()
        if claimed is None:
            return None
        order = "first hit" if first else f"hit {waiting + 1} while the pool is locked"
        if from_house:
            self.record("reseed", paid, event=hit, hand_id=hit.hand_id,
                        detail=f"the house puts up the seed for the {order}")
        self.record("jackpot", -paid, paid=paid, event=hit, hand_id=hit.hand_id,
                    detail=f"{order}: {len(hit.seats)} seat(s), {share} cents each")
        log.info("jackpot claimed", pool=self.pool_id, table=hit.table_id, hand=hit.hand_id,
                 lock_order=waiting + 1, paid=paid, table_paid=hit.table_amount)
        return Claim(claimed[0], waiting + 1, paid, share)

    def pending(self, event: _Event) -> None:
        """A table's ``jackpot_pending``: claimed if its hand, read back from the table's
        stored events, dealt that jackpot (:mod:`controller.floor.pool_hits`); otherwise held
        as disputed, never paid (the table hears no claim: its jackpot stays pending)."""
        try:
            hand_id = claimed_hand(event.data, event.hand_id)
            seats, amount = claimed_seats(event.data), claimed_amount(event.data)
            started = check_hand(self.connection, event.table_id, event.seq, hand_id, seats,
                                 self.wager)
            self._linked_throughout(event, hand_id, started)
        except Disputed as disputed:
            self.dispute(event, str(disputed))
            return
        self.claim(Hit(event.table_id, event.seq, hand_id, seats, event.ts, amount))

    def _linked_throughout(self, event: _Event, hand_id: str, started: int) -> None:
        """:class:`Disputed` unless the table was linked to this pool from the hand's start to
        its claim: a hand dealt while the table's meter was its own (its contribution went
        there) is not the pool's to pay, however the table's settings read at the claim."""
        at_start = linked_pools(self.connection, [event.table_id], [started])[event.table_id]
        if at_start != self.pool_id:
            raise Disputed(f"hand {hand_id} started at seq {started} while {event.table_id} "
                           f"was not linked to pool {self.pool_id}: its meter was its own")
        changed = self.connection.execute(
            """SELECT min(seq) FROM floor_events WHERE table_id = %s AND type = %s
                  AND seq > %s AND seq < %s""",
            (event.table_id, SETTINGS_EVENT, started, event.seq)).fetchone()
        if changed is not None and changed[0] is not None:
            raise Disputed(f"{event.table_id} changed its settings (seq {changed[0]}) between "
                           f"hand {hand_id}'s start and its claim")

    def dispute(self, event: _Event, problem: str) -> None:
        held = self.connection.execute(
            """INSERT INTO floor_pool_disputes (pool_id, table_id, seq, hand_id, ts, problem)
               VALUES (%s, %s, %s, %s, %s, %s)
               ON CONFLICT DO NOTHING RETURNING dispute""",
            (self.pool_id, event.table_id, event.seq, event.hand_id, event.ts,
             problem)).fetchone()
        if held is not None:
            self.disputes += 1
            log.error("a jackpot claim the pool does not pay: held as disputed for a "
                      "supervisor (floor_pool_disputes)", pool=self.pool_id,
                      table=event.table_id, seq=event.seq, hand=event.hand_id, problem=problem)

    def verified(self, event: _Event) -> None:
        hand_id = _text(event, "hand_id")
        row = self.connection.execute(
            """UPDATE floor_pool_hits SET verified_seq = %s, verified_at = %s, verified_by = %s
                WHERE pool_id = %s AND table_id = %s AND hand_id = %s AND verified_seq IS NULL
                RETURNING reseed_due""",
            (event.seq, event.ts, _text(event, "by")[:200], self.pool_id, event.table_id,
             hand_id)).fetchone()
        if row is None:
            log.warning("a verified jackpot the pool did not claim", pool=self.pool_id,
                        table=event.table_id, hand=hand_id, seq=event.seq)
            return
        if row[0]:
            self.record("reseed", row[0], event=event, hand_id=hand_id,
                        detail=f"reseed after the verified jackpot of {hand_id}")

    def apply(self, event: _Event) -> None:
        if event.type == "jackpot_pending":
            self.pending(event)
            return
        try:
            if not isinstance(event.data, dict):
                raise _Refused("its data is not an object")
            if event.type == "meter_contributed":
                self.contributed(event)
            elif event.type == "hand_voided":
                self.voided(event)
            elif event.type == "progressive_awarded":
                self.awarded(event)
            elif event.type == "jackpot_verified":
                self.verified(event)
        except _Refused as refused:
            log.error("a table event the pool cannot read: left out of the ledger (it stays "
                      "in floor_events)", pool=self.pool_id, table=event.table_id,
                      seq=event.seq, type=event.type, problem=str(refused))


class _Refused(LowballError, ValueError):
    pass


def _cents(event: _Event, key: str) -> int:
    value = event.data.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_CENTS:
        raise _Refused(f"{key}: {value!r} is not a whole number of cents from 0 to {MAX_CENTS}")
    return value


def _text(event: _Event, key: str) -> str:
    value = event.data.get(key)
    if not isinstance(value, str) or not 0 < len(value) <= 200:
        raise _Refused(f"{key}: {value!r} is not a text of 1 to 200 characters")
    return value


def settings_pool(config: object) -> str | None:
    """The pool a table's journaled settings (a ``config_applied``'s ``config`` text) link it
    to: their ``progressive.pool``; None when they name none or cannot be read (a table whose
    settings the floor cannot read is linked to no pool)."""
    if not isinstance(config, str) or len(config) > MAX_SETTINGS_TEXT:
        return None
    try:
        document = json.loads(config)
    except ValueError:
        return None
    progressive = document.get("progressive") if isinstance(document, dict) else None
    pool = progressive.get("pool") if isinstance(progressive, dict) else None
    return pool if isinstance(pool, str) and 0 < len(pool) <= 32 else None


def linked_pools(connection: psycopg.Connection, tables: Sequence[str],
                 through: Sequence[int | None]) -> dict[str, str | None]:
    """Each table's linked pool as its last ``config_applied`` stored at or before its seq in
    ``through`` (None: its last stored) says; None when it names none or none is stored."""
    rows = connection.execute(
        """SELECT m.table_id, (SELECT e.message->'data'->'config' FROM floor_events e
                                WHERE e.type = %s AND e.table_id = m.table_id
                                  AND (m.through IS NULL OR e.seq <= m.through)
                                ORDER BY e.seq DESC LIMIT 1)
             FROM unnest(%s::text[], %s::bigint[]) AS m(table_id, through)""",
        (SETTINGS_EVENT, list(tables), list(through))).fetchall()
    return {table_id: settings_pool(config) for table_id, config in rows}


#: The (pool, table) pairs logged as listed but not linked (once each, not once a record).
_logged_unlinked: set[tuple[str, str]] = set()


def _not_linked(pool: _Pool, event: _Event, linked_to: str | None) -> None:
    """A record of a table listed in the pool while its settings in force do not link it: its
    meter is its own, so the record is not the pool's. A hit is held as disputed; anything
    else is left out of the ledger, logged once for the table."""
    if event.type == "jackpot_pending":
        pool.dispute(event, f"{event.table_id} was not linked to pool {pool.pool_id} at seq "
                            f"{event.seq}: its meter is its own")
        return
    if (pool.pool_id, event.table_id) not in _logged_unlinked:
        _logged_unlinked.add((pool.pool_id, event.table_id))
        log.error("a table listed in the pool is not linked to it (its settings' "
                  "progressive.pool): its records are left out of the ledger",
                  pool=pool.pool_id, table=event.table_id, seq=event.seq,
                  linked_to=linked_to)


def apply(connection: psycopg.Connection, pool_id: str) -> int:
    """Read the member tables' stored events the pool has not read yet into its ledger, in
    one serializable transaction; the number of ledger rows written. A record counts only if
    the table's settings in force at it (its last ``config_applied`` before it) link the table
    to this pool: otherwise its meter is its own (:func:`_not_linked`)."""
    def work() -> int:
        pool = _Pool(connection, pool_id)
        members = connection.execute(
            """SELECT t.table_id, t.applied_through, c.resume_after
                 FROM floor_pool_tables t JOIN floor_cursors c USING (table_id)
                WHERE t.pool_id = %s AND c.resume_after > t.applied_through
                ORDER BY t.table_id""", (pool_id,)).fetchall()
        if not members:
            return 0
        events = [_Event(*row) for row in connection.execute(
            """SELECT e.table_id, e.seq, e.type, e.hand_id, e.ts, e.message->'data'
                 FROM floor_events e
                 JOIN unnest(%s::text[], %s::bigint[], %s::bigint[]) AS m(table_id, after, through)
                   ON e.table_id = m.table_id AND e.seq > m.after AND e.seq <= m.through
                WHERE e.type = ANY(%s)
                ORDER BY e.table_id, e.seq""",
            ([m[0] for m in members], [m[1] for m in members], [m[2] for m in members],
             [*POOL_EVENTS, SETTINGS_EVENT])).fetchall()]
        # the settings in force at each record: the last journaled before it
        linked = linked_pools(connection, [m[0] for m in members], [m[1] for m in members])
        for event in in_journal_order(events):
            if event.type == SETTINGS_EVENT:
                config = event.data.get("config") if isinstance(event.data, dict) else None
                linked[event.table_id] = settings_pool(config)
                if linked[event.table_id] == pool_id:
                    _logged_unlinked.discard((pool_id, event.table_id))
            elif linked.get(event.table_id) != pool_id:
                _not_linked(pool, event, linked.get(event.table_id))
            else:
                pool.apply(event)
        pool.save()
        with connection.cursor() as cursor:
            cursor.executemany("UPDATE floor_pool_tables SET applied_through = %s "
                               "WHERE table_id = %s",
                               [(through, table_id) for table_id, _, through in members])
        return pool.rows

    return serializable(connection, work)


def in_journal_order(events: Iterable[_Event]) -> Iterable[_Event]:
    """Events of several tables (each table's in seq order) merged by journal time: each
    table's stay in seq order even if its clock stepped back."""
    tables = [list(group) for _, group in itertools.groupby(events, key=lambda e: e.table_id)]
    return heapq.merge(*tables, key=lambda event: (event.ts, event.table_id))


def claim(connection: psycopg.Connection, pool_id: str, hit: Hit) -> Claim | None:
    """Claim one hit in its own serializable transaction (what :func:`apply` does for each
    ``jackpot_pending`` whose hand dealt it); None if it was already claimed."""
    def work() -> Claim | None:
        pool = _Pool(connection, pool_id)
        result = pool.claim(hit)
        pool.save()
        return result

    return serializable(connection, work)


def _signed(cents: int) -> str:
    """``+$25.00``, ``-$25.00``."""
    return ("+" if cents >= 0 else "") + format_cents(cents)


def adjust(connection: psycopg.Connection, pool_id: str, amount: int, reason: str, by: str,
           reference: str | None = None) -> int:
    """A supervisor's adjustment of the meter, with its reason; the meter after. Refused
    while a hit awaits verification, at 0, or taking the meter below 0 or past
    :data:`MAX_CENTS`. ``reference`` makes a retried request
    count once (a new one is made when None)."""
    if isinstance(amount, bool) or not isinstance(amount, int) or amount == 0 \
            or abs(amount) > MAX_CENTS:
        raise PoolError(f"amount: {amount!r} is not a non-zero whole number of cents, at most "
                        f"{format_cents(MAX_CENTS)} either way")
    reason, by = reason.strip(), by.strip()
    if not 0 < len(reason) <= 200 or not 0 < len(by) <= 64:
        raise PoolError("an adjustment needs a reason (1 to 200 characters) and who made it "
                        "(1 to 64)")

    def work() -> int:
        pool = _Pool(connection, pool_id)
        locked = connection.execute(
            "SELECT hand_id FROM floor_pool_hits WHERE pool_id = %s AND verified_seq IS NULL "
            "ORDER BY hit LIMIT 1", (pool_id,)).fetchone()
        if locked is not None:
            raise PoolError(f"pool {pool_id} is locked: the jackpot of {locked[0]} awaits "
                            "verification")
        if pool.meter + amount < 0:
            raise PoolError(f"amount: {_signed(amount)} would take the meter "
                            f"({format_cents(pool.meter)}) below $0.00")
        if pool.meter + amount > MAX_CENTS:
            raise PoolError(f"amount: {_signed(amount)} would take the meter "
                            f"({format_cents(pool.meter)}) past {format_cents(MAX_CENTS)}")
        pool.record("adjustment", amount, reference=reference or f"adjustment {uuid.uuid4()}",
                    detail=f"by {by}: {reason}")
        pool.save()
        return pool.meter

    return serializable(connection, work)


def unlinked_members(connection: psycopg.Connection) -> list[tuple[str, str, str | None]]:
    """The tables listed in a pool whose last stored settings do not link them to it: (pool,
    table, the pool they are linked to or None)."""
    with connection.transaction():
        members = connection.execute(
            "SELECT pool_id, table_id FROM floor_pool_tables ORDER BY pool_id, table_id"
        ).fetchall()
        linked = linked_pools(connection, [table for _, table in members],
                              [None] * len(members))
    return [(pool_id, table, linked.get(table)) for pool_id, table in members
            if linked.get(table) != pool_id]


def meters(connection: psycopg.Connection) -> list[dict[str, Any]]:
    """Each pool's row of ``floor_pool_meters``."""
    with connection.transaction():
        with connection.cursor(row_factory=dict_row) as cursor:
            return cursor.execute("SELECT * FROM floor_pool_meters ORDER BY pool_id").fetchall()

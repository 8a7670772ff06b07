"""The house edge of each table's settings in force, from the exact math, cached in PostgreSQL.

A table journals its settings (``config_applied``: game, paytable lines, rules, progressive)
before any hand played under them. As the floor stores a batch, each ``config_applied`` in it
gets its *math fingerprint* (SHA-256 of the canonical JSON of what the math reads: the game,
the paytable's odds, the rules and the progressive's wager, seed, rate and awards; not the
paytable's notes, the limits, the spots nor the pool's id), kept in ``floor_table_settings``;
a fingerprint new to the floor is added to ``floor_house_math`` as ``pending``, with the
settings it came from. Each fingerprint's figures (:mod:`controller.par.wager_edges`: each
wager's edge per unit wagered) are computed once and kept in ``floor_house_math_edges``:

- at once, in the batch's transaction, when no counting is needed (Three Card Lowball with a
  seeded paytable's Bonus lines);
- otherwise by the floor service's :class:`HouseMathWorker`, in a process of its own (Cali
  LowBall: seconds; Three Card Lowball's other lines: minutes of CPU), so the feeds and the
  writer never wait for it. Meanwhile the fingerprint is ``computing`` and theoretical win
  says so; never a guess.

Settings the math cannot read are ``refused`` with the reason, shown where theo would be.
``lowball-table floor math`` computes every pending fingerprint in the foreground.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import threading
from collections.abc import Iterable
from fractions import Fraction
from typing import Any, NamedTuple

import psycopg
import structlog
from psycopg.types.json import Jsonb

from controller.core.canonical_json import canonical_json
from controller.core.table_settings import (
    PAYTABLE_NOTES,
    GameSetup,
    SettingsError,
    paytable_from,
    progressive_from,
    rules_from,
)
from controller.core.vocabulary import Game
from controller.par import wager_edges
from controller.par.figures import fraction_text

log = structlog.get_logger("floor.house_math")

#: The longest settings text read (a table's whole settings are a few kB).
MAX_SETTINGS_TEXT = 1_000_000
#: The digits kept of an edge in ``numeric`` (the exact fraction is kept as text beside it):
#: 30 decimals, so theo on a billion dollars wagered is off by less than 10^-17 of a cent.
EDGE_PLACES = 30
#: A fingerprint ``computing`` for longer than this was left by a service that stopped: it is
#: taken up again (a Three Card Lowball count takes 2 to 3 minutes).
STALE_MINUTES = 60
#: How often the worker looks for pending fingerprints when nothing wakes it, in seconds.
POLL_S = 5.0

_PENDING = """
SELECT fingerprint, inputs FROM floor_house_math
 WHERE state = 'pending'
    OR (state = 'computing' AND started_at < clock_timestamp() - make_interval(mins => %s))
 ORDER BY first_seen LIMIT 1 FOR UPDATE SKIP LOCKED
"""


class MathInputs(NamedTuple):
    """What the math reads of one journaled settings document."""
    fingerprint: str
    game: str
    paytable: str
    document: dict[str, Any]


def math_inputs(config: object) -> MathInputs | str:
    """A ``config_applied``'s ``config`` text -> its math inputs, or why they cannot be read
    (a hostile table's text included: this never raises, so no batch is refused for it)."""
    try:
        return _math_inputs(config)
    except (ValueError, TypeError, ArithmeticError, RecursionError, LookupError) as error:
        return f"the journaled settings cannot be read: {type(error).__name__}"


def _math_inputs(config: object) -> MathInputs | str:
    if not isinstance(config, str) or len(config) > MAX_SETTINGS_TEXT:
        return "the journaled settings are not a text the floor reads"
    try:
        data = json.loads(config)
    except ValueError:
        return "the journaled settings are not JSON"
    if not isinstance(data, dict):
        return "the journaled settings are not a table of values"
    game, paytable = data.get("game"), data.get("paytable")
    if game not in tuple(Game) or not isinstance(paytable, str) or not 0 < len(paytable) <= 64:
        return "the journaled settings name no game and paytable the math knows"
    lines = data.get("paytable_lines")
    progressive = data.get("progressive")
    document = {"game": game, "paytable_lines": lines, "rules": data.get("rules"),
                "progressive": progressive}
    try:
        setup(document, paytable)
    except SettingsError as error:
        return f"the journaled settings cannot be read: {error}"
    assert isinstance(lines, dict) and isinstance(progressive, dict)   # setup() read them
    odds = {wager: value for wager, value in lines.items() if wager not in PAYTABLE_NOTES}
    what = {**document, "paytable_lines": odds,
            "progressive": {key: value for key, value in progressive.items() if key != "pool"}}
    return MathInputs(hashlib.sha256(canonical_json(what)).hexdigest(), game, paytable, document)


def setup(document: dict[str, Any], paytable: str) -> GameSetup:
    return GameSetup(document["game"], paytable, paytable_from(document.get("paytable_lines")),
                     rules_from(document.get("rules")),
                     progressive_from(document.get("progressive")))


def _edge_rows(fingerprint: str, edges: dict[str, Fraction]) -> list[tuple[str, str, str, str]]:
    return [(fingerprint, wager, _numeric(edge), fraction_text(edge))
            for wager, edge in sorted(edges.items())]


def _numeric(edge: Fraction) -> str:
    """The edge to :data:`EDGE_PLACES` decimals, rounded half away from zero."""
    from controller.par.figures import decimal_text
    return decimal_text(edge, EDGE_PLACES)


# --- at ingest --------------------------------------------------------------------------------

_IN_BATCH = """SELECT table_id, seq, message->'data'->'config' FROM floor_incoming
                WHERE type = 'config_applied' ORDER BY table_id, seq"""
_NOT_FINGERPRINTED = """
SELECT e.table_id, e.seq, e.message->'data'->'config' FROM floor_events e
 WHERE e.type = 'config_applied'
   AND NOT EXISTS (SELECT 1 FROM floor_table_settings t
                    WHERE t.table_id = e.table_id AND t.seq = e.seq)
 ORDER BY e.table_id, e.seq
"""


#: Each hand started, with the settings in force (its table's last fingerprinted
#: ``config_applied`` before it); ``source``: the batch, or every stored event.
_HANDS = """
INSERT INTO floor_hand_settings (table_id, started_seq, hand_id, paytable, settings_seq,
                                 fingerprint)
SELECT h.table_id, h.seq, h.hand_id, h.message->'data'->>'paytable', s.seq, s.fingerprint
  FROM {source} h
  LEFT JOIN LATERAL (SELECT t.seq, t.fingerprint FROM floor_table_settings t
                      WHERE t.table_id = h.table_id AND t.seq < h.seq
                      ORDER BY t.seq DESC LIMIT 1) s ON true
 WHERE h.type = 'hand_started' AND h.hand_id IS NOT NULL
ON CONFLICT (table_id, started_seq) DO NOTHING
"""


def fingerprint_incoming(connection: psycopg.Connection) -> int:
    """Fingerprint the settings the batch in ``floor_incoming`` journals, and give each hand it
    starts its settings in force; how many settings. Nothing on a schema older than the one
    that holds them (migration 9 does it for what was stored)."""
    if connection.execute("SELECT to_regclass('floor_table_settings')").fetchone() == (None,):
        return 0
    done = _fingerprint(connection, connection.execute(_IN_BATCH).fetchall())
    connection.execute(_HANDS.format(source="floor_incoming"))
    return done


def fingerprint_every_settings_and_hand(connection: psycopg.Connection) -> int:
    """Fingerprint every stored ``config_applied`` that has none yet, and give every stored
    hand its settings in force; how many settings."""
    done = _fingerprint(connection, connection.execute(_NOT_FINGERPRINTED).fetchall())
    connection.execute(_HANDS.format(source="floor_events"))
    return done


def _fingerprint(connection: psycopg.Connection,
                 rows: Iterable[tuple[str, int, Any]]) -> int:
    settings: list[tuple[str, int, str, str | None, str | None]] = []
    maths: dict[str, tuple[str | None, str | None, Jsonb | None, str, str]] = {}
    for table_id, seq, config in rows:
        text = config if isinstance(config, str) else json.dumps(config)
        inputs = math_inputs(text)
        if isinstance(inputs, str):
            # refused settings: a fingerprint of their own, so theo names the reason
            fingerprint = "refused:" + hashlib.sha256(text.encode()).hexdigest()
            settings.append((table_id, seq, fingerprint, None, None))
            maths.setdefault(fingerprint, (None, None, None, "refused", inputs))
            continue
        settings.append((table_id, seq, inputs.fingerprint, inputs.game, inputs.paytable))
        maths.setdefault(inputs.fingerprint, (inputs.game, inputs.paytable,
                                              Jsonb(inputs.document), "pending", ""))
    if not settings:
        return 0
    with connection.cursor() as cursor:
        cursor.executemany(
            """INSERT INTO floor_house_math (fingerprint, game, paytable, inputs, state, detail)
               VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (fingerprint) DO NOTHING""",
            [(fingerprint, *values) for fingerprint, values in maths.items()])
        cursor.executemany(
            """INSERT INTO floor_table_settings (table_id, seq, fingerprint, game, paytable)
               VALUES (%s, %s, %s, %s, %s) ON CONFLICT (table_id, seq) DO NOTHING""", settings)
    for fingerprint, (_, paytable, document, state, _) in maths.items():
        if state == "pending" and document is not None and paytable is not None:
            _record_if_recorded(connection, fingerprint, document.obj, paytable)
    return len(settings)


def _record_if_recorded(connection: psycopg.Connection, fingerprint: str,
                        document: dict[str, Any], paytable: str) -> None:
    """A pending fingerprint whose figures need no counting gets them at once."""
    edges = wager_edges.recorded_edges(setup(document, paytable))
    if edges is not None:
        _store_edges(connection, fingerprint, edges, only_pending=True)


def _store_edges(connection: psycopg.Connection, fingerprint: str,
                 edges: dict[str, Fraction], only_pending: bool = False) -> bool:
    done = connection.execute(
        f"""UPDATE floor_house_math SET state = 'computed', detail = '',
                   computed_at = clock_timestamp()
             WHERE fingerprint = %s AND state {"= 'pending'" if only_pending else "<> 'computed'"}
            RETURNING fingerprint""", (fingerprint,)).fetchone()
    if done is None:
        return False
    with connection.cursor() as cursor:
        cursor.executemany(
            """INSERT INTO floor_house_math_edges (fingerprint, wager, edge, fraction)
               VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING""",
            _edge_rows(fingerprint, edges))
    return True


# --- computing what is pending ----------------------------------------------------------------

def compute(document: dict[str, Any], paytable: str) -> dict[str, str]:
    """Each wager's exact edge (as fraction text): what the worker's process returns."""
    return {wager: fraction_text(edge)
            for wager, edge in wager_edges.exact_edges(setup(document, paytable)).items()}


def claim(connection: psycopg.Connection) -> tuple[str, dict[str, Any], str] | None:
    """Take the oldest pending fingerprint (or one left ``computing`` by a stopped service):
    marked ``computing`` and committed, so the reports say so. None when there is none."""
    with connection.transaction():
        row = connection.execute(_PENDING, (STALE_MINUTES,)).fetchone()
        if row is None:
            return None
        fingerprint, inputs = row
        paytable = connection.execute(
            """UPDATE floor_house_math SET state = 'computing', started_at = clock_timestamp()
                WHERE fingerprint = %s RETURNING paytable""", (fingerprint,)).fetchone()
    assert paytable is not None
    return fingerprint, inputs, paytable[0]


def finish(connection: psycopg.Connection, fingerprint: str,
           result: dict[str, str] | BaseException) -> None:
    """Keep a computation's figures, or why it failed (``refused``)."""
    with connection.transaction():
        if isinstance(result, BaseException):
            connection.execute(
                """UPDATE floor_house_math SET state = 'refused', detail = %s,
                          computed_at = clock_timestamp() WHERE fingerprint = %s""",
                (f"the math failed: {type(result).__name__}: {result}"[:500], fingerprint))
            return
        _store_edges(connection, fingerprint,
                     {wager: Fraction(text) for wager, text in result.items()})


def release(connection: psycopg.Connection, fingerprint: str) -> None:
    """A computation stopped before its end: the fingerprint is pending again."""
    with connection.transaction():
        connection.execute("""UPDATE floor_house_math SET state = 'pending', started_at = NULL
                               WHERE fingerprint = %s AND state = 'computing'""",
                           (fingerprint,))


def compute_pending(connection: psycopg.Connection) -> int:
    """Compute every pending fingerprint here, one after the other; how many."""
    done = 0
    while (claimed := claim(connection)) is not None:
        fingerprint, inputs, paytable = claimed
        try:
            result: dict[str, str] | BaseException = compute(inputs, paytable)
        except (SettingsError, ValueError, ArithmeticError) as error:
            result = error
        finish(connection, fingerprint, result)
        done += 1
    return done


class HouseMathWorker:
    """The floor service's computer of pending fingerprints: a thread with its own database
    connection that hands each computation to a process of its own (the feeds and the
    writer keep the interpreter), one at a time."""

    def __init__(self, dsn: str, stopping: threading.Event):
        self.dsn = dsn
        self.stopping = stopping
        self.wake = threading.Event()
        self.computed = 0
        self.thread = threading.Thread(target=self._run, daemon=True, name="floor-house-math")

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        processes = _LazyPool()
        connection: psycopg.Connection | None = None
        try:
            while not self.stopping.is_set():
                try:
                    if connection is None or connection.closed:
                        connection = psycopg.connect(self.dsn, autocommit=False,
                                                     connect_timeout=10)
                    self._compute(connection, processes)
                except psycopg.Error as error:
                    log.warning("house math: database unavailable", error=str(error).strip())
                    if connection is not None:
                        connection.close()
                    connection = None
                self.wake.wait(POLL_S)
                self.wake.clear()
        finally:
            processes.close()
            if connection is not None:
                connection.close()

    def _compute(self, connection: psycopg.Connection, processes: _LazyPool) -> None:
        while not self.stopping.is_set():
            claimed = claim(connection)
            if claimed is None:
                return
            fingerprint, inputs, paytable = claimed
            log.info("house math: computing", fingerprint=fingerprint[:12],
                     game=inputs.get("game"), paytable=paytable)
            pending = processes.get().apply_async(compute, (inputs, paytable))
            while not pending.ready():
                if self.stopping.wait(0.2):
                    release(connection, fingerprint)
                    return
            try:
                result: dict[str, str] | BaseException = pending.get()
            except Exception as error:  # noqa: BLE001 - kept as the fingerprint's reason
                result = error
            finish(connection, fingerprint, result)
            self.computed += 1
            log.info("house math: computed", fingerprint=fingerprint[:12],
                     failed=isinstance(result, BaseException))


class _LazyPool:
    """One worker process, started at the first computation (a floor with nothing to compute
    starts none); ended, whatever it is doing, when the service stops."""

    def __init__(self) -> None:
        self.pool: Any = None

    def get(self) -> Any:
        if self.pool is None:
            self.pool = multiprocessing.get_context("spawn").Pool(1, maxtasksperchild=1)
        return self.pool

    def close(self) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()

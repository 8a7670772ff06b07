"""The floor schema, as ordered migrations: each applied once, in order, in one transaction.

``schema_migrations`` records each version applied. A migration is never edited once
released: a change is a new migration at the end. docs/floor.md documents the tables and views.
A migration whose rows need Python (a player's key) runs ``backfill`` after its SQL, in the
same transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import psycopg

from controller.floor import house_math, player_keys


class Migration(NamedTuple):
    version: int
    name: str
    sql: str
    backfill: Callable[[psycopg.Connection], object] | None = None


EVENTS = """
CREATE TABLE floor_events (
    table_id  text        NOT NULL,
    seq       bigint      NOT NULL CHECK (seq >= 1),
    type      text        NOT NULL,
    hand_id   text,
    ts        timestamptz NOT NULL,
    message   jsonb       NOT NULL,
    stored_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (table_id, seq)
);
CREATE INDEX floor_events_by_type ON floor_events (type, table_id, seq);
CREATE INDEX floor_events_by_hand ON floor_events (table_id, hand_id) WHERE hand_id IS NOT NULL;

CREATE FUNCTION floor_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'floor_events is append-only: % refused', TG_OP;
END $$;
CREATE TRIGGER floor_events_no_update_or_delete BEFORE UPDATE OR DELETE ON floor_events
    FOR EACH ROW EXECUTE FUNCTION floor_events_append_only();
CREATE TRIGGER floor_events_no_truncate BEFORE TRUNCATE ON floor_events
    FOR EACH STATEMENT EXECUTE FUNCTION floor_events_append_only();

CREATE TABLE floor_cursors (
    table_id     text        PRIMARY KEY,
    resume_after bigint      NOT NULL CHECK (resume_after >= 0),
    updated_at   timestamptz NOT NULL DEFAULT clock_timestamp()
);
"""

TYPED_VIEWS = """
CREATE VIEW floor_hands AS
SELECT s.table_id, s.hand_id,
       s.message->'data'->>'game' AS game,
       s.message->'data'->>'paytable' AS paytable,
       (s.message->'data'->>'number')::bigint AS number,
       s.seq AS started_seq, s.ts AS started_at, e.ts AS ended_at,
       CASE e.type WHEN 'hand_settled' THEN 'settled' WHEN 'hand_voided' THEN 'voided'
                   ELSE 'in play' END AS outcome,
       (e.message->'data'->>'players_net')::bigint AS players_net,
       (e.message->'data'->>'house_result')::bigint AS house_result
  FROM floor_events s
  LEFT JOIN floor_events e ON e.table_id = s.table_id AND e.hand_id = s.hand_id
                          AND e.type IN ('hand_settled', 'hand_voided')
 WHERE s.type = 'hand_started';

CREATE VIEW floor_wagers_placed AS
SELECT table_id, seq, ts,
       (message->'data'->>'spot')::int AS spot,
       message->'data'->>'wager' AS wager,
       (message->'data'->>'amount')::bigint AS amount,
       message->'data'->>'player' AS player,
       message->'data'->>'source' AS source
  FROM floor_events WHERE type = 'wager_placed';

CREATE VIEW floor_wagers AS
SELECT e.table_id, e.hand_id, e.seq, e.ts,
       e.message->'data'->>'game' AS game,
       e.message->'data'->>'paytable' AS paytable,
       (w->>'seat')::int AS seat, w->>'wager' AS wager, (w->>'amount')::bigint AS amount
  FROM floor_events e CROSS JOIN LATERAL jsonb_array_elements(e.message->'data'->'wagers') w
 WHERE e.type = 'wagers_locked';

CREATE VIEW floor_settlements AS
SELECT table_id, hand_id, seq, ts,
       (message->'data'->>'seat')::int AS seat,
       message->'data'->>'wager' AS wager,
       (message->'data'->>'amount')::bigint AS amount,
       message->'data'->>'result' AS result,
       (message->'data'->>'net')::bigint AS net
  FROM floor_events WHERE type = 'wager_settled';

CREATE VIEW floor_progressive_awards AS
SELECT table_id, hand_id, seq, ts,
       (message->'data'->>'seat')::int AS seat,
       message->'data'->>'award' AS award,
       (message->'data'->>'amount')::bigint AS amount
  FROM floor_events WHERE type = 'progressive_awarded';

CREATE VIEW floor_faults AS
SELECT table_id, hand_id, seq, ts,
       message->'data'->>'code' AS code,
       message->'data'->>'device' AS device,
       (message->'data'->>'recoverable')::boolean AS recoverable,
       message->'data'->>'detail' AS detail
  FROM floor_events WHERE type = 'fault';

CREATE VIEW floor_device_status AS
SELECT table_id, seq, ts,
       message->'data'->>'device' AS device,
       message->'data'->>'status' AS status,
       message->'data'->>'detail' AS detail
  FROM floor_events WHERE type = 'device_status';
"""

RATINGS = """
CREATE TABLE floor_house_edges (
    paytable text    NOT NULL,
    wager    text    NOT NULL,           -- '' : every wager of the paytable without its own
    edge     numeric NOT NULL CHECK (edge >= 0 AND edge < 1),
    PRIMARY KEY (paytable, wager)
);
CREATE TABLE floor_shifts (
    name   text PRIMARY KEY,
    starts time NOT NULL UNIQUE
);
CREATE TABLE floor_settings (
    key   text PRIMARY KEY CHECK (key IN ('timezone', 'idle_minutes')),
    value text NOT NULL
);

CREATE FUNCTION floor_shift_of(moment timestamptz, OUT shift_date date, OUT shift text)
STABLE LANGUAGE sql AS $$
    WITH local AS (
        SELECT moment AT TIME ZONE coalesce(
                   (SELECT value FROM floor_settings WHERE key = 'timezone'), 'UTC') AS t),
    started AS (
        SELECT f.name FROM floor_shifts f, local WHERE f.starts <= local.t::time
         ORDER BY f.starts DESC LIMIT 1)
    SELECT CASE WHEN EXISTS (SELECT 1 FROM started) THEN local.t::date
                ELSE local.t::date - 1 END,
           coalesce((SELECT name FROM started),
                    (SELECT name FROM floor_shifts ORDER BY starts DESC LIMIT 1), 'all day')
      FROM local
$$;

CREATE VIEW floor_seat_players AS
WITH starts AS (
    SELECT table_id, hand_id, seq,
           lag(seq, 1, 0::bigint) OVER (PARTITION BY table_id ORDER BY seq) AS previous_seq
      FROM floor_events WHERE type = 'hand_started')
SELECT DISTINCT ON (s.table_id, s.hand_id, p.spot)
       s.table_id, s.hand_id, p.spot AS seat, p.player
  FROM starts s
  JOIN floor_wagers_placed p ON p.table_id = s.table_id
                            AND p.seq > s.previous_seq AND p.seq < s.seq
 ORDER BY s.table_id, s.hand_id, p.spot, p.seq DESC;

CREATE VIEW floor_player_hands AS
WITH per_hand AS (
    SELECT h.table_id, h.hand_id, sp.player, h.paytable, h.started_at, h.ended_at AS settled_at,
           count(DISTINCT st.seat) AS seats,
           sum(st.amount) AS bet,
           -sum(st.net) AS actual_win,
           CASE WHEN bool_and(coalesce(w.edge, d.edge) IS NOT NULL)
                THEN sum(st.amount * coalesce(w.edge, d.edge)) END AS theoretical_win
      FROM floor_hands h
      JOIN floor_settlements st ON st.table_id = h.table_id AND st.hand_id = h.hand_id
      JOIN floor_seat_players sp ON sp.table_id = h.table_id AND sp.hand_id = h.hand_id
                                AND sp.seat = st.seat
      LEFT JOIN floor_house_edges w ON w.paytable = h.paytable AND w.wager = st.wager
      LEFT JOIN floor_house_edges d ON d.paytable = h.paytable AND d.wager = ''
     WHERE h.outcome = 'settled' AND sp.player <> ''
     GROUP BY h.table_id, h.hand_id, sp.player, h.paytable, h.started_at, h.ended_at),
ordered AS (
    SELECT p.*, lag(p.settled_at) OVER (PARTITION BY p.player, p.table_id
                                        ORDER BY p.started_at) AS previous_settled_at
      FROM per_hand p)
SELECT o.table_id, o.hand_id, o.player, o.paytable, o.started_at, o.settled_at, o.seats,
       o.bet, o.actual_win, o.theoretical_win,
       o.settled_at - CASE
           WHEN o.previous_settled_at IS NOT NULL AND o.started_at - o.previous_settled_at <=
                make_interval(mins => coalesce(
                    (SELECT value::int FROM floor_settings WHERE key = 'idle_minutes'), 10))
           THEN o.previous_settled_at ELSE o.started_at END AS time_played,
       sh.shift_date, sh.shift
  FROM ordered o CROSS JOIN LATERAL floor_shift_of(o.settled_at) sh;

CREATE VIEW floor_player_ratings AS
SELECT player, table_id, shift_date, shift,
       count(*) AS hands,
       sum(time_played) AS time_played,
       sum(bet) AS total_bet,
       sum(bet)::numeric / count(*) AS average_bet,
       sum(actual_win) AS actual_win,
       CASE WHEN bool_and(theoretical_win IS NOT NULL) THEN sum(theoretical_win) END
           AS theoretical_win,
       CASE WHEN extract(epoch FROM sum(time_played)) > 0
            THEN count(*) * 3600 / extract(epoch FROM sum(time_played)) END AS hands_per_hour
  FROM floor_player_hands
 GROUP BY player, table_id, shift_date, shift;

CREATE VIEW floor_device_downtime AS
SELECT table_id, device, status, ts AS down_at, up_at, coalesce(up_at, now()) - ts AS duration
  FROM (SELECT table_id, device, status, ts,
               lead(ts) OVER (PARTITION BY table_id, device ORDER BY seq) AS up_at
          FROM floor_device_status) s
 WHERE status = 'lost' OR status LIKE 'fault:%';

CREATE VIEW floor_table_ratings AS
WITH play AS (
    SELECT h.table_id, sh.shift_date, sh.shift, count(DISTINCT h.hand_id) AS hands,
           sum(st.amount) AS handle, -sum(st.net) AS win
      FROM floor_hands h
      JOIN floor_settlements st ON st.table_id = h.table_id AND st.hand_id = h.hand_id
      CROSS JOIN LATERAL floor_shift_of(h.ended_at) sh
     WHERE h.outcome = 'settled'
     GROUP BY h.table_id, sh.shift_date, sh.shift),
faults AS (
    SELECT f.table_id, sh.shift_date, sh.shift, count(*) AS faults
      FROM floor_faults f CROSS JOIN LATERAL floor_shift_of(f.ts) sh
     GROUP BY f.table_id, sh.shift_date, sh.shift),
down AS (
    SELECT d.table_id, sh.shift_date, sh.shift, sum(d.duration) AS downtime
      FROM floor_device_downtime d CROSS JOIN LATERAL floor_shift_of(d.down_at) sh
     GROUP BY d.table_id, sh.shift_date, sh.shift),
keys AS (
    SELECT table_id, shift_date, shift FROM play
    UNION SELECT table_id, shift_date, shift FROM faults
    UNION SELECT table_id, shift_date, shift FROM down)
SELECT k.table_id, k.shift_date, k.shift,
       coalesce(p.hands, 0) AS hands,
       coalesce(p.handle, 0) AS handle,
       coalesce(p.win, 0) AS win,
       CASE WHEN p.handle > 0 THEN p.win::numeric * 100 / p.handle END AS hold_percent,
       coalesce(f.faults, 0) AS faults,
       coalesce(d.downtime, interval '0') AS device_downtime
  FROM keys k
  LEFT JOIN play p USING (table_id, shift_date, shift)
  LEFT JOIN faults f USING (table_id, shift_date, shift)
  LEFT JOIN down d USING (table_id, shift_date, shift);
"""

POOLS = """
CREATE FUNCTION floor_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP;
END $$;

CREATE TABLE floor_pools (
    pool_id          text        PRIMARY KEY,
    seed             bigint      NOT NULL CHECK (seed >= 0),
    wager            bigint      NOT NULL CHECK (wager > 0),
    contribution     bigint      NOT NULL CHECK (contribution >= 0),
    contribution_rate text       NOT NULL,
    simultaneous_hit text        NOT NULL CHECK (simultaneous_hit IN ('seed', 'meter')),
    awards           jsonb       NOT NULL,
    meter            bigint      NOT NULL CHECK (meter >= 0),
    configured_at    timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE floor_pool_tables (
    table_id        text   PRIMARY KEY,
    pool_id         text   NOT NULL REFERENCES floor_pools,
    applied_through bigint NOT NULL CHECK (applied_through >= 0)
);

CREATE TABLE floor_pool_ledger (
    entry       bigserial   PRIMARY KEY,
    pool_id     text        NOT NULL REFERENCES floor_pools,
    kind        text        NOT NULL CHECK (kind IN ('reseed', 'contribution', 'void', 'jackpot',
                                                     'fixed_award', 'adjustment')),
    amount      bigint      NOT NULL,
    paid        bigint      CHECK (paid >= 0),
    table_id    text,
    seq         bigint,
    hand_id     text,
    ts          timestamptz,
    reference   text,
    detail      text        NOT NULL DEFAULT '',
    recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (table_id, seq, kind),
    UNIQUE (pool_id, reference),
    CHECK ((table_id IS NULL) = (seq IS NULL)),
    CHECK ((table_id IS NULL) <> (reference IS NULL)),
    CHECK (CASE kind WHEN 'contribution' THEN amount > 0
                     WHEN 'reseed' THEN amount >= 0
                     WHEN 'void' THEN amount < 0
                     WHEN 'jackpot' THEN amount <= 0 AND paid = -amount
                     WHEN 'fixed_award' THEN amount = 0 AND paid IS NOT NULL
                     ELSE amount <> 0 END)
);
CREATE INDEX floor_pool_ledger_by_hand ON floor_pool_ledger (table_id, hand_id)
    WHERE table_id IS NOT NULL;
CREATE TRIGGER floor_pool_ledger_no_update_or_delete
    BEFORE UPDATE OR DELETE ON floor_pool_ledger
    FOR EACH ROW EXECUTE FUNCTION floor_append_only();
CREATE TRIGGER floor_pool_ledger_no_truncate BEFORE TRUNCATE ON floor_pool_ledger
    FOR EACH STATEMENT EXECUTE FUNCTION floor_append_only();

CREATE TABLE floor_pool_hits (
    hit          bigserial   PRIMARY KEY,
    pool_id      text        NOT NULL REFERENCES floor_pools,
    table_id     text        NOT NULL,
    seq          bigint      NOT NULL,
    hand_id      text        NOT NULL,
    seats        integer[]   NOT NULL,
    ts           timestamptz NOT NULL,
    claimed_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    lock_order   integer     NOT NULL CHECK (lock_order >= 1),
    paid         bigint      NOT NULL CHECK (paid >= 0),
    share        bigint      NOT NULL CHECK (share >= 0),
    reseed_due   bigint      NOT NULL CHECK (reseed_due >= 0),
    table_amount bigint      NOT NULL,
    verified_seq bigint,
    verified_at  timestamptz,
    verified_by  text,
    UNIQUE (table_id, seq),
    UNIQUE (table_id, hand_id)
);
CREATE INDEX floor_pool_hits_unverified ON floor_pool_hits (pool_id) WHERE verified_seq IS NULL;

CREATE VIEW floor_pool_meters AS
SELECT p.pool_id, p.meter,
       coalesce(sum(l.amount), 0)::bigint AS ledger_sum,
       coalesce(sum(l.amount) FILTER (WHERE l.kind = 'contribution'), 0)::bigint AS contributions,
       coalesce(-sum(l.amount) FILTER (WHERE l.kind = 'void'), 0)::bigint AS voided,
       coalesce(-sum(l.amount) FILTER (WHERE l.kind = 'jackpot'), 0)::bigint AS jackpots,
       coalesce(sum(l.amount) FILTER (WHERE l.kind = 'reseed'), 0)::bigint AS reseeds,
       coalesce(sum(l.amount) FILTER (WHERE l.kind = 'adjustment'), 0)::bigint AS adjustments,
       coalesce(sum(l.paid) FILTER (WHERE l.kind = 'fixed_award'), 0)::bigint AS fixed_awards,
       (SELECT h.table_id FROM floor_pool_hits h
         WHERE h.pool_id = p.pool_id AND h.verified_seq IS NULL
         ORDER BY h.hit LIMIT 1) AS locked_by_table,
       (SELECT h.hand_id FROM floor_pool_hits h
         WHERE h.pool_id = p.pool_id AND h.verified_seq IS NULL
         ORDER BY h.hit LIMIT 1) AS locked_by_hand
  FROM floor_pools p LEFT JOIN floor_pool_ledger l ON l.pool_id = p.pool_id
 GROUP BY p.pool_id, p.meter;
"""

#: Since schema version 2 a device's fault is a ``device_fault`` event; the view still lists it
#: as the status ``fault:<code>``, as version 1's ``device_status`` records had it.
DEVICE_FAULTS = """
CREATE OR REPLACE VIEW floor_device_status AS
SELECT table_id, seq, ts,
       message->'data'->>'device' AS device,
       message->'data'->>'status' AS status,
       message->'data'->>'detail' AS detail
  FROM floor_events WHERE type = 'device_status'
UNION ALL
SELECT table_id, seq, ts,
       message->'data'->>'device' AS device,
       'fault:' || (message->'data'->>'code') AS status,
       message->'data'->>'detail' AS detail
  FROM floor_events WHERE type = 'device_fault';
"""

#: Since schema version 3 the locked, settled, awarded and returned wagers name their seat's
#: player. The views show it ("" for a record of version 1 or 2, which names none), and the
#: seat-to-player map takes a hand's own records over the wagers placed before it. Columns are
#: only added at the end: a CMS's queries by position keep working.
PLAYERS_ON_RECORDS = """
CREATE OR REPLACE VIEW floor_wagers AS
SELECT e.table_id, e.hand_id, e.seq, e.ts,
       e.message->'data'->>'game' AS game,
       e.message->'data'->>'paytable' AS paytable,
       (w->>'seat')::int AS seat, w->>'wager' AS wager, (w->>'amount')::bigint AS amount,
       coalesce(w->>'player', '') AS player
  FROM floor_events e CROSS JOIN LATERAL jsonb_array_elements(e.message->'data'->'wagers') w
 WHERE e.type = 'wagers_locked';

CREATE OR REPLACE VIEW floor_settlements AS
SELECT table_id, hand_id, seq, ts,
       (message->'data'->>'seat')::int AS seat,
       message->'data'->>'wager' AS wager,
       (message->'data'->>'amount')::bigint AS amount,
       message->'data'->>'result' AS result,
       (message->'data'->>'net')::bigint AS net,
       coalesce(message->'data'->>'player', '') AS player
  FROM floor_events WHERE type = 'wager_settled';

CREATE OR REPLACE VIEW floor_progressive_awards AS
SELECT table_id, hand_id, seq, ts,
       (message->'data'->>'seat')::int AS seat,
       message->'data'->>'award' AS award,
       (message->'data'->>'amount')::bigint AS amount,
       coalesce(message->'data'->>'player', '') AS player
  FROM floor_events WHERE type = 'progressive_awarded';

CREATE VIEW floor_returned_wagers AS
SELECT e.table_id, e.hand_id, e.seq, e.ts,
       (w->>'seat')::int AS seat, w->>'wager' AS wager, (w->>'amount')::bigint AS amount,
       coalesce(w->>'player', '') AS player
  FROM floor_events e CROSS JOIN LATERAL jsonb_array_elements(e.message->'data'->'returned') w
 WHERE e.type = 'hand_voided';

-- A version 3 hand names each seat's player on its locked and settled wagers (the settled
-- record last, so it prevails); an older hand's seat falls back to the last wager_placed.
CREATE OR REPLACE VIEW floor_seat_players AS
WITH recorded AS (
    SELECT DISTINCT ON (table_id, hand_id, seat) table_id, hand_id, seat, player
      FROM (SELECT table_id, hand_id, seq, (message->'data'->>'seat')::int AS seat,
                   coalesce(message->'data'->>'player', '') AS player
              FROM floor_events
             WHERE type = 'wager_settled' AND (message->>'schema_version')::int >= 3
            UNION ALL
            SELECT e.table_id, e.hand_id, e.seq, (w->>'seat')::int,
                   coalesce(w->>'player', '')
              FROM floor_events e
             CROSS JOIN LATERAL jsonb_array_elements(e.message->'data'->'wagers') w
             WHERE e.type = 'wagers_locked' AND (e.message->>'schema_version')::int >= 3) r
     ORDER BY table_id, hand_id, seat, seq DESC),
starts AS (
    SELECT table_id, hand_id, seq,
           lag(seq, 1, 0::bigint) OVER (PARTITION BY table_id ORDER BY seq) AS previous_seq
      FROM floor_events WHERE type = 'hand_started'),
placed AS (
    SELECT DISTINCT ON (s.table_id, s.hand_id, p.spot)
           s.table_id, s.hand_id, p.spot AS seat, p.player
      FROM starts s
      JOIN floor_wagers_placed p ON p.table_id = s.table_id
                                AND p.seq > s.previous_seq AND p.seq < s.seq
     ORDER BY s.table_id, s.hand_id, p.spot, p.seq DESC)
SELECT table_id, hand_id, seat, player FROM recorded
UNION ALL
SELECT p.table_id, p.hand_id, p.seat, p.player FROM placed p
 WHERE NOT EXISTS (SELECT 1 FROM recorded r WHERE r.table_id = p.table_id
                      AND r.hand_id = p.hand_id AND r.seat = p.seat);
"""

#: A member table's jackpot claim the pool does not pay (its hand not started, no progressive
#: wager locked on a seat named, cards that make no jackpot, a hand id not its record's...):
#: held here for a supervisor, with the problem, never paid. One row an event.
POOL_DISPUTES = """
CREATE TABLE floor_pool_disputes (
    dispute     bigserial   PRIMARY KEY,
    pool_id     text        NOT NULL REFERENCES floor_pools,
    table_id    text        NOT NULL,
    seq         bigint      NOT NULL,
    hand_id     text,
    ts          timestamptz NOT NULL,
    problem     text        NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (table_id, seq)
);
CREATE TRIGGER floor_pool_disputes_no_update_or_delete
    BEFORE UPDATE OR DELETE ON floor_pool_disputes
    FOR EACH ROW EXECUTE FUNCTION floor_append_only();
CREATE TRIGGER floor_pool_disputes_no_truncate BEFORE TRUNCATE ON floor_pool_disputes
    FOR EACH STATEMENT EXECUTE FUNCTION floor_append_only();
"""

#: One player however the table wrote the id (case, another script's lookalike letters, Unicode
#: TR39): the floor keeps each id's key (controller.core.player_key, computed in Python as it
#: stores the id) and the ratings group by it, showing the id as the table wrote it (the first
#: written, in ratings that join several). ``player_key`` is added at the end of each view.
PLAYER_KEYS = """
CREATE TABLE floor_player_keys (
    player     text PRIMARY KEY,
    player_key text NOT NULL
);
CREATE INDEX floor_player_keys_by_key ON floor_player_keys (player_key);

-- Every player id the stored records name (the ids to key at ingest are found the same way).
CREATE VIEW floor_players_named AS
SELECT DISTINCT player FROM (
    SELECT player FROM floor_wagers_placed
    UNION ALL SELECT player FROM floor_wagers
    UNION ALL SELECT player FROM floor_settlements
    UNION ALL SELECT player FROM floor_progressive_awards
    UNION ALL SELECT player FROM floor_returned_wagers) named
 WHERE player IS NOT NULL AND player <> '';

CREATE OR REPLACE VIEW floor_player_hands AS
WITH per_hand AS (
    SELECT h.table_id, h.hand_id, coalesce(k.player_key, sp.player) AS player_key,
           (array_agg(sp.player ORDER BY sp.seat))[1] AS player, h.paytable, h.started_at,
           h.ended_at AS settled_at,
           count(DISTINCT st.seat) AS seats,
           sum(st.amount) AS bet,
           -sum(st.net) AS actual_win,
           CASE WHEN bool_and(coalesce(w.edge, d.edge) IS NOT NULL)
                THEN sum(st.amount * coalesce(w.edge, d.edge)) END AS theoretical_win
      FROM floor_hands h
      JOIN floor_settlements st ON st.table_id = h.table_id AND st.hand_id = h.hand_id
      JOIN floor_seat_players sp ON sp.table_id = h.table_id AND sp.hand_id = h.hand_id
                                AND sp.seat = st.seat
      LEFT JOIN floor_player_keys k ON k.player = sp.player
      LEFT JOIN floor_house_edges w ON w.paytable = h.paytable AND w.wager = st.wager
      LEFT JOIN floor_house_edges d ON d.paytable = h.paytable AND d.wager = ''
     WHERE h.outcome = 'settled' AND sp.player <> ''
     GROUP BY h.table_id, h.hand_id, coalesce(k.player_key, sp.player), h.paytable,
              h.started_at, h.ended_at),
ordered AS (
    SELECT p.*, lag(p.settled_at) OVER (PARTITION BY p.player_key, p.table_id
                                        ORDER BY p.started_at) AS previous_settled_at
      FROM per_hand p)
SELECT o.table_id, o.hand_id, o.player, o.paytable, o.started_at, o.settled_at, o.seats,
       o.bet, o.actual_win, o.theoretical_win,
       o.settled_at - CASE
           WHEN o.previous_settled_at IS NOT NULL AND o.started_at - o.previous_settled_at <=
                make_interval(mins => coalesce(
                    (SELECT value::int FROM floor_settings WHERE key = 'idle_minutes'), 10))
           THEN o.previous_settled_at ELSE o.started_at END AS time_played,
       sh.shift_date, sh.shift, o.player_key
  FROM ordered o CROSS JOIN LATERAL floor_shift_of(o.settled_at) sh;

CREATE OR REPLACE VIEW floor_player_ratings AS
SELECT (array_agg(player ORDER BY started_at, hand_id))[1] AS player,
       table_id, shift_date, shift,
       count(*) AS hands,
       sum(time_played) AS time_played,
       sum(bet) AS total_bet,
       sum(bet)::numeric / count(*) AS average_bet,
       sum(actual_win) AS actual_win,
       CASE WHEN bool_and(theoretical_win IS NOT NULL) THEN sum(theoretical_win) END
           AS theoretical_win,
       CASE WHEN extract(epoch FROM sum(time_played)) > 0
            THEN count(*) * 3600 / extract(epoch FROM sum(time_played)) END AS hands_per_hour,
       player_key
  FROM floor_player_hands
 GROUP BY player_key, table_id, shift_date, shift;
"""

#: Theoretical win from the game math (controller.floor.house_math): each table's journaled
#: settings get their math fingerprint as they are stored, each fingerprint its edges per
#: unit wagered once, and every settled wager the edge of its hand's settings in force (the
#: table's last ``config_applied`` before the hand started). floor.toml's edge for the
#: paytable (and wager), where configured, wins over the math's. ``theo_missing`` says why a
#: theo is null: ``computing``, or the reason no figure can be given. Columns are added at
#: the end only.
HOUSE_MATH = """
CREATE TABLE floor_house_math (
    fingerprint text        PRIMARY KEY,
    game        text,
    paytable    text,                    -- as first journaled with these inputs
    inputs      jsonb,                   -- game, paytable_lines, rules, progressive
    state       text        NOT NULL CHECK (state IN ('pending', 'computing', 'computed',
                                                      'refused')),
    detail      text        NOT NULL DEFAULT '',
    first_seen  timestamptz NOT NULL DEFAULT clock_timestamp(),
    started_at  timestamptz,
    computed_at timestamptz
);
CREATE TABLE floor_house_math_edges (
    fingerprint text    NOT NULL REFERENCES floor_house_math,
    wager       text    NOT NULL,
    edge        numeric NOT NULL,        -- per unit wagered, to 30 decimals
    fraction    text    NOT NULL,        -- the exact figure
    PRIMARY KEY (fingerprint, wager)
);
CREATE TABLE floor_table_settings (
    table_id    text   NOT NULL,
    seq         bigint NOT NULL,
    fingerprint text   NOT NULL REFERENCES floor_house_math,
    game        text,
    paytable    text,
    PRIMARY KEY (table_id, seq)
);

-- Each hand's settings in force: the table's last config_applied before its hand_started,
-- found once as the hand_started is stored (controller.floor.house_math), so the ratings join
-- a plain table.
CREATE TABLE floor_hand_settings (
    table_id     text   NOT NULL,
    started_seq  bigint NOT NULL,
    hand_id      text   NOT NULL,
    paytable     text,
    settings_seq bigint,
    fingerprint  text,
    PRIMARY KEY (table_id, started_seq)
);
CREATE INDEX floor_hand_settings_by_hand ON floor_hand_settings (table_id, hand_id);

-- Each settled wager with its edge (floor.toml's, else the math's for its hand's settings).
CREATE VIEW floor_wager_theo AS
SELECT st.table_id, st.hand_id, st.seq, st.ts, st.seat, st.wager, st.amount, st.net,
       coalesce(w.edge, d.edge, m.edge) AS edge,
       st.amount * coalesce(w.edge, d.edge, m.edge) AS theoretical_win,
       CASE WHEN coalesce(w.edge, d.edge, m.edge) IS NOT NULL THEN NULL
            WHEN hs.fingerprint IS NULL THEN 'no settings journaled before the hand'
            WHEN hm.state IN ('pending', 'computing') THEN 'computing'
            WHEN hm.state = 'refused' THEN hm.detail
            ELSE 'the math gives no edge for the wager ' || st.wager END AS theo_missing,
       CASE WHEN coalesce(w.edge, d.edge) IS NOT NULL THEN 'configured'
            WHEN m.edge IS NOT NULL THEN 'math' END AS edge_from,
       coalesce(w.edge, d.edge) AS configured_edge, m.edge AS math_edge,
       hs.paytable, hs.fingerprint
  FROM floor_settlements st
  JOIN floor_hand_settings hs ON hs.table_id = st.table_id AND hs.hand_id = st.hand_id
  LEFT JOIN floor_house_math hm ON hm.fingerprint = hs.fingerprint
  LEFT JOIN floor_house_math_edges m ON m.fingerprint = hs.fingerprint AND m.wager = st.wager
  LEFT JOIN floor_house_edges w ON w.paytable = hs.paytable AND w.wager = st.wager
  LEFT JOIN floor_house_edges d ON d.paytable = hs.paytable AND d.wager = '';

-- The wagers' theo and the seats' players are each read once and hash-joined (MATERIALIZED):
-- a nested loop over the seats for every wager would grow with the square of the hands.
CREATE OR REPLACE VIEW floor_player_hands AS
WITH theo AS MATERIALIZED (
    SELECT table_id, seq, edge, theoretical_win, theo_missing FROM floor_wager_theo),
seat_players AS MATERIALIZED (SELECT table_id, hand_id, seat, player FROM floor_seat_players),
per_hand AS (
    SELECT h.table_id, h.hand_id, coalesce(k.player_key, sp.player) AS player_key,
           (array_agg(sp.player ORDER BY sp.seat))[1] AS player, h.paytable, h.started_at,
           h.ended_at AS settled_at,
           count(DISTINCT st.seat) AS seats,
           sum(st.amount) AS bet,
           -sum(st.net) AS actual_win,
           CASE WHEN bool_and(t.edge IS NOT NULL) THEN sum(t.theoretical_win) END
               AS theoretical_win,
           min(t.theo_missing) AS theo_missing
      FROM floor_hands h
      JOIN floor_settlements st ON st.table_id = h.table_id AND st.hand_id = h.hand_id
      JOIN theo t ON t.table_id = st.table_id AND t.seq = st.seq
      JOIN seat_players sp ON sp.table_id = h.table_id AND sp.hand_id = h.hand_id
                                AND sp.seat = st.seat
      LEFT JOIN floor_player_keys k ON k.player = sp.player
     WHERE h.outcome = 'settled' AND sp.player <> ''
     GROUP BY h.table_id, h.hand_id, coalesce(k.player_key, sp.player), h.paytable,
              h.started_at, h.ended_at),
ordered AS (
    SELECT p.*, lag(p.settled_at) OVER (PARTITION BY p.player_key, p.table_id
                                        ORDER BY p.started_at) AS previous_settled_at
      FROM per_hand p)
SELECT o.table_id, o.hand_id, o.player, o.paytable, o.started_at, o.settled_at, o.seats,
       o.bet, o.actual_win, o.theoretical_win,
       o.settled_at - CASE
           WHEN o.previous_settled_at IS NOT NULL AND o.started_at - o.previous_settled_at <=
                make_interval(mins => coalesce(
                    (SELECT value::int FROM floor_settings WHERE key = 'idle_minutes'), 10))
           THEN o.previous_settled_at ELSE o.started_at END AS time_played,
       sh.shift_date, sh.shift, o.player_key, o.theo_missing
  FROM ordered o CROSS JOIN LATERAL floor_shift_of(o.settled_at) sh;

CREATE OR REPLACE VIEW floor_player_ratings AS
SELECT (array_agg(player ORDER BY started_at, hand_id))[1] AS player,
       table_id, shift_date, shift,
       count(*) AS hands,
       sum(time_played) AS time_played,
       sum(bet) AS total_bet,
       sum(bet)::numeric / count(*) AS average_bet,
       sum(actual_win) AS actual_win,
       CASE WHEN bool_and(theoretical_win IS NOT NULL) THEN sum(theoretical_win) END
           AS theoretical_win,
       CASE WHEN extract(epoch FROM sum(time_played)) > 0
            THEN count(*) * 3600 / extract(epoch FROM sum(time_played)) END AS hands_per_hour,
       player_key,
       min(theo_missing) AS theo_missing
  FROM floor_player_hands
 GROUP BY player_key, table_id, shift_date, shift;

CREATE OR REPLACE VIEW floor_table_ratings AS
WITH play AS (
    SELECT h.table_id, sh.shift_date, sh.shift, count(DISTINCT h.hand_id) AS hands,
           sum(st.amount) AS handle, -sum(st.net) AS win,
           CASE WHEN bool_and(st.edge IS NOT NULL) THEN sum(st.theoretical_win) END
               AS theoretical_win,
           min(st.theo_missing) AS theo_missing
      FROM floor_hands h
      JOIN floor_wager_theo st ON st.table_id = h.table_id AND st.hand_id = h.hand_id
      CROSS JOIN LATERAL floor_shift_of(h.ended_at) sh
     WHERE h.outcome = 'settled'
     GROUP BY h.table_id, sh.shift_date, sh.shift),
faults AS (
    SELECT f.table_id, sh.shift_date, sh.shift, count(*) AS faults
      FROM floor_faults f CROSS JOIN LATERAL floor_shift_of(f.ts) sh
     GROUP BY f.table_id, sh.shift_date, sh.shift),
down AS (
    SELECT d.table_id, sh.shift_date, sh.shift, sum(d.duration) AS downtime
      FROM floor_device_downtime d CROSS JOIN LATERAL floor_shift_of(d.down_at) sh
     GROUP BY d.table_id, sh.shift_date, sh.shift),
keys AS (
    SELECT table_id, shift_date, shift FROM play
    UNION SELECT table_id, shift_date, shift FROM faults
    UNION SELECT table_id, shift_date, shift FROM down)
SELECT k.table_id, k.shift_date, k.shift,
       coalesce(p.hands, 0) AS hands,
       coalesce(p.handle, 0) AS handle,
       coalesce(p.win, 0) AS win,
       CASE WHEN p.handle > 0 THEN p.win::numeric * 100 / p.handle END AS hold_percent,
       coalesce(f.faults, 0) AS faults,
       coalesce(d.downtime, interval '0') AS device_downtime,
       CASE WHEN p.table_id IS NULL THEN 0 ELSE p.theoretical_win END AS theoretical_win,
       p.theo_missing
  FROM keys k
  LEFT JOIN play p USING (table_id, shift_date, shift)
  LEFT JOIN faults f USING (table_id, shift_date, shift)
  LEFT JOIN down d USING (table_id, shift_date, shift);
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "events and resume points", EVENTS),
    Migration(2, "typed views: hands, wagers, settlements, awards, faults, device status",
              TYPED_VIEWS),
    Migration(3, "ratings and theoretical win", RATINGS),
    Migration(4, "linked pools: ledger, hits and meters", POOLS),
    Migration(5, "device faults as their own events", DEVICE_FAULTS),
    Migration(6, "the player on locked, settled, awarded and returned wagers",
              PLAYERS_ON_RECORDS),
    Migration(7, "linked pools: disputed jackpot claims", POOL_DISPUTES),
    Migration(8, "one player however the id is written: player keys", PLAYER_KEYS,
              player_keys.key_every_player),
    Migration(9, "theoretical win from the game math: settings fingerprints and edges",
              HOUSE_MATH, house_math.fingerprint_every_settings_and_hand),
)

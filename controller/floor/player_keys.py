"""Each player id the floor stores, with its key: one player however the table wrote the id.

The key is :func:`controller.core.player_key.player_key` (the table's own, Unicode TR39: case
and another script's lookalike letters make no other player), computed here in Python as the
floor stores the records that name the id, and kept in ``floor_player_keys``; the ratings
group by it (docs/floor.md). Migration 8 keys the ids stored before it.
"""

from __future__ import annotations

from collections.abc import Iterable

import psycopg

from controller.core.player_key import player_key

#: The longest id keyed, and the longest key kept (in UTF-8 bytes, within an index entry). A
#: table sends at most 64 characters; a longer id (a hostile table's) is stored with its
#: records but not keyed, and the ratings take the id itself as its key.
MAX_KEYED = 256
MAX_KEY_BYTES = 2000

#: The ids named by the batch being stored (``floor_incoming``) and not keyed yet: those of
#: the records that name a player (as the views read them), tolerant of any JSON shape.
_NEW_IN_BATCH = """
SELECT DISTINCT named.player FROM (
    SELECT message->'data'->>'player' AS player FROM floor_incoming
     WHERE type IN ('wager_placed', 'wager_settled', 'progressive_awarded')
    UNION ALL
    SELECT w->>'player' FROM floor_incoming i
     CROSS JOIN LATERAL jsonb_array_elements(
           CASE WHEN jsonb_typeof(i.message->'data'->'wagers') = 'array'
                 AND i.type = 'wagers_locked' THEN i.message->'data'->'wagers'
                WHEN jsonb_typeof(i.message->'data'->'returned') = 'array'
                 AND i.type = 'hand_voided' THEN i.message->'data'->'returned'
                ELSE '[]'::jsonb END) w) named
 WHERE named.player <> '' AND length(named.player) <= %(longest)s
   AND NOT EXISTS (SELECT 1 FROM floor_player_keys k WHERE k.player = named.player)
"""

_NOT_KEYED = """
SELECT player FROM floor_players_named p
 WHERE length(player) <= %(longest)s
   AND NOT EXISTS (SELECT 1 FROM floor_player_keys k WHERE k.player = p.player)
"""


def key_incoming(connection: psycopg.Connection) -> int:
    """Key the ids the batch in ``floor_incoming`` names for the first time; how many. Nothing
    on a schema older than migration 8 (which keys what was stored before it)."""
    if connection.execute("SELECT to_regclass('floor_player_keys')").fetchone() == (None,):
        return 0
    return _key(connection, _NEW_IN_BATCH)


def key_every_player(connection: psycopg.Connection) -> int:
    """Key every id the stored records name and ``floor_player_keys`` lacks; how many."""
    return _key(connection, _NOT_KEYED)


def _key(connection: psycopg.Connection, query: str) -> int:
    players: Iterable[tuple[str]] = connection.execute(
        query, {"longest": MAX_KEYED}).fetchall()
    rows = [(player, key) for (player,) in players
            if len((key := player_key(player)).encode()) <= MAX_KEY_BYTES]
    if rows:
        with connection.cursor() as cursor:
            cursor.executemany("INSERT INTO floor_player_keys (player, player_key) "
                               "VALUES (%s, %s) ON CONFLICT (player) DO NOTHING", rows)
    return len(rows)

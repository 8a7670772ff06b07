"""The floor's dashboard: a read-only page in a browser, served by the floor service
(``[dashboard]`` of floor.toml), on Starlette over uvicorn like the table's screens.

``/`` shows every table of floor.toml (its game and paytable in force, whether a hand is in
play, the hands of the last hour, today's hands, handle, win, hold and theo, the devices down
now, when the floor last heard from it) and every linked pool (its meter, whether a jackpot
locks it, its last hit); ``/tables/{id}`` one table's shifts of today; ``/api/floor`` the
same as JSON (money in cents). "Today" is the gaming day of the floor's shifts, in its time
zone. The page refreshes itself every ten seconds, reading PostgreSQL each time; it changes
nothing. Money in dollars, times in the floor's time zone.

It has no sign-in yet: it listens on loopback only (floor.toml refuses another address) and
answers only a request that names it by a loopback name (DNS rebinding).
"""

from __future__ import annotations

import asyncio
import html
import ipaddress
import socket
import threading
from collections.abc import Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import psycopg
import structlog
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from controller.floor.report import money

log = structlog.get_logger("floor.dashboard")

#: How often the page reloads itself, in seconds.
REFRESH_S = 10

TODAY = "SELECT (floor_shift_of(now())).shift_date"

TABLES = """
WITH t AS (SELECT table_id, ordinality AS place FROM unnest(%(tables)s::text[])
           WITH ORDINALITY AS u(table_id)),
today AS (
    SELECT table_id, sum(hands) AS hands, sum(handle) AS handle, sum(win) AS win,
           CASE WHEN bool_and(theoretical_win IS NOT NULL) THEN sum(theoretical_win) END
               AS theo,
           min(theo_missing) AS theo_missing
      FROM floor_table_ratings WHERE shift_date = %(today)s AND table_id = ANY(%(tables)s)
     GROUP BY table_id)
SELECT t.table_id, s.game, s.paytable, last.ts AS last_heard,
       (SELECT e.type FROM floor_events e
         WHERE e.table_id = t.table_id AND e.type IN ('hand_started', 'hand_settled',
                                                     'hand_voided')
         ORDER BY e.seq DESC LIMIT 1) = 'hand_started' AS in_play,
       (SELECT count(*) FROM floor_events e
         WHERE e.table_id = t.table_id AND e.type = 'hand_settled'
           AND e.ts > now() - interval '1 hour') AS hands_last_hour,
       coalesce(d.hands, 0), coalesce(d.handle, 0), coalesce(d.win, 0), d.theo, d.theo_missing,
       (SELECT string_agg(DISTINCT dd.device, ', ') FROM floor_device_downtime dd
         WHERE dd.table_id = t.table_id AND dd.up_at IS NULL) AS devices_down
  FROM t
  LEFT JOIN LATERAL (SELECT ts.game, ts.paytable FROM floor_table_settings ts
                      WHERE ts.table_id = t.table_id ORDER BY ts.seq DESC LIMIT 1) s ON true
  LEFT JOIN LATERAL (SELECT e.ts FROM floor_events e WHERE e.table_id = t.table_id
                      ORDER BY e.seq DESC LIMIT 1) last ON true
  LEFT JOIN today d ON d.table_id = t.table_id
 ORDER BY t.place"""

POOLS = """
SELECT m.pool_id, m.meter, m.locked_by_table, m.locked_by_hand,
       (SELECT max(h.ts) FROM floor_pool_hits h WHERE h.pool_id = m.pool_id) AS last_hit
  FROM floor_pool_meters m ORDER BY m.pool_id"""

SHIFTS = """
SELECT shift, hands, handle, win, hold_percent, theoretical_win, theo_missing, faults,
       device_downtime
  FROM floor_table_ratings WHERE table_id = %(table)s AND shift_date = %(today)s
 ORDER BY shift"""

GAMES = {"cali_lowball": "Cali LowBall", "three_card_lowball": "Three Card Lowball"}


class Floor:
    """What the dashboard reads: the database and the tables floor.toml names."""

    def __init__(self, dsn: str, tables: Sequence[str], timezone: str):
        self.dsn = dsn
        self.tables = list(tables)
        self.zone = ZoneInfo(timezone)

    def read(self) -> dict[str, Any]:
        """Every table and pool as the page shows them (money in cents)."""
        with psycopg.connect(self.dsn, connect_timeout=5) as connection:
            connection.execute("SET TRANSACTION READ ONLY")
            row = connection.execute(TODAY).fetchone()
            today: date = row[0] if row else date.today()
            tables = [dict(zip(("table", "game", "paytable", "last_heard", "in_play",
                                "hands_last_hour", "hands", "handle", "win", "theo",
                                "theo_missing", "devices_down"), values))
                      for values in connection.execute(
                          TABLES, {"tables": self.tables, "today": today}).fetchall()]
            pools = [dict(zip(("pool", "meter", "locked_by_table", "locked_by_hand",
                               "last_hit"), values))
                     for values in connection.execute(POOLS).fetchall()]
        return {"today": today, "tables": tables, "pools": pools}

    def shifts(self, table: str) -> tuple[date, list[tuple[Any, ...]]]:
        with psycopg.connect(self.dsn, connect_timeout=5) as connection:
            connection.execute("SET TRANSACTION READ ONLY")
            row = connection.execute(TODAY).fetchone()
            today: date = row[0] if row else date.today()
            return today, connection.execute(
                SHIFTS, {"table": table, "today": today}).fetchall()

    def local(self, moment: datetime | None) -> str:
        """A moment in the floor's time zone: its time alone when it is today."""
        if moment is None:
            return "-"
        local = moment.astimezone(self.zone)
        if local.date() == datetime.now(self.zone).date():
            return f"{local:%H:%M:%S}"
        return f"{local:%Y-%m-%d %H:%M}"


# --- the pages --------------------------------------------------------------------------------

STYLE = """
body { font: 18px/1.4 system-ui, sans-serif; margin: 16px 24px; color: #111; background: #fafafa; }
h1 { font-size: 26px; margin: 0 0 4px; } h2 { font-size: 22px; margin: 24px 0 8px; }
p.when { margin: 0 0 12px; color: #333; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { padding: 6px 10px; border-bottom: 1px solid #ccc; text-align: left; }
th { vertical-align: bottom; } td.n, td:first-child, td:nth-child(3) { white-space: nowrap; }
@media (max-width: 1300px) { body { font-size: 15px; margin: 8px 10px; } th, td { padding: 4px 5px; } }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.trouble td { background: #fde8e8; } .locked { color: #a00000; font-weight: 700; }
a { color: #0645ad; } .note { color: #444; font-size: 16px; white-space: normal; }
"""


def _page(title: str, body: str, refresh: bool = True) -> HTMLResponse:
    meta = f'<meta http-equiv="refresh" content="{REFRESH_S}">' if refresh else ""
    return HTMLResponse(
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">{meta}'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>"
        f"<body>{body}</body></html>")


def _cells(values: Sequence[str], numbers: Sequence[int] = ()) -> str:
    return "".join(f'<td class="n">{html.escape(value)}</td>' if index in numbers
                   else f"<td>{html.escape(value)}</td>"
                   for index, value in enumerate(values))


def _theo(theo: Decimal | None, missing: str | None) -> str:
    if theo is not None:
        return money(theo)
    return "computing" if missing == "computing" else "-"


def _hold(win: int, handle: int) -> str:
    return "-" if not handle else f"{Decimal(win * 100) / Decimal(handle):.2f} %"


def floor_body(floor: Floor, view: dict[str, Any]) -> str:
    rows = []
    for table in view["tables"]:
        trouble = bool(table["devices_down"])
        values = [table["table"], GAMES.get(table["game"] or "", table["game"] or "-"),
                  table["paytable"] or "-",
                  "hand in play" if table["in_play"] else "between hands",
                  str(table["hands_last_hour"]), str(table["hands"]), money(table["handle"]),
                  money(table["win"]), _hold(table["win"], table["handle"]),
                  _theo(table["theo"], table["theo_missing"]),
                  table["devices_down"] or "all up", floor.local(table["last_heard"])]
        link = html.escape(table["table"])
        cells = _cells(values, (4, 5, 6, 7, 8, 9)).replace(
            f"<td>{link}</td>", f'<td><a href="/tables/{link}">{link}</a></td>', 1)
        rows.append(f'<tr class="{"trouble" if trouble else ""}">{cells}</tr>')
    header = "".join(f'<th class="n">{name}</th>' if index in (4, 5, 6, 7, 8, 9)
                     else f"<th>{name}</th>"
                     for index, name in enumerate(
                         ("Table", "Game", "Paytable", "Now", "Hands last hour", "Hands today",
                          "Handle today", "Win today", "Hold today", "Theo today",
                          "Devices down", "Last heard")))
    pools = []
    for pool in view["pools"]:
        locked = (f'<span class="locked">locked: jackpot at {html.escape(pool["locked_by_table"])}'
                  f' ({html.escape(pool["locked_by_hand"] or "")}) awaits verification</span>'
                  if pool["locked_by_table"] else "open")
        pools.append(f"<tr><td>{html.escape(pool['pool'])}</td>"
                     f'<td class="n">{money(pool["meter"])}</td><td>{locked}</td>'
                     f"<td>{html.escape(floor.local(pool['last_hit']) if pool['last_hit'] else 'none yet')}"
                     "</td></tr>")
    pool_part = ("<h2>Pools</h2><table><tr><th>Pool</th><th class=\"n\">Meter</th><th>Status"
                 "</th><th>Last jackpot</th></tr>" + "".join(pools) + "</table>"
                 if pools else "")
    now = datetime.now(floor.zone)
    return (f"<h1>Floor</h1><p class=\"when\">Gaming day {view['today']} · {floor.zone.key} · "
            f"updated {now:%H:%M:%S} (every {REFRESH_S} seconds)</p>"
            f"<h2>Tables</h2><table><tr>{header}</tr>{''.join(rows)}</table>"
            f"<p class=\"note\">Theo = amount wagered × house edge (docs/floor.md, "
            f"“Theoretical win”); “computing”: the edge of the paytable in force is being "
            f"computed from the game math.</p>{pool_part}")


async def floor_page(request: Request) -> Response:
    floor: Floor = request.app.state.floor
    try:
        view = await asyncio.to_thread(floor.read)
    except psycopg.Error as error:
        log.warning("the dashboard cannot read the database", error=str(error).strip())
        return _page("Floor", "<h1>Floor</h1><p>The floor database does not answer: the page "
                     "tries again in a few seconds.</p>", refresh=True)
    return _page("Floor", floor_body(floor, view))


async def table_page(request: Request) -> Response:
    floor: Floor = request.app.state.floor
    table = request.path_params["table"]
    if table not in floor.tables:
        shown = html.escape(table[:64])
        return _page("Unknown table", f"<h1>No table {shown}</h1><p>The floor follows no "
                     f"table named “{shown}” (floor.toml's tables: "
                     f"{html.escape(', '.join(floor.tables))}).</p>"
                     '<p><a href="/">Back to the floor</a></p>', refresh=False)
    try:
        today, shifts = await asyncio.to_thread(floor.shifts, table)
    except psycopg.Error:
        return _page(table, "<p>The floor database does not answer.</p>")
    rows = "".join(
        "<tr>" + _cells([shift, str(hands), money(handle), money(win),
                         "-" if hold is None else f"{hold:.2f} %", _theo(theo, missing),
                         str(faults), str(down).split(".")[0]], (1, 2, 3, 4, 5, 6, 7)) + "</tr>"
        for shift, hands, handle, win, hold, theo, missing, faults, down in shifts)
    body = (f"<h1>Table {html.escape(table)}</h1><p class=\"when\">Gaming day {today} · "
            f'<a href="/">the floor</a></p>' +
            ("<table><tr><th>Shift</th><th class=\"n\">Hands</th><th class=\"n\">Handle</th>"
             "<th class=\"n\">Win</th><th class=\"n\">Hold</th><th class=\"n\">Theo</th>"
             "<th class=\"n\">Faults</th><th class=\"n\">Device downtime</th></tr>"
             f"{rows}</table>" if rows else "<p>No hand, fault or device down today.</p>"))
    return _page(f"Table {table}", body)


async def floor_json(request: Request) -> Response:
    floor: Floor = request.app.state.floor
    view = await asyncio.to_thread(floor.read)
    return JSONResponse(_plain(view))


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, Decimal):     # cents: whole as a number, theo's fraction as text
        return int(value) if value == value.to_integral_value() else str(value)
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    return value


class LoopbackOnly:
    """Answers only a request that names the dashboard by a loopback name (a page of another
    site whose name resolves to 127.0.0.1 still sends its own name)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _loopback_name(scope):
            await self.app(scope, receive, send)
            return
        await PlainTextResponse("the floor's dashboard answers to a loopback name only "
                                "(127.0.0.1, localhost)", status_code=400)(scope, receive, send)


def _loopback_name(scope: Scope) -> bool:
    host = next((value.decode("latin-1") for key, value in scope.get("headers", ())
                 if key == b"host"), None)
    if host is None:
        return True
    name = urlsplit(f"//{host}").hostname or ""
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def create_app(floor: Floor) -> ASGIApp:
    app = Starlette(routes=[Route("/", floor_page), Route("/tables/{table}", table_page),
                            Route("/api/floor", floor_json)])
    app.state.floor = floor
    return LoopbackOnly(app)


class Dashboard:
    """The dashboard served from a thread of the floor service."""

    def __init__(self, floor: Floor, host: str, port: int):
        self.listener = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((host, port))
        self.listener.listen(128)     # a request before uvicorn runs waits, is not refused
        self.server = uvicorn.Server(uvicorn.Config(create_app(floor), log_level="warning",
                                                    access_log=False, lifespan="off"))
        self.thread = threading.Thread(target=self.server.run,
                                       kwargs={"sockets": [self.listener]}, daemon=True,
                                       name="floor-dashboard")
        bound_host, bound_port = self.listener.getsockname()[:2]
        self.url = f"http://{'[' + bound_host + ']' if ':' in bound_host else bound_host}:" \
                   f"{bound_port}/"

    def start(self) -> None:
        self.thread.start()
        log.info("the floor's dashboard", url=self.url)

    def stop(self) -> None:
        self.server.should_exit = True
        if self.thread.is_alive():
            self.thread.join(10)
        self.listener.close()

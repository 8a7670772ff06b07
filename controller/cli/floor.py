"""``lowball-table floor [run|report|adjust] --config floor.toml``: the floor store in
PostgreSQL.

``run`` (the default) follows every table of the config on its CMS stream and stores each
event once in PostgreSQL (migrating the schema first); ``report`` prints the ratings per
player, table and shift, each table's handle, hold, faults and device downtime, and each
linked pool's meter; ``adjust`` is a supervisor's adjustment of a pool's meter, with its
reason. docs/floor.md documents the schema and the views.
"""

from __future__ import annotations

import argparse
import sys
from datetime import date

from typing import TYPE_CHECKING

from controller.cli import Subcommands

if TYPE_CHECKING:
    from controller.floor.config import LoadedFloorConfig


def register(subparsers: Subcommands, name: str, help_text: str) -> None:
    parser = subparsers.add_parser(name, help=help_text, description=__doc__.splitlines()[0])
    parser.add_argument("action", nargs="?", choices=("run", "report", "adjust"),
                        default="run", help="run the floor service (default), print the "
                                            "ratings and pools, or adjust a pool's meter")
    parser.add_argument("--config", required=True, metavar="FLOOR_TOML",
                        help="the floor config (tables, database, shifts, house edges)")
    parser.add_argument("--date", type=date.fromisoformat, metavar="YYYY-MM-DD",
                        help="report: only the shifts of this day")
    parser.add_argument("--pool", help="adjust: the pool's id")
    parser.add_argument("--amount", metavar="DOLLARS",
                        help="adjust: dollars added to the meter, such as 25.50 (negative: "
                             "taken off)")
    parser.add_argument("--reason", help="adjust: why (it goes in the ledger)")
    parser.add_argument("--by", help="adjust: the supervisor who makes it")
    parser.add_argument("--log-format", choices=("json", "console"),
                        help="run: log lines as JSON (default when not on a terminal)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from controller.floor.config import load_floor_config
    from controller.settings.validation import InputError

    try:
        loaded = load_floor_config(args.config)
    except (InputError, ValueError) as error:
        print(f"lowball-table floor: {error}", file=sys.stderr)
        return 2
    if args.action == "report":
        return _report(loaded, args.date)
    if args.action == "adjust":
        return _adjust(loaded, args)
    from controller.cli import logs
    from controller.floor.service import serve

    logs.configure(json_lines=None if args.log_format is None else args.log_format == "json")
    return serve(loaded)


def _report(loaded: LoadedFloorConfig, day: date | None) -> int:
    import psycopg

    from controller.floor import pool, store
    from controller.floor.report import print_report

    try:
        with store.connect(loaded.config.database.dsn) as connection:
            store.migrate(connection)
            store.configure(connection, loaded.config)
            pool.configure(connection, loaded.config.pools)
            print_report(connection, sys.stdout, day)
            connection.commit()
    except (psycopg.Error, store.SchemaError) as error:
        print(f"lowball-table floor report: {error}".strip(), file=sys.stderr)
        return 2
    return 0


def _adjust(loaded: LoadedFloorConfig, args: argparse.Namespace) -> int:
    import psycopg

    from controller.floor import pool, store
    from controller.floor.report import money

    missing = [f"--{name}" for name in ("pool", "amount", "reason", "by")
               if getattr(args, name) is None]
    if missing:
        print(f"lowball-table floor adjust: needs {', '.join(missing)}", file=sys.stderr)
        return 2
    if args.pool not in {linked.id for linked in loaded.config.pools}:
        print(f"lowball-table floor adjust: --pool {args.pool!r} is not a pool of "
              f"{loaded.path}", file=sys.stderr)
        return 2
    from controller.core.money import MoneyError, parse_dollars
    from controller.settings.validation import MAX_CENTS
    try:
        amount = parse_dollars(args.amount, name="--amount", negative=True, limit=MAX_CENTS)
    except MoneyError as error:
        print(f"lowball-table floor adjust: {error}", file=sys.stderr)
        return 2
    try:
        with store.connect(loaded.config.database.dsn) as connection:
            store.migrate(connection)
            pool.configure(connection, loaded.config.pools)
            meter = pool.adjust(connection, args.pool, amount, args.reason, args.by)
    except pool.PoolError as error:
        print(f"lowball-table floor adjust: {error}", file=sys.stderr)
        return 1
    except (psycopg.Error, store.SchemaError) as error:
        print(f"lowball-table floor adjust: {error}".strip(), file=sys.stderr)
        return 2
    print(f"pool {args.pool}: meter {money(meter)}")
    return 0

"""``lowball-table floor [run|report|adjust|math] --config floor.toml``: the floor store in
PostgreSQL.

``run`` (the default) follows every table of the config on its CMS stream and stores each
event once in PostgreSQL (migrating the schema first); ``report`` prints the ratings per
player, table and shift, each table's handle, hold, faults and device downtime, the house
edges theo is computed with, and each linked pool's ledger; ``adjust`` is a supervisor's
adjustment of a pool's meter, with its reason; ``math`` computes the house edges the floor
service has not computed yet. docs/floor.md documents the schema and the views.
"""

from __future__ import annotations

import argparse
import re
import sys
from datetime import date

from typing import TYPE_CHECKING

from controller.cli import Subcommands

if TYPE_CHECKING:
    from controller.floor.config import LoadedFloorConfig

PROGRAM = "lowball-table floor"
#: The largest adjustment typed, in dollars (the meter's own bound is checked by the pool).
MAX_DOLLARS = 10_000_000_000
_DOLLARS = re.compile(r"^([+-]?)\$?((?:\d{1,3}(?:,\d{3})+)|\d+)(?:\.(\d{1,2}))?$")


def iso_date(text: str) -> date:
    """``--date``: a day as YYYY-MM-DD; the error shows the format and an example."""
    try:
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text.strip()):
            raise ValueError
        return date.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a date: write it YYYY-MM-DD, e.g. 2026-12-02") from None


def dollars(text: str) -> int:
    """``--amount``: dollars as a person types them (``25``, ``-25.50``, ``+$1,234.05``) ->
    whole cents."""
    match = _DOLLARS.match(text.strip())
    if match is None:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an amount in dollars: write e.g. 25.00 to add $25.00 to the "
            f"meter, -25.00 to take it off")
    sign, whole, cents = match.groups()
    amount = int(whole.replace(",", "")) * 100 + int((cents or "0").ljust(2, "0"))
    if amount > MAX_DOLLARS * 100:
        raise argparse.ArgumentTypeError(f"{text!r}: more than ${MAX_DOLLARS:,}")
    return -amount if sign == "-" else amount


def register(subparsers: Subcommands, name: str, help_text: str) -> None:
    parser = subparsers.add_parser(
        name, help=help_text, description=__doc__.split("\n\n", 1)[1].replace("``", "").strip(),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    _config(parser, required=False)
    parser.add_argument("--log-format", choices=("json", "console"),
                        help="run: log lines as JSON (default when not on a terminal)")
    parser.set_defaults(func=run, action="run")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    serve = actions.add_parser(
        "run", help="run the floor service (the default)",
        description="Follow every table of floor.toml on its CMS stream and store each event "
                    "once in PostgreSQL (migrating the schema first); compute the house edge "
                    "of each table's settings in the background.")
    _config(serve)
    serve.add_argument("--log-format", choices=("json", "console"), default=argparse.SUPPRESS,
                       help="log lines as JSON (default when not on a terminal)")
    report = actions.add_parser(
        "report", help="print the ratings, theo, the house edges and the pools",
        description="Print the ratings per player, table and shift (time, bets, actual and "
                    "theoretical win), each table's handle, win, hold, theo, faults and device "
                    "downtime, the house edges theo is computed with (the game math's and "
                    "floor.toml's, differences flagged), and each linked pool's ledger. Money "
                    "in dollars.")
    _config(report)
    report.add_argument("--date", type=iso_date, metavar="YYYY-MM-DD",
                        help="only this day: its shifts (by the shifts' local times) and the "
                             "pools' ledger of that day, from the meter at its start to the "
                             "meter at its end")
    adjust = actions.add_parser(
        "adjust", help="a supervisor's adjustment of a pool's meter",
        description="Add to or take off a linked pool's meter, with the reason and who makes "
                    "it (one ledger row); prints the meter after. Refused while the pool is "
                    "locked by a jackpot awaiting verification, or below $0.00.")
    _config(adjust)
    adjust.add_argument("--pool", required=True, help="the pool's id, as in floor.toml")
    adjust.add_argument("--amount", required=True, type=dollars, metavar="DOLLARS",
                        help="dollars added to the meter, e.g. 25.00; negative to take off, "
                             "e.g. -25.00")
    adjust.add_argument("--reason", required=True, help="why (it goes in the ledger)")
    adjust.add_argument("--by", required=True, help="the supervisor who makes it")
    math = actions.add_parser(
        "math", help="compute the house edges not computed yet",
        description="Compute, here and now, the house edge of every table settings the floor "
                    "has stored and not computed yet (the floor service does it in the "
                    "background; a Three Card Lowball paytable the par sheets do not record "
                    "takes 2 to 3 minutes of CPU), and print each edge in force.")
    _config(math)


def _config(parser: argparse.ArgumentParser, required: bool = True) -> None:
    parser.add_argument("--config", required=required,
                        default=None if not required else argparse.SUPPRESS,
                        metavar="FLOOR_TOML",
                        help="the floor config (tables, database, shifts, house edges, pools)")


def run(args: argparse.Namespace) -> int:
    from controller.floor.config import load_floor_config
    from controller.settings.validation import InputError

    if args.config is None:
        print(f"{PROGRAM}: needs --config FLOOR_TOML", file=sys.stderr)
        return 2
    try:
        loaded = load_floor_config(args.config)
    except (InputError, ValueError) as error:
        print(f"{PROGRAM}: {error}", file=sys.stderr)
        return 2
    if args.action == "report":
        return _report(loaded, args.date)
    if args.action == "adjust":
        return _adjust(loaded, args)
    if args.action == "math":
        return _math(loaded)
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
        print(f"{PROGRAM} report: {error}".strip(), file=sys.stderr)
        return 2
    return 0


def _math(loaded: LoadedFloorConfig) -> int:
    import psycopg

    from controller.floor import house_math, store
    from controller.floor.report import print_edges

    try:
        with store.connect(loaded.config.database.dsn) as connection:
            store.migrate(connection)
            store.configure(connection, loaded.config)
            computed = house_math.compute_pending(connection)
            print(f"house edges computed: {computed}")
            print_edges(connection, sys.stdout, None)
            connection.commit()
    except (psycopg.Error, store.SchemaError) as error:
        print(f"{PROGRAM} math: {error}".strip(), file=sys.stderr)
        return 2
    return 0


def _adjust(loaded: LoadedFloorConfig, args: argparse.Namespace) -> int:
    import psycopg

    from controller.floor import pool, store
    from controller.floor.report import money

    if args.pool not in {linked.id for linked in loaded.config.pools}:
        print(f"{PROGRAM} adjust: --pool {args.pool!r} is not a pool of "
              f"{loaded.path}", file=sys.stderr)
        return 2
    amount: int = args.amount   # cents, from the dollars typed (``dollars``)
    try:
        with store.connect(loaded.config.database.dsn) as connection:
            store.migrate(connection)
            pool.configure(connection, loaded.config.pools)
            meter = pool.adjust(connection, args.pool, amount, args.reason, args.by)
    except pool.PoolError as error:
        print(f"{PROGRAM} adjust: {error}", file=sys.stderr)
        return 1
    except (psycopg.Error, store.SchemaError) as error:
        print(f"{PROGRAM} adjust: {error}".strip(), file=sys.stderr)
        return 2
    print(f"pool {args.pool}: meter {money(meter)}")
    return 0

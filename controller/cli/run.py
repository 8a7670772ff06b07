"""``lowball-table run --config FILE``: run one table (the daemon systemd starts).

Stops cleanly on SIGTERM or SIGINT: the loop finishes the input in hand, STOPPING=1 is sent,
devices and sockets close. Every input already applied is in the journal, so a stop mid-hand
loses nothing; the next start rebuilds the hand and holds it for the dealer.
"""

from __future__ import annotations

import argparse
import gc
import signal
import sys
from pathlib import Path

import structlog

from controller.cli import Subcommands
from controller.cli import logs
from controller.settings.table_config import load_config
from controller.settings.validation import InputError


def register(subparsers: Subcommands, name: str, help_text: str) -> None:
    parser = subparsers.add_parser(name, help=help_text, description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="table config (TOML)")
    parser.add_argument("--state-dir", help="where the journal lives (default: the config's "
                                            "state_dir, or $STATE_DIRECTORY under systemd)")
    parser.add_argument("--log-format", choices=("auto", "json", "console"), default="auto")
    parser.add_argument("--durability", choices=("full", "batched"), default="full",
                        help="journal commits: 'full' (the default, and the only setting for a "
                             "live table) syncs each to disk before the table acts on it; "
                             "'batched' leaves syncing to SQLite's checkpoints, so a power cut "
                             "may lose the last commits: for simulations and benchmarks only")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import os

    logs.configure(json_lines={"auto": None, "json": True, "console": False}[args.log_format])
    try:
        loaded = load_config(args.config)
    except InputError as error:
        return _cannot_start(error)
    from controller.daemon.loop import TableDaemon  # imports zmq and the drivers
    from controller.stream.journal import JournalError
    from controller.errors import StartupError

    state_dir = args.state_dir or os.environ.get("STATE_DIRECTORY")
    try:
        daemon = TableDaemon(loaded, state_dir=Path(state_dir) if state_dir else None,
                             durability=args.durability)
    except StartupError as error:
        return _cannot_start(error)
    signal.signal(signal.SIGTERM, lambda *_: daemon.request_stop())
    signal.signal(signal.SIGINT, lambda *_: daemon.request_stop())
    try:
        try:
            daemon.start()
        except (StartupError, InputError, JournalError) as error:
            return _cannot_start(error)
        except OSError as error:  # the environment: a device path, a descriptor limit, ...
            return _cannot_start(f"{error.strerror or error}"
                                 f"{f': {error.filename}' if error.filename else ''}")
        except Exception as error:  # a bug: its traceback goes to the log, one line here
            structlog.get_logger("lowball.run").exception("start failed unexpectedly")
            print(f"lowball-table run: cannot start: unexpected {type(error).__name__}: {error}"
                  f" (a bug: the log has the traceback)", file=sys.stderr)
            return 1
        # What is left after start (config, wire models, ranking tables, the rebuilt table)
        # lives as long as the process: out of the collector's sight, a collection never
        # walks it in the middle of a card. Start-up's garbage goes first.
        gc.collect()
        gc.freeze()
        try:
            daemon.run()
        except JournalError as error:  # nothing may happen that the journal does not hold
            print(f"lowball-table run: the table stopped: {error}", file=sys.stderr)
            return 2
    finally:
        daemon.close()
    return 0


def _cannot_start(error: object) -> int:
    """One line naming the cause (multi-problem config errors keep one line each), exit 2."""
    print(f"lowball-table run: cannot start: {error}", file=sys.stderr)
    return 2

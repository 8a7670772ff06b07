"""``lowball-table``: one console script, one module per subcommand.

Each subcommand lives in ``controller/cli/<name>.py`` and exposes ``register(subparsers)``,
which adds its parser and sets ``func`` (called with the parsed arguments, returning the exit
status). Modules are imported only when the command line asks for them, so a tool that needs
no hardware library never imports one.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import NoReturn

#: The exit status of a command whose reader closed the pipe (``... | head``): 128 + SIGPIPE,
#: as the shell reports a program that the closed pipe ended.
CLOSED_PIPE = 141

#: subcommand name -> (module under controller.cli, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "replay": ("replay", "replay a scenario file and print its settlement"),
    "sim": ("sim", "run a simulated device (shoe, spots, meter) and print its port"),
    "shoe-monitor": ("shoe_monitor", "print each card or fault a shoe reports"),
    "run": ("run", "run one table: the daemon"),
    "dealer": ("dealer", "send a dealer or supervisor command to the daemon"),
    "journal": ("journal", "verify or show the audit journal"),
    "credential": ("credential", "make a new supervisor credential and print its hash"),
    "pin": ("pin", "make a new PIN for a supervisor and print its hash"),
    "demo": ("demo", "the whole table on simulators, with a live view (make run)"),
    "watch": ("watch", "a live, readable view of the event stream for surveillance"),
    "keys": ("keys", "create a CURVE key pair for the table or a stream client"),
    "console": ("console", "serve the table's screens (the dealer's touch screen) in a browser"),
    "floor": ("floor", "store every table's stream in PostgreSQL; ratings (floor report)"),
    "math": ("math", "exact game math: par sheets and the optimal strategy of a paytable"),
}


class OneLineParser(argparse.ArgumentParser):
    """A parser whose every mistake is one line naming it (and where the help is), exit 2:
    a usage block above the error hides the error from a person in a hurry."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = OneLineParser(prog="lowball-table", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module_name, help_text) in COMMANDS.items():
        if only is not None and name != only:
            subparsers.add_parser(name, help=help_text, add_help=False)
            continue
        module = importlib.import_module(f"controller.cli.{module_name}")
        module.register(subparsers, name, help_text)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    requested = next((arg for arg in argv if not arg.startswith("-")), None)
    parser = build_parser(requested if requested in COMMANDS else None)
    args = parser.parse_args(argv)
    try:
        status = int(args.func(args) or 0)
        sys.stdout.flush()          # inside the try: a buffered write may fail only here
        return status
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader has gone (``lowball-table replay FILE | head``): nothing left to say.
        # Point stdout at /dev/null so that Python's own flush at exit fails no more.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return CLOSED_PIPE


if __name__ == "__main__":
    sys.exit(main())

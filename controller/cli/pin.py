"""``lowball-table pin NAME``: make a new PIN for supervisor NAME.

Prints the PIN once (give it to her; nothing keeps it) and the line to put in the table config
under ``[security.supervisor_pins]``: ``NAME = "scrypt:..."``, its hash. NAME must also be
under ``[security.supervisors]`` (a PIN is a supervisor's second way in: her credential still
signs when wrong PINs have locked her PIN). She signs in on the console's touch screen by
touching her name and keying in the PIN.
"""

from __future__ import annotations

import argparse
import json
import re
import sys

from controller.cli import Subcommands
from controller.settings.pins import MAX_DIGITS, MIN_DIGITS, hash_pin, new_pin

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._-]{0,31}")


def register(subparsers: Subcommands, name: str, help_text: str) -> None:
    parser = subparsers.add_parser(name, help=help_text, description=__doc__.splitlines()[0])
    parser.add_argument("name", help="the supervisor, as named under [security.supervisors]")
    parser.add_argument("--digits", type=int, default=MIN_DIGITS,
                        help=f"the PIN's length ({MIN_DIGITS} to {MAX_DIGITS}; default "
                             f"{MIN_DIGITS})")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not _NAME.fullmatch(args.name):
        print(f"lowball-table pin: {args.name!r}: a supervisor's name is 1 to 32 letters, "
              f"digits, spaces or . _ -, beginning with a letter or digit", file=sys.stderr)
        return 2
    if not MIN_DIGITS <= args.digits <= MAX_DIGITS:
        print(f"lowball-table pin: --digits {args.digits}: a PIN is {MIN_DIGITS} to "
              f"{MAX_DIGITS} digits", file=sys.stderr)
        return 2
    pin = new_pin(args.digits)
    print(f"PIN for {args.name}: {pin}   (give it to her now: nothing keeps it)\n"
          f"put this in the table config:\n\n[security.supervisor_pins]\n"
          f"{json.dumps(args.name)} = \"{hash_pin(pin)}\"")
    return 0

"""``lowball-table credential FILE``: make a new supervisor credential.

Writes a random credential to FILE (readable by its owner only) and prints the line to put in
the table config: ``supervisor_credential_sha256 = "..."`` under ``[security]``. The table
keeps only the hash; a supervisor gives the file with ``lowball-table dealer
--credential-file FILE``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import secrets
import sys

from controller.cli import Subcommands


def register(subparsers: Subcommands, name: str, help_text: str) -> None:
    parser = subparsers.add_parser(name, help=help_text, description=__doc__.splitlines()[0])
    parser.add_argument("file", help="where to write the credential (must not exist)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    credential = secrets.token_urlsafe(32)
    try:
        descriptor = os.open(args.file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        print(f"lowball-table credential: {args.file} exists; choose a new file",
              file=sys.stderr)
        return 2
    except OSError as error:
        print(f"lowball-table credential: cannot write {args.file}: {error.strerror}",
              file=sys.stderr)
        return 2
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(credential + "\n")
    digest = hashlib.sha256(credential.encode("utf-8")).hexdigest()
    print(f"credential written to {args.file}; put this in the table config:\n\n"
          f"[security]\nsupervisor_credential_sha256 = \"{digest}\"")
    return 0

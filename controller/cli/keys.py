"""``lowball-table keys new NAME [--dir DIR]``: make a CURVE key pair for the table or a client.

Writes ``DIR/NAME.key`` (the public key: give it out; copy a client's into the table's
``authorized_keys_dir`` or ``cms_authorized_keys_dir``) and ``DIR/NAME.key_secret`` (the secret
key: keep it on the machine it names, readable by its owner only). An existing pair is never
overwritten.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from controller.cli import Subcommands


def register(subparsers: Subcommands, name: str, help_text: str) -> None:
    parser = subparsers.add_parser(name, help=help_text, description=__doc__.splitlines()[0])
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    new = actions.add_parser("new", help="create NAME.key and NAME.key_secret")
    new.add_argument("name", metavar="NAME", help="whose keys: the table id or a client name")
    new.add_argument("--dir", default=".", metavar="DIR", help="where to write them (default .)")
    new.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import zmq.auth

    name = args.name
    if not name or "/" in name or name.startswith("."):
        print(f"lowball-table keys: {name!r} is not a plain name", file=sys.stderr)
        return 2
    directory = Path(args.dir)
    directory.mkdir(parents=True, exist_ok=True)
    public, secret = directory / f"{name}.key", directory / f"{name}.key_secret"
    existing = [str(path) for path in (public, secret) if path.exists()]
    if existing:
        print(f"lowball-table keys: {', '.join(existing)} already exists; not overwritten",
              file=sys.stderr)
        return 1
    public_file, secret_file = zmq.auth.create_certificates(str(directory), name)
    os.chmod(secret_file, 0o600)
    print(f"public key {public_file}\nsecret key {secret_file}")
    return 0

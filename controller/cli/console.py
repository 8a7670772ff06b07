"""``lowball-table console --config FILE``: the table's screens in a browser.

Serves the dealer's touch screen at ``/`` for the table named by the console's config file
(:mod:`controller.console.config`), as a client of the daemon: the event stream and the
command channel, nothing else. Prints its URL once it listens. Loopback only, unless the
config gives a TLS certificate and key.
"""

from __future__ import annotations

import argparse
import socket
import sys
from typing import TYPE_CHECKING

from controller.cli import Subcommands

if TYPE_CHECKING:
    from controller.console.config import LoadedConsole


def register(subparsers: Subcommands, name: str, help_text: str) -> None:
    parser = subparsers.add_parser(name, help=help_text, description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="the console's config file")
    parser.add_argument("--port", type=int, help="listen on this port instead (0: any free)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from controller.cli import logs
    from controller.console.app import create_app
    from controller.console.config import load_console_config
    from controller.console.link import TableLink
    from controller.console.sessions import Sessions
    from controller.stream.security import client_keys
    from controller.settings.validation import InputError

    try:
        loaded = load_console_config(args.config)
        config = loaded.config
        curve = client_keys(
            None if config.curve_key_file is None else str(loaded.relative(config.curve_key_file)),
            None if config.table_public_key_file is None
            else str(loaded.relative(config.table_public_key_file)))
    except (InputError, ValueError) as error:
        print(f"lowball-table console: {error}", file=sys.stderr)
        return 2
    logs.configure(stream=sys.stderr)
    port = config.port if args.port is None else args.port
    if not 0 <= port <= 65535:
        print(f"lowball-table console: --port {port} is not a port", file=sys.stderr)
        return 2
    stream, table = loaded.table.config.stream, loaded.table.config.table
    if stream.table_events is None or stream.table_replay is None:
        print(f"lowball-table console: {loaded.table.path}: [stream] sets no table_events and "
              f"table_replay: the console follows only the table family (what the table "
              f"shows), never the surveillance stream", file=sys.stderr)
        return 2
    link = TableLink(table_id=table.id, spots=table.spots, events=stream.table_events,
                     replay=stream.table_replay, commands=stream.commands,
                     on_view=lambda view: None, curve=curve)
    security = loaded.table.config.security
    sessions = Sessions(config.session_minutes, dict(security.supervisors),
                        with_pins=tuple(sorted({*security.supervisor_pins,
                                                *config.supervisors_with_pins})))
    tls = config.tls_cert_file is not None
    app = create_app(link, config.by, sessions, secure_cookie=tls, signs_in=config.signs_in,
                     accounts=dict(config.accounts))
    family = socket.AF_INET6 if ":" in config.host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((config.host, port))
        listener.listen(128)  # connections wait in the backlog until the server takes them
    except OSError as error:
        print(f"lowball-table console: cannot listen on {config.host}:{port}: "
              f"{error.strerror}", file=sys.stderr)
        return 1
    server = uvicorn.Server(uvicorn.Config(
        app, log_level="warning", ws_max_size=64 * 1024, ws_ping_interval=5.0,
        # the console is no proxy's backend: a client's X-Forwarded-For must not become the
        # address its failed sign-ins are counted against
        proxy_headers=False,
        ssl_certfile=_path(loaded, config.tls_cert_file),
        ssl_keyfile=_path(loaded, config.tls_key_file)))
    host = f"[{config.host}]" if family == socket.AF_INET6 else config.host
    print(f"console: {'https' if tls else 'http'}://{host}:{listener.getsockname()[1]}/ "
          f"(table {table.id})", flush=True)
    server.run(sockets=[listener])
    return 0


def _path(loaded: LoadedConsole, name: str | None) -> str | None:
    """A file the config names (relative to the config's folder), or None."""
    return None if name is None else str(loaded.relative(name))

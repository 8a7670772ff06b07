"""``lowball-table dealer ...``: the dealer's and supervisor's command-line client.

    lowball-table dealer place 3 ante 1000          lowball-table dealer lock
    lowball-table dealer decide 3 raise             lowball-table dealer decide 2 discard:Kh,Qs
    lowball-table dealer continue                   lowball-table dealer status
    lowball-table dealer --credential-file F void "card on the floor"
    lowball-table dealer --credential-file F adjust_meter -2500 "meter reading corrected"

Each command is answered ``ok`` (with what the table expects next) or with the reason it was
refused; the exit status is 0 or 1. ``--json`` prints the daemon's answer as it is.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from controller.settings.table_config import Stream

DEFAULT_ENDPOINT = Stream().commands


def register(subparsers, name: str, help_text: str) -> None:
    parser = subparsers.add_parser(name, help=help_text, description=__doc__.splitlines()[0],
                                   formatter_class=argparse.RawDescriptionHelpFormatter,
                                   epilog="\n".join(__doc__.splitlines()[2:]))
    parser.add_argument("--connect", default=DEFAULT_ENDPOINT, help="the daemon's command "
                        f"socket (default {DEFAULT_ENDPOINT})")
    parser.add_argument("--by", default="dealer", help="who gives the command (journaled)")
    parser.add_argument("--credential-file", help="file holding the supervisor credential")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for the "
                                                                   "answer")
    parser.add_argument("--json", action="store_true")
    from controller.stream.security import add_client_options
    add_client_options(parser)
    parser.add_argument("words", nargs="+", metavar="COMMAND",
                        help="open | close | place SPOT WAGER AMOUNT [PLAYER] | cancel SPOT "
                             "WAGER | lock | decide SPOT DECISION | continue | void REASON | "
                             "verify_jackpot | reload | adjust_meter AMOUNT REASON | sign_in | status")
    parser.set_defaults(func=run)


def request_of(words: list[str]) -> dict[str, Any]:
    """The JSON request for the command line's words; ValueError says what is missing."""
    name, rest = words[0].replace("-", "_"), words[1:]
    shapes = {"place": ["spot", "wager", "amount", "player?"], "cancel": ["spot", "wager"],
              "decide": ["spot", "decision"], "void": ["reason"],
              "adjust_meter": ["amount", "reason"]}
    fields = shapes.get(name, [])
    required = [field for field in fields if not field.endswith("?")]
    if len(rest) < len(required) or len(rest) > len(fields):
        usage = " ".join(f.upper().rstrip("?") if not f.endswith("?") else f"[{f[:-1].upper()}]"
                         for f in fields)
        raise ValueError(f"usage: {name} {usage}".rstrip())
    request: dict[str, Any] = {"command": name}
    for field, value in zip(fields, rest):
        field = field.rstrip("?")
        whole = value.removeprefix("-").isdigit() if field == "amount" else value.isdigit()
        request[field] = int(value) if field in ("spot", "amount") and whole else value
    return request


def send(endpoint: str, request: dict[str, Any], timeout: float,
         curve: dict[str, bytes] | None = None) -> dict[str, Any] | None:
    import zmq

    context = zmq.Context.instance()
    socket = context.socket(zmq.REQ)
    socket.setsockopt(zmq.LINGER, 0)
    if curve is not None:
        from controller.stream.security import client
        client(socket, **curve)
    try:
        socket.connect(endpoint)
        socket.send_json(request)
        if not socket.poll(int(timeout * 1000)):
            return None
        return socket.recv_json()
    finally:
        socket.close(0)


def run(args: argparse.Namespace) -> int:
    try:
        request = request_of(args.words)
    except ValueError as error:
        print(f"lowball-table dealer: {error}", file=sys.stderr)
        return 2
    from controller.stream.security import client_keys
    try:
        curve = client_keys(getattr(args, "key", None), getattr(args, "server_key", None))
    except ValueError as error:
        print(f"lowball-table dealer: {error}", file=sys.stderr)
        return 2
    request["by"] = args.by
    if args.credential_file:
        with open(args.credential_file, encoding="utf-8") as handle:
            request["credential"] = handle.read().strip()
    reply = send(args.connect, request, args.timeout, curve)
    if reply is None:
        print(f"lowball-table dealer: no answer from {args.connect} within {args.timeout:g} s",
              file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(reply, indent=2))
    elif reply.get("ok"):
        if "expecting" in reply:
            print(f"ok  [{reply['state']}] next: {reply['expecting']}")
        else:
            print(json.dumps(reply, indent=2))
    else:
        print(f"refused: {reply.get('error')}")
    return 0 if reply.get("ok") else 1

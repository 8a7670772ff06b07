"""``lowball-table dealer ...``: the dealer's and supervisor's command-line client.

    lowball-table dealer place 3 ante 1000          lowball-table dealer lock
    lowball-table dealer decide 3 raise             lowball-table dealer decide 2 discard:Kh,Qs
    lowball-table dealer continue                   lowball-table dealer status
    lowball-table dealer seat_player 5 "Pat Smith"  lowball-table dealer seat_player 5
    lowball-table dealer change_dealer "Dana 0412"
    lowball-table dealer --credential-file F void "card on the floor"
    lowball-table dealer --credential-file F burn "misread card on the draw"
    lowball-table dealer --credential-file F adjust_meter -2500 "meter reading corrected"
    lowball-table dealer --credential-file F acknowledge_alarm 812

Each command is answered ``ok`` (with what the table expects next) or with the reason it was
refused; the exit status is 0 or 1. ``status`` prints the table, the hand in play (each spot's
player and cards, discarded cards as discarded) and the progressive awards to pay (amount in
dollars, spot, player). ``--json`` prints the daemon's answer as it is.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from controller.cli import Subcommands
from controller.settings.table_config import Stream

DEFAULT_ENDPOINT = Stream().commands


def register(subparsers: Subcommands, name: str, help_text: str) -> None:
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
                        help="open | close | place SPOT WAGER AMOUNT [PLAYER] | seat_player "
                             "SPOT [PLAYER] | change_dealer [DEALER] | cancel SPOT WAGER | "
                             "lock | decide SPOT DECISION | continue | void REASON | "
                             "burn REASON | "
                             "verify_jackpot | reload | adjust_meter AMOUNT REASON | sign_in | "
                             "acknowledge_alarm SEQ | status | "
                             "withdraw REQUEST_ID... (a command that timed out)")
    parser.set_defaults(func=run)


def request_of(words: list[str]) -> dict[str, Any]:
    """The JSON request for the command line's words; ValueError says what is missing."""
    name, rest = words[0].replace("-", "_"), words[1:]
    if name == "withdraw":
        if not rest:
            raise ValueError("usage: withdraw REQUEST_ID...")
        return {"command": name, "requests": rest}
    shapes = {"place": ["spot", "wager", "amount", "player?"], "cancel": ["spot", "wager"],
              "decide": ["spot", "decision"], "void": ["reason"], "burn": ["reason"],
              "seat_player": ["spot", "player?"], "change_dealer": ["dealer?"],
              "adjust_meter": ["amount", "reason"], "acknowledge_alarm": ["seq"]}
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
        request[field] = int(value) if field in ("spot", "amount", "seq") and whole else value
    if name in ("seat_player", "change_dealer"):  # no name: an unrated player, no dealer
        request.setdefault(fields[-1].rstrip("?"), "")
    return request


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
    from controller.stream.command_client import CommandClient, CommandTimeout
    from controller.stream.command_replies import Accepted, Refused, Status

    with CommandClient(args.connect, curve=curve, timeout_s=args.timeout) as client:
        try:
            reply = client.ask(request)
        except CommandTimeout as error:
            print(f"lowball-table dealer: {error}", file=sys.stderr)
            return 1
    if isinstance(reply, Accepted) and not args.json:
        print(f"ok  [{reply.state}] next: {reply.expecting}")
    elif isinstance(reply, Refused) and not args.json:
        print(f"refused: {reply.error}")
    elif isinstance(reply, Status) and not args.json:
        from controller.cli.dealer_status import status_lines
        print("\n".join(status_lines(reply.state, reply.seq, reply.journal)))
    else:
        print(json.dumps(reply.wire(), indent=2))
    return 0 if reply.ok else 1

"""``lowball-table dealer ...``: the dealer's and supervisor's command-line client.

    lowball-table dealer place 3 ante 25            lowball-table dealer lock
    lowball-table dealer decide 3 raise             lowball-table dealer decide 2 discard:Kh,Qs
    lowball-table dealer continue                   lowball-table dealer status
    lowball-table dealer seat_player 5 "Pat Smith"  lowball-table dealer seat_player 5
    lowball-table dealer change_dealer "Dana 0412"
    lowball-table dealer --credential-file F void "card on the floor"
    lowball-table dealer --credential-file F burn "misread card on the draw"
    lowball-table dealer --credential-file F adjust_meter -25.00 "meter reading corrected"
    lowball-table dealer --credential-file F acknowledge_alarm 812

Amounts are typed in dollars (``25``, ``25.50``, ``$25``; the wire carries cents). A mistake on
the command line (an unknown command, a missing argument, an amount that is not dollars, a
credential file that cannot be read) is one line naming it, exit status 2. Each command is
answered ``ok`` (with what the table expects next) or with the reason it was
refused; the exit status is 0 or 1. ``status`` prints the table, the hand in play (each spot's
player and cards, discarded cards as discarded) and the progressive awards to pay (amount in
dollars, spot, player). ``--json`` prints the daemon's answer as it is.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from typing import Any

from controller.cli import Subcommands
from controller.settings.table_config import Stream

DEFAULT_ENDPOINT = Stream().commands
#: The longest wait for an answer the command line takes, in seconds.
MAX_TIMEOUT_S = 600


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
                        help="open | close | place SPOT WAGER DOLLARS [PLAYER] | seat_player "
                             "SPOT [PLAYER] | change_dealer [DEALER] | cancel SPOT WAGER | "
                             "lock | decide SPOT DECISION | continue | void REASON | "
                             "burn REASON | "
                             "verify_jackpot | reload | adjust_meter DOLLARS REASON | sign_in | "
                             "acknowledge_alarm SEQ | status | "
                             "withdraw REQUEST_ID... (a command that timed out)")
    parser.set_defaults(func=run)


#: Each command's words after its name (``?``: optional), as the usage line names them.
SHAPES: dict[str, list[str]] = {
    "open": [], "close": [], "place": ["spot", "wager", "amount", "player?"],
    "seat_player": ["spot", "player?"], "change_dealer": ["dealer?"],
    "cancel": ["spot", "wager"], "lock": [], "decide": ["spot", "decision"], "continue": [],
    "void": ["reason"], "burn": ["reason"], "verify_jackpot": [], "reload": [],
    "adjust_meter": ["amount", "reason"], "sign_in": [], "acknowledge_alarm": ["seq"],
    "status": [],
}
#: How the usage line names each word.
WORDS = {"amount": "DOLLARS"}
#: Every command the dealer's command line knows (``withdraw`` takes request ids).
KNOWN = (*SHAPES, "withdraw")


def _usage(name: str) -> str:
    fields = SHAPES[name]
    return " ".join([name, *(WORDS.get(f.rstrip("?"), f.rstrip("?").upper()) if not f.endswith("?")
                             else f"[{f[:-1].upper()}]" for f in fields)])


def _unknown(name: str) -> str:
    shown = repr(name[:32]) + ("..." if len(name) > 32 else "")
    close = difflib.get_close_matches(name, KNOWN, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"unknown command {shown}{hint}; the commands: {', '.join(KNOWN)}"


def request_of(words: list[str]) -> dict[str, Any]:
    """The JSON request for the command line's words; ValueError says, in one line, what is
    wrong (an unknown command, a missing word, a spot or an amount that is not one)."""
    from controller.core.money import parse_dollars
    from controller.core.table_settings import MAX_SPOTS
    from controller.settings.validation import MAX_CENTS
    from controller.stream.table_commands import MAX_METER_ADJUSTMENT

    name, rest = words[0].replace("-", "_"), words[1:]
    if name == "withdraw":
        if not rest:
            raise ValueError("withdraw needs the REQUEST_ID of each command that timed out")
        return {"command": name, "requests": rest}
    if name not in SHAPES:
        raise ValueError(_unknown(words[0]))
    fields = SHAPES[name]
    required = [field for field in fields if not field.endswith("?")]
    if len(rest) < len(required) or len(rest) > len(fields):
        many = "too many words" if len(rest) > len(fields) else "missing words"
        raise ValueError(f"{name}: {many}; usage: {_usage(name)}")
    request: dict[str, Any] = {"command": name}
    for field, value in zip(fields, rest):
        field = field.rstrip("?")
        if field == "spot":
            if not (value.isascii() and value.isdigit() and 1 <= int(value) <= MAX_SPOTS):
                raise ValueError(f"spot {value[:32]!r} is not a spot: spots are numbered 1 to "
                                 f"{MAX_SPOTS}")
            request[field] = int(value)
        elif field == "amount" and name == "adjust_meter":
            request[field] = parse_dollars(value, name="amount", negative=True,
                                           limit=MAX_METER_ADJUSTMENT)
        elif field == "amount":
            request[field] = parse_dollars(value, name="amount", limit=MAX_CENTS)
        elif field == "seq":
            if not (value.isascii() and value.isdigit() and len(value) <= 19):
                raise ValueError(f"seq {value[:32]!r} is not an alarm's journal seq (a whole "
                                 f"number, as watch shows it)")
            request[field] = int(value)
        else:
            request[field] = value
    if name in ("seat_player", "change_dealer"):  # no name: an unrated player, no dealer
        request.setdefault(fields[-1].rstrip("?"), "")
    return request


def _credential(path: str) -> str:
    """The supervisor credential in ``path``; ValueError names the file and what is wrong."""
    try:
        with open(path, encoding="utf-8") as handle:
            credential = handle.read(4097).strip()
    except FileNotFoundError:
        raise ValueError(f"credential file {path}: no such file") from None
    except IsADirectoryError:
        raise ValueError(f"credential file {path}: a directory, not a file") from None
    except PermissionError:
        raise ValueError(f"credential file {path}: not readable by this user") from None
    except UnicodeDecodeError:
        raise ValueError(f"credential file {path}: not a text file") from None
    except OSError as error:
        raise ValueError(f"credential file {path}: {error.strerror or error}") from None
    if not credential:
        raise ValueError(f"credential file {path} is empty")
    if len(credential) > 4096:
        raise ValueError(f"credential file {path} holds more than a credential")
    return credential


def _ascii_only() -> bool:
    """Whether this terminal cannot print the suits (``10h`` then, not ``10♥``)."""
    encoding = getattr(sys.stdout, "encoding", None) or "ascii"
    try:
        "\u2660\u2665\u2666\u2663".encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return True
    return False


def _readable(text: str) -> str:
    """A table's text as this terminal prints it: cards as printed on them."""
    from controller.core.card_faces import printed_text
    return printed_text(text, ascii_only=_ascii_only())


def run(args: argparse.Namespace) -> int:
    try:
        request = request_of(args.words)
        if not 0 < args.timeout <= MAX_TIMEOUT_S:
            raise ValueError(f"--timeout {args.timeout:g}: seconds to wait, more than 0 and at "
                             f"most {MAX_TIMEOUT_S}")
        if args.credential_file:
            request["credential"] = _credential(args.credential_file)
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
    from controller.stream.command_client import CommandClient, CommandTimeout
    from controller.stream.command_replies import Accepted, Refused, Status

    import zmq

    try:
        with CommandClient(args.connect, curve=curve, timeout_s=args.timeout) as client:
            reply = client.ask(request)
    except CommandTimeout as error:
        print(f"lowball-table dealer: {error}", file=sys.stderr)
        return 1
    except zmq.ZMQError as error:
        print(f"lowball-table dealer: --connect {args.connect!r}: {error.strerror} (expected "
              f"tcp://HOST:PORT or ipc://PATH)", file=sys.stderr)
        return 2
    if isinstance(reply, Accepted) and not args.json:
        print(_readable(f"ok  [{reply.state}] next: {reply.expecting}"))
    elif isinstance(reply, Refused) and not args.json:
        print(_readable(f"refused: {reply.error}"))
    elif isinstance(reply, Status) and not args.json:
        from controller.cli.dealer_status import status_lines
        print("\n".join(status_lines(reply.state, reply.seq, reply.journal,
                                     ascii_only=_ascii_only())))
    else:
        print(json.dumps(reply.wire(), indent=2))
    return 0 if reply.ok else 1

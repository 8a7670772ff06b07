"""``lowball-table sim shoe|spots|meter``: one simulated device, standalone.

Prints the port URL to connect to (a pty path, or ``socket://127.0.0.1:PORT`` with
``--tcp``) as the first line of stdout, then takes commands on stdin, one per line (``help``
lists them), until ``quit``, end of input with ``--exit-on-eof``, or a signal.
"""

from __future__ import annotations

import argparse
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

SHOE_COMMANDS = """\
deal [N]          deal N cards (default 1)
jam               report a jam
misread           the next card leaves unread (MISREAD)
door open|close   open or close the shoe door
tag [N]           the next N cards carry an unknown RFID tag
duplicate CARD    report a duplicate card
noise             send line noise
badcrc [N]        send the next N frames with a bad CRC
overlong          send an over-long frame
dropack [N]       ignore the next N acknowledgements (forces retransmission)
lose [N]          the next N cards leave the shoe unreported (the card count skips)
reuse             send the next frame under the last acknowledged SEQ (the host refuses it)
silent | resume   stop / restart sending anything (heartbeats too)
disconnect | reconnect   pull / replace the cable
status            print the shoe's state
quit"""

SPOTS_COMMANDS = """\
cover SPOT | uncover SPOT   put a chip on / take it off a wager sensor
mute [N]          ignore the next N commands
refuse [CODE]     answer the next command ERR CODE
silent | resume   stop / restart answering
disconnect | reconnect
lamps             print every spot's lamp
quit"""

METER_COMMANDS = """\
show              print what the sign shows
disconnect | reconnect
quit"""


def register(subparsers: Any, name: str, help_text: str) -> None:
    p = subparsers.add_parser(name, help=help_text, description=__doc__.split("\n\n")[1])
    p.add_argument("device", choices=["shoe", "spots", "meter"])
    where = p.add_mutually_exclusive_group()
    where.add_argument("--pty", action="store_true", help="serve on a pseudo-terminal (default)")
    where.add_argument("--tcp", type=int, metavar="PORT",
                       help="serve on socket://127.0.0.1:PORT (0 = any free port)")
    deck = p.add_mutually_exclusive_group()
    deck.add_argument("--cards", help="shoe order, e.g. 'As 7d Kc' (a scenario's shoe)")
    deck.add_argument("--seed", type=int, help="shuffle a fresh deck with this seed")
    p.add_argument("--deal-every", type=float, metavar="S",
                   help="shoe: deal a card every S seconds on its own")
    p.add_argument("--no-tags", action="store_true", help="shoe: report cards without tags")
    p.add_argument("--exit-on-eof", action="store_true", help="quit when stdin ends")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from simulators.meter import AlphaSignModel
    from simulators.pty_transport import PtyTransport
    from simulators.shoe import Lbs1ShoeModel
    from simulators.spots import SpotControllerModel
    from simulators.tcp_transport import TcpTransport

    model: Any
    if args.device == "shoe":
        try:
            model = Lbs1ShoeModel(args.cards, seed=args.seed, tags=not args.no_tags)
        except ValueError as exc:
            print(f"sim: --cards: {exc}", file=sys.stderr)
            return 2
        commands = SHOE_COMMANDS
    elif args.device == "spots":
        model, commands = SpotControllerModel(), SPOTS_COMMANDS
    else:
        model = AlphaSignModel(on_write=lambda text: _say(f"meter shows: {text}"))
        commands = METER_COMMANDS
    if args.tcp is not None:
        transport: Any = TcpTransport(model, port=args.tcp, name=args.device)
    else:
        transport = PtyTransport(model, name=args.device)

    lines: queue.Queue[str | None] = queue.Queue()
    _read_stdin_in_background(lines)
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with transport:
        _say(transport.url)
        print(f"{args.device} simulator ready; commands:\n{commands}", file=sys.stderr)
        next_deal = None if args.deal_every is None else time.monotonic() + args.deal_every
        try:
            while not stop.is_set():
                wait = 0.2 if next_deal is None else max(0.0, next_deal - time.monotonic())
                try:
                    line = lines.get(timeout=min(wait, 0.2))
                except queue.Empty:
                    line = ""
                if next_deal is not None and time.monotonic() >= next_deal:
                    transport.device.deal()
                    next_deal += args.deal_every
                if line is None:
                    if args.exit_on_eof:
                        break
                    continue
                if line.strip() in ("quit", "exit"):
                    break
                if line.strip():
                    _say(_execute(args.device, transport, line.split(), commands))
        except KeyboardInterrupt:
            pass
    signal.signal(signal.SIGTERM, previous)
    return 0


def _say(text: str) -> None:
    print(text, flush=True)


def _read_stdin_in_background(lines: queue.Queue[str | None]) -> None:
    def reader() -> None:
        for line in sys.stdin:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=reader, name="sim-stdin", daemon=True).start()


def _execute(device: str, transport: Any, words: list[str], commands: str) -> str:
    """Run one console command; the answer says what happened or what was wrong."""
    verb, rest = words[0].lower(), words[1:]
    sim = transport.device
    table: dict[str, Callable[[], Any]] = {
        "help": lambda: commands,
        "disconnect": transport.disconnect,
        "reconnect": transport.reconnect,
    }
    if device == "shoe":
        table.update({
            "deal": lambda: sim.deal(_count(rest)),
            "jam": sim.jam,
            "misread": sim.misread,
            "door": lambda: (sim.open_door() if rest[:1] == ["open"] else sim.close_door()
                             if rest[:1] == ["close"] else _fail("door open|close")),
            "tag": lambda: sim.unknown_tag(_count(rest)),
            "duplicate": lambda: sim.report_duplicate(rest[0]) if rest else
            _fail("duplicate CARD"),
            "noise": sim.inject_noise,
            "badcrc": lambda: sim.corrupt_next_crc(_count(rest)),
            "overlong": sim.send_overlong,
            "dropack": lambda: sim.drop_acks(_count(rest)),
            "lose": lambda: sim.lose_cards(_count(rest)),
            "reuse": sim.reuse_seq,
            "silent": sim.go_silent,
            "resume": sim.resume,
            "status": lambda: f"state {sim.state}, {sim.remaining} cards left, card count "
                              f"{sim.count}" + (", HALTED: waiting for the host to acknowledge"
                                                if sim.halted else ""),
        })
    elif device == "spots":
        table.update({
            "cover": lambda: sim.cover(_spot(rest)),
            "uncover": lambda: sim.uncover(_spot(rest)),
            "mute": lambda: sim.ignore_commands(_count(rest)),
            "refuse": lambda: sim.refuse_next(rest[0] if rest else "BUSY"),
            "silent": sim.go_silent,
            "resume": sim.resume,
            "lamps": lambda: " ".join(f"{spot}:{lamp.color.value}/{lamp.mode.value}"
                                      for spot, lamp in sim.lamps.items()),
        })
    else:
        table["show"] = lambda: f"meter shows: {sim.text!r}"
    action = table.get(verb)
    if action is None:
        return f"unknown command {verb!r}; try help"
    try:
        result = action()
    except (ValueError, IndexError) as exc:
        return f"{verb}: {exc}"
    return result if isinstance(result, str) else "ok"


def _count(rest: list[str]) -> int:
    if not rest:
        return 1
    if not rest[0].isdigit() or int(rest[0]) < 1:
        raise ValueError(f"count must be a whole number from 1, got {rest[0]!r}")
    return int(rest[0])


def _spot(rest: list[str]) -> int:
    if not rest or not rest[0].isdigit():
        raise ValueError("give a spot number 1-7")
    return int(rest[0])


def _fail(usage: str) -> None:
    raise ValueError(f"usage: {usage}")

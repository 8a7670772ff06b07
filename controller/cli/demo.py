"""``lowball-table demo``: the whole table on simulators, with a live view (``make run``).

Starts the card shoe, spot controller and meter simulators on pseudo-terminals (the drivers
open them as real ttys), the daemon with a config that needs no hardware, and a simulated
dealer that plays hands continuously through the command channel. The live view shows the
table as the event stream does. Ctrl-C stops everything cleanly.

With ``--dealer human`` no one plays for you: you deal on the console's screen (open, name
the players, place, lock, key the decisions), and this terminal is the card shoe: Enter deals
the next card (a number and Enter deals that many). The terminal shows no card: the shoe's
cards appear on the dealer's screen as the table shows them. A fresh shuffled deck goes in the
shoe after each hand. docs/operators.md, "Deal your first hand".

The demo's supervisor, Sam, signs in on the console with the PIN the demo prints.

The event stream, replay and command sockets are on the default loopback ports, so
``lowball-table dealer status`` and any subscriber can join while it runs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import secrets
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.cli import Subcommands, logs
from controller.settings.pins import hash_pin, new_pin
from controller.settings.table_config import (
    Devices,
    LoadedConfig,
    Security,
    Stream,
    default_config_path,
    load_config,
)

if TYPE_CHECKING:
    from controller.stream.journal import JournalRecord


def register(subparsers: Subcommands, name: str, help_text: str) -> None:
    parser = subparsers.add_parser(name, help=help_text, description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=("cali_lowball", "three_card_lowball"),
                        default="three_card_lowball")
    parser.add_argument("--state-dir", help="where the journal and the log go "
                                            "(default: a new temporary directory)")
    parser.add_argument("--dealer", choices=("simulated", "human"), default="simulated",
                        help="who deals: the simulated dealer (default), or you, on the "
                             "console's screen, with this terminal as the card shoe")
    parser.add_argument("--hands", type=int, help="stop after this many hands")
    parser.add_argument("--pace", type=float, default=0.4,
                        help="seconds the dealer takes per step (default 0.4)")
    parser.add_argument("--seed", type=int, help="shuffle seed for repeatable demos")
    parser.add_argument("--no-view", action="store_true",
                        help="print one line per event instead of the live view")
    parser.add_argument("--events", default=Stream().events)
    parser.add_argument("--replay", default=Stream().replay)
    parser.add_argument("--commands", default=Stream().commands)
    parser.add_argument("--table-events", default=TABLE_EVENTS,
                        help="the table family's PUB endpoint, which the console follows")
    parser.add_argument("--table-replay", default=TABLE_REPLAY,
                        help="the table family's replay endpoint")
    parser.add_argument("--cms-events", default=CMS_EVENTS,
                        help="the CMS family's PUB endpoint ('' for none)")
    parser.add_argument("--cms-replay", default=CMS_REPLAY,
                        help="the CMS family's replay endpoint ('' for none)")
    parser.add_argument("--console-port", type=int, default=8080,
                        help="where the console serves the table's screens (default 8080; "
                             "0: any free port)")
    parser.add_argument("--no-console", action="store_true",
                        help="do not start the console beside the table")
    parser.add_argument("--floor", type=_table_count, metavar="N",
                        help=f"N Three Card Lowball tables (1 to {MAX_FLOOR_TABLES}), the "
                             "floor service and one linked pool on a throwaway PostgreSQL "
                             "(no live view, no console)")
    parser.set_defaults(func=run)


#: The most tables ``--floor`` starts (each is a daemon and three simulators in this process).
MAX_FLOOR_TABLES = 20


def _table_count(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of tables") from None
    if not 1 <= count <= MAX_FLOOR_TABLES:
        raise argparse.ArgumentTypeError(f"{count}: from 1 to {MAX_FLOOR_TABLES} tables")
    return count


#: Where the demo (and the shipped configs) put the CMS family: what examples/cms_consumer.py
#: connects to by default.
CMS_EVENTS, CMS_REPLAY = "tcp://127.0.0.1:5558", "tcp://127.0.0.1:5559"
#: Where the demo (and the shipped configs) put the table family: what the console follows.
TABLE_EVENTS, TABLE_REPLAY = "tcp://127.0.0.1:5560", "tcp://127.0.0.1:5561"


#: The demo's supervisor, who signs in on the console with a PIN.
SUPERVISOR = "Sam"


def demo_config(game: str, *, shoe: str, spots: str, meter: str, credential: str,
                stream: Stream, supervisor: tuple[str, str] | None = None) -> LoadedConfig:
    """The demo table's config on the simulators' ports. ``credential``: the shared
    supervisor credential (the simulated dealer's); ``supervisor``: (credential, PIN) of
    :data:`SUPERVISOR`, who signs in on the console."""
    shipped = load_config(default_config_path(game))
    security = Security(supervisor_credential_sha256=hashlib.sha256(
        credential.encode()).hexdigest())
    if supervisor is not None:
        own, pin = supervisor
        security = Security(supervisor_credential_sha256=security.supervisor_credential_sha256,
                            supervisors={SUPERVISOR: hashlib.sha256(own.encode()).hexdigest()},
                            supervisor_pins={SUPERVISOR: hash_pin(pin)})
    config = shipped.config.model_copy(update={
        "devices": Devices.model_validate({"shoe": {"driver": "lbs1", "port": shoe},
                                           "spots": {"driver": "spots-ascii", "port": spots},
                                           "meter": {"driver": "alpha", "port": meter}}),
        "stream": stream,
        "security": security,
    })
    return shipped.model_copy(update={"config": config})


def start_console(state_dir: Path, loaded: LoadedConfig, port: int, pit_credential: str,
                  supervisor_credential: str) -> tuple[subprocess.Popen[str], str]:
    """``lowball-table console`` beside the demo, in its own process, with the pit's account
    ``pit`` and :data:`SUPERVISOR` offered for a PIN sign-in; (process, URL)."""
    from controller.console.config import write_console_config

    config = write_console_config(state_dir, loaded, port=port,
                                  accounts={"pit": ("pit", pit_credential)},
                                  supervisors={SUPERVISOR: supervisor_credential},
                                  with_pins=(SUPERVISOR,))
    process = subprocess.Popen([sys.executable, "-m", "controller.cli.main", "console", "--config",
                                str(config)], stdout=subprocess.PIPE,
                               stderr=open(state_dir / "console.log", "a", encoding="utf-8"),
                               text=True)
    line = process.stdout.readline() if process.stdout else ""
    if not line.startswith("console: "):
        process.terminate()
        raise RuntimeError(f"the console did not start (see {state_dir / 'console.log'})")
    return process, line.split()[1]


def run(args: argparse.Namespace) -> int:
    if args.floor:
        from controller.cli import floor_demo

        return floor_demo.run(args)
    if args.dealer == "human" and args.no_console:
        print("lowball-table demo: --dealer human deals on the console's screen: drop "
              "--no-console", file=sys.stderr)
        return 2
    from controller.daemon.loop import TableDaemon
    from controller.stream.live_view import LiveView
    from simulators.dealer import SimulatedDealer
    from simulators.meter import AlphaSignModel
    from simulators.pty_transport import PtyTransport
    from simulators.shoe import Lbs1ShoeModel
    from simulators.spots import SpotControllerModel

    state_dir = Path(args.state_dir or tempfile.mkdtemp(prefix="lowball-demo-"))
    state_dir.mkdir(parents=True, exist_ok=True)
    log_path = state_dir / "daemon.log"
    log_file = open(log_path, "a", encoding="utf-8")
    logs.configure(json_lines=True, stream=log_file)

    simulators: list[PtyTransport[Any]] = [
        PtyTransport(Lbs1ShoeModel(seed=args.seed), name="shoe"),
        PtyTransport(SpotControllerModel(), name="spots"),
        PtyTransport(AlphaSignModel(), name="meter")]
    for simulator in simulators:
        simulator.start()
    shoe, spots, meter = simulators
    credential = secrets.token_urlsafe(24)
    supervisor = (secrets.token_urlsafe(24), new_pin())
    stream = Stream(events=args.events, replay=args.replay, commands=args.commands,
                    table_events=args.table_events, table_replay=args.table_replay,
                    cms_events=args.cms_events or None, cms_replay=args.cms_replay or None)
    loaded = demo_config(args.game, shoe=shoe.url, spots=spots.url, meter=meter.url,
                         credential=credential, stream=stream, supervisor=supervisor)
    daemon = TableDaemon(loaded, state_dir=state_dir)
    view = LiveView(spots=loaded.config.table.spots)
    latest: dict[str, Any] = {}
    human = args.dealer == "human"
    stop = threading.Event()
    #: the hands a person dealt to the end (--dealer human)
    dealt = [0]

    def observe(records: list[JournalRecord], _events: list[Any]) -> None:  # runs in the daemon's thread
        for record in records:
            data = json.loads(record.message)["data"]  # what the stream says, cards as text
            view.event(record.seq, record.type, data)
            if human:   # the terminal is the shoe: it shows no card
                if record.type in ("hand_settled", "hand_voided"):
                    dealt[0] += 1
                    shoe.device.load(seed=None if args.seed is None else args.seed + dealt[0])
                    print(f"shoe: hand {record.hand_id} over; a fresh shuffled deck is in the "
                          f"shoe", file=sys.stderr, flush=True)
                    if args.hands is not None and dealt[0] >= args.hands:
                        stop.set()
            elif args.no_view:
                print(f"#{record.seq} {record.type} {json.dumps(data)}", flush=True)
        latest.update(snapshot=daemon.table.snapshot(), seq=records[-1].seq,
                      devices=daemon.devices.status())

    daemon.observers.append(observe)
    status = 0
    try:
        daemon.start()
    except Exception as error:  # a busy port, an unwritable state dir: say so and clean up
        print(f"lowball-table demo: cannot start the daemon: {error}", file=sys.stderr)
        for simulator in simulators:
            simulator.stop()
        return 1
    latest.update(snapshot=daemon.table.snapshot(), seq=daemon.journal.last_seq,
                  devices=daemon.devices.status())
    table_thread = threading.Thread(target=daemon.run, name="table", daemon=True)
    table_thread.start()
    console, footer = None, ""
    if not args.no_console:
        try:
            pit_credential = secrets.token_urlsafe(12)
            console, url = start_console(state_dir, loaded, args.console_port, pit_credential,
                                         supervisor[0])
            who = "you deal on it" if human else "the simulated dealer plays on it"
            footer = f"the dealer's screen: {url}   ({who})\n"
            print(f"demo: {footer}"
                  f"demo: the pit's screen: {url}pit   (sign in: name pit, credential "
                  f"{pit_credential})\n"
                  f"demo: a supervisor's sign-in: {url}supervisor   (touch {SUPERVISOR}, PIN "
                  f"{supervisor[1]}; one sign-in, one action)\n", end="", file=sys.stderr)
        except RuntimeError as error:
            if human:
                print(f"lowball-table demo: {error}: --dealer human deals on its screen",
                      file=sys.stderr)
                stop.set()
                status = 1
            else:
                print(f"demo: {error}; going on without it", file=sys.stderr)
    dealer = None if human else SimulatedDealer(
        command_endpoint=stream.commands, shoe=shoe.device, game=args.game,
        supervisor_credential=credential, seed=args.seed, pace_s=args.pace)
    worker = threading.Thread(target=deal_by_hand, args=(shoe.device, stop), name="shoe",
                              daemon=True) if dealer is None else \
        threading.Thread(target=dealer.run, args=(stop, args.hands), name="dealer",
                         daemon=True)
    print(f"demo: {args.game}; journal and log in {state_dir}; events on {stream.events}",
          file=sys.stderr)
    if human and not stop.is_set():
        print("demo: this terminal is the card shoe: Enter deals the next card (a number and "
              "Enter deals that many; q and Enter, or Ctrl-C, stops the demo)",
              file=sys.stderr, flush=True)
    if not stop.is_set():
        worker.start()
    try:
        while worker.is_alive() and not (human and stop.is_set()):
            if not args.no_view and not human:
                sys.stdout.write(view.render(latest["snapshot"], latest["devices"],
                                             latest["seq"]) + footer)
                sys.stdout.flush()
            worker.join(0.25)
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        if console is not None:
            console.terminate()
            console.wait(10)
        if dealer is not None:
            worker.join(10)
        daemon.request_stop()
        table_thread.join(10)
        daemon.close()
        for simulator in simulators:
            simulator.stop()
        log_file.close()
        played = dealt[0] if dealer is None else dealer.hands_played
        print(f"\ndemo stopped after {played} hands; journal: "
              f"{state_dir / 'journal.sqlite3'} (lowball-table journal verify --state-dir "
              f"{state_dir})", file=sys.stderr)
    return status


#: The most cards one line of the human dealer's shoe deals (a whole deck).
MAX_CARDS_PER_LINE = 52


def deal_by_hand(shoe: Any, stop: threading.Event, lines: Any = None) -> None:
    """The card shoe of ``--dealer human``: each line read from ``lines`` (standard input)
    deals: an empty line one card, a number that many (1 to :data:`MAX_CARDS_PER_LINE`);
    ``q`` or the end of input stops the demo. Whatever else is typed is answered and
    ignored."""
    lines = sys.stdin if lines is None else lines
    for line in lines:
        if stop.is_set():
            return
        typed = line.strip().lower()
        if typed in ("q", "quit"):
            break
        if typed == "":
            shoe.deal(1)
        elif typed.isdigit() and 1 <= int(typed) <= MAX_CARDS_PER_LINE:
            shoe.deal(int(typed))
        else:
            print(f"shoe: {line.strip()[:40]!r}? Enter deals one card; a number from 1 to "
                  f"{MAX_CARDS_PER_LINE} and Enter deals that many; q stops",
                  file=sys.stderr, flush=True)
    stop.set()

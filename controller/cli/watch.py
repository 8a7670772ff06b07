"""``lowball-table watch``: a live, readable view of the event stream for surveillance.

Three modes, all read-only (they only subscribe and ask the replay socket):

* **live** (default): syncs with the table (snapshot, then live events; the Clone pattern of
  :mod:`controller.stream.client`) and prints one line per event: every card with its
  recipient, every decision, every settlement (amounts as ``$1,234.56``; a seat with the player
  its record names), faults, states.
  ``--verbose`` adds lamps, meters, sensors, shoe reads and accepted commands (a card read
  while the table is paused is always shown). A gap in
  ``seq`` is filled from the replay socket and said so on screen
  (``(filled seq 120-131 from replay)``), never skipped. No heartbeat for 3 s (``--silence``)
  is shown as a warning: the table or the network is down, not quiet.
* ``--recall N``: the last N completed hands in full (and the hand in progress, if any), from
  the journal through the replay socket; works in any table state, PAUSED included.
* ``--hand ID``: one hand, step by step (a short pause between steps on a terminal).

``--json`` prints the events exactly as published (the envelope, canonical JSON), one per
line; status lines then go to stderr, so stdout stays pure JSON lines (heartbeats are not
printed). ``--count N`` stops after N events (those only ``--verbose`` shows count too),
``--timeout S`` after S seconds (exit 1 if ``--count`` was not reached); a smaller
``--timeout`` than 5 s also bounds the wait for the table to answer.

The table id is asked from the table (its snapshot names it) unless ``--table`` gives it.

Exit status: 0 done, 1 an unknown hand or a gap that could not be filled or ``--count`` not
reached in time, 2 the table could not be reached or an endpoint is malformed, 130 Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import string
import sys
import time
from collections.abc import Callable, Iterable
from typing import IO, Any

from controller.cli import Subcommands
from controller.core.money import format_cents
from controller.errors import LowballError
from controller.core.table_events import HAND_ENDS
from controller.settings.table_config import Stream

#: How long the table may be silent (no heartbeat, no event) before watch warns.
SILENCE_S = 3.0
#: Default wait for an answer from the replay socket and for the first heartbeat.
CONNECT_TIMEOUT_S = 5.0
#: Events fetched per replay request while looking back for hands.
WINDOW = 1000
#: Pause between the steps of ``--hand`` on a terminal.
STEP_PAUSE_S = 0.6
_ENDPOINT = re.compile(r"^(tcp://[^\s:/]+:(\d+|\*)|ipc://\S+|inproc://\S+)$")

#: Shown only with --verbose (live mode); recall and --hand show everything.
VERBOSE_ONLY = frozenset({"lamp_set", "meter_changed", "meter_contributed", "meter_settled",
                          "sensor_report", "shoe_card", "command_accepted"})

BOLD, DIM, RED, YELLOW, RESET = "\x1b[1m", "\x1b[2m", "\x1b[31m", "\x1b[33m", "\x1b[0m"


class WatchError(LowballError):
    """Stops the tool with a message and an exit status."""

    def __init__(self, message: str, status: int = 1):
        super().__init__(message)
        self.status = status


def register(subparsers: Subcommands, name: str, help_text: str) -> None:
    parser = subparsers.add_parser(
        name, help=help_text, description=__doc__.splitlines()[0],
        epilog="examples: lowball-table watch | lowball-table watch --json | "
               "lowball-table watch --recall 10 | lowball-table watch --hand CALI-01-000017")
    defaults = Stream()
    parser.add_argument("--connect", default=defaults.events, metavar="EVENTS_ENDPOINT",
                        help=f"the table's event (PUB) endpoint (default {defaults.events})")
    parser.add_argument("--replay", default=defaults.replay, metavar="REPLAY_ENDPOINT",
                        help=f"the table's snapshot/replay endpoint (default {defaults.replay})")
    parser.add_argument("--table", metavar="TABLE_ID",
                        help="the table id (default: asked from the table)")
    parser.add_argument("--family", choices=("surveillance", "cms"), default="surveillance",
                        help="the topic family those endpoints serve (default surveillance: "
                             "every card live; cms: cards after the hand settles)")
    parser.add_argument("--json", action="store_true",
                        help="print each event exactly as published, one JSON object a line")
    from controller.stream.security import add_client_options
    add_client_options(parser)
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="also lamps, meters, sensors, shoe reads and accepted commands")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--recall", type=_positive, metavar="N",
                      help="print the last N hands in full from the journal, then exit")
    mode.add_argument("--hand", metavar="HAND_ID", help="replay one hand step by step, then exit")
    parser.add_argument("--count", type=_positive, metavar="N", help="stop after N events")
    parser.add_argument("--timeout", type=_seconds, metavar="S", help="stop after S seconds")
    parser.add_argument("--silence", type=_seconds, default=SILENCE_S, metavar="S",
                        help=f"warn after S seconds without a heartbeat (default {SILENCE_S:g})")
    parser.set_defaults(func=run)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) == 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, not {text!r}")
    return int(text)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, not {text!r}")
    return value


# --- formatting --------------------------------------------------------------------------------

def money(cents: int) -> str:
    return format_cents(cents)


def signed(cents: int) -> str:
    """``+$25.00``, ``-$1.50``, ``$0.00``."""
    return ("+" if cents > 0 else "") + format_cents(cents)


def recipient(to: Any) -> str:
    if isinstance(to, int):
        return f"seat {to}"
    return {"community": "the community (flop)", "burn": "the burn"}.get(to, str(to))


def cards(items: Iterable[str]) -> str:
    return " ".join(items) or "-"


def seat(number: int, player: str = "") -> str:
    """``seat 3``, or ``seat 3 (P-100)`` when the record names the seat's player."""
    return f"seat {number} ({player})" if player else f"seat {number}"


def _wagers(wagers: Iterable[dict[str, Any]]) -> str:
    by_seat: dict[int, list[str]] = {}
    players: dict[int, str] = {}
    for wager in wagers:
        by_seat.setdefault(wager["seat"], []).append(f"{wager['wager']} {money(wager['amount'])}")
        players[wager["seat"]] = players.get(wager["seat"]) or wager.get("player", "")
    return "; ".join(f"{seat(number, players[number])} {', '.join(items)}"
                     for number, items in sorted(by_seat.items()))


#: The events whose phrase is their fields in a template: ``{amount:money}`` is dollars,
#: ``{net:signed}`` dollars with a sign (:class:`_Phrase`), ``{who}`` the seat with the player
#: the record names (:func:`seat`); the rest are phrased in :func:`describe`.
PHRASES: dict[str, str] = {
    "wager_settled": "SETTLED {who} {wager} {amount:money}: {result}, net {net:signed}",
    "progressive_awarded": "PROGRESSIVE {who} {award}: {amount:money}",
    "hand_settled": "HAND SETTLED: players net {players_net:signed}, house {house_result:signed}",
    "hand_started": "HAND {hand_id} started (#{number}, {game}, {paytable})",
    "wager_cancelled": "seat {spot} {wager} {amount:money} cancelled ({source})",
    "phase_started": "phase: {phase}",
    "jackpot_verified": "jackpot of hand {hand_id} verified by {by}; meter {meter:money}",
    "meter_changed": "meter {amount:money} ({reason})",
    "meter_contributed": "meter {before:money} + {contribution:money} = {after:money}",
    "meter_settled": ("meter settled {before:money} + {contributions:money} - {awards:money} + "
                      "reseed {reseed:money} = {after:money}"),
    "lamp_set": "lamp spot {spot}: {lamp}",
    "command_refused": "command {command} by {by} REFUSED: {reason}",
    "request_refused": "{family} request from {client} REFUSED: {reason}",
    "refusals_counted": ("{count} more refusals from {client} in {window_ms} ms (last: "
                         "{last_command}: {last_reason})"),
    "alarm": "ALARM {code}: {detail}",
    "hand_continued": "hand continued by {by}",
    "table_opened": "table {table_id} opened: {game}, paytable {paytable} ({paytable_status})",
    "table_closed": "table closed by {by}",
}


class _Phrase(string.Formatter):
    """Fills a template of :data:`PHRASES` from an event's data, with its own format specs."""

    SPECS: dict[str, Callable[[Any], str]] = {"money": money, "signed": signed}

    def format_field(self, value: Any, format_spec: str) -> str:
        spec = self.SPECS.get(format_spec)
        return spec(value) if spec is not None else super().format_field(value, format_spec)


_PHRASE = _Phrase()


def describe(kind: str, data: dict[str, Any]) -> str:
    """One readable phrase for an event's data (money in dollars, cards as text)."""
    d = data
    template = PHRASES.get(kind)
    if template is not None:
        if "seat" in d:
            d = {**d, "who": seat(d["seat"], d.get("player", ""))}
        text = _PHRASE.vformat(template, (), d)
        if kind == "hand_started" and d.get("dealer"):
            text += f", dealer {d['dealer']}"
        return text
    if kind == "card_dealt":
        if d["to"] == "burn":
            return f"card {d['card']} burned ({d['phase']})"
        return f"card {d['card']} to {recipient(d['to'])} ({d['phase']})"
    if kind == "decision_made":
        text = f"seat {d['seat']} decides {d['decision']}"
        if d["raised"]:
            text += f", raises {money(d['raised'])}"
        if d["cards"]:
            text += f": {cards(d['cards'])}"
        return text
    if kind == "decisions_due":
        seats = ", ".join(str(seat) for seat in d["seats"])
        return f"decision due from seat {seats}: {' | '.join(d['options'])} ({d['phase']})"
    if kind == "house_way":
        move = f"discards {cards(d['discard'])} from" if d["discard"] else "stands on"
        return f"dealer's house way: {move} {cards(d['hand'])} ({d['rule']})"
    if kind == "hand_shown":
        verb = "folded" if d["folded"] else "shows"
        return f"{recipient(d['to'])} {verb} {cards(d['cards'])}: {d['hand_class']}"
    if kind == "hand_voided":
        returned = _wagers(w for w in d["returned"])
        return (f"HAND {d['hand_id']} VOIDED by {d['by']}: {d['reason']}; returned "
                f"{returned or 'nothing'}; contributions reversed "
                f"{money(d['contributions_reversed'])}")
    if kind == "wagers_locked":
        return f"wagers locked: {_wagers(d['wagers']) or 'none'}"
    if kind == "wager_placed":
        player = f" for {d['player']}" if d["player"] else ""
        return f"seat {d['spot']} wagers {d['wager']} {money(d['amount'])}{player} ({d['source']})"
    if kind == "fault":
        how = "recoverable" if d["recoverable"] else "NOT recoverable"
        return f"FAULT {d['code']} on {d['device'] or 'table'}: {d['detail']} ({how})"
    if kind == "state_changed":
        reason = f" ({d['reason']})" if d["reason"] else ""
        return f"state {d['previous']} -> {d['state']}{reason}"
    if kind == "jackpot_pending":
        seats = ", ".join(str(seat) for seat in d["seats"])
        return (f"JACKPOT {money(d['amount'])} for seat {seats} of hand {d['hand_id']} "
                "awaits a supervisor")
    if kind == "sensor_report":
        return f"sensor spot {d['spot']}: {'covered' if d['covered'] else 'clear'}"
    if kind == "shoe_card":
        paused = " DURING A PAUSE" if d["during_pause"] else ""
        return (f"shoe read {d['card']}{paused} (card {d['count']} of the shoe, "
                f"shoe #{d['shoe_seq']}, tag {d['tag']})")
    if kind == "device_status":
        detail = f" ({d['detail']})" if d["detail"] else ""
        return f"device {d['device']}: {d['status']}{detail}"
    if kind == "device_fault":
        detail = f" ({d['detail']})" if d["detail"] else ""
        return f"device {d['device']}: FAULT {d['code']}{detail}"
    if kind == "command_accepted":
        arguments = "" if d["arguments"] in ("", "{}") else f" {d['arguments']}"
        return f"command {d['command']}{arguments} by {d['by']} ({d['role']})"
    if kind == "lock_refused":
        return f"lock REFUSED: {'; '.join(d['problems'])}"
    if kind == "config_applied":
        changed = f", changed {', '.join(d['changed'])}" if d["changed"] else ""
        return f"config {d['fingerprint'][:12]} applied ({d['reason']}){changed}"
    return f"{kind} {json.dumps(data, sort_keys=True)}"  # a type newer than this tool


def line(envelope: Any) -> str:
    """``#42  23:50:00.123Z  CALI-01-000017  card As to seat 3 (first_deal)``."""
    data = envelope.model_dump(mode="json")
    ts = data["ts"][11:23] + "Z"
    return f"#{envelope.seq:<6} {ts}  {envelope.hand_id or '-':<16} " \
           f"{describe(envelope.type, data['data'])}"


class Output:
    """Where lines go: events to stdout; notes (headers, gaps, warnings) to stdout in text
    mode and to stderr with --json, so stdout stays JSON lines. Colour only on a terminal."""

    def __init__(self, *, as_json: bool, verbose: bool, out: IO[str] = sys.stdout,
                 err: IO[str] = sys.stderr):
        self.as_json, self.verbose, self.out, self.err = as_json, verbose, out, err
        self.colour = (not as_json and out.isatty() and "NO_COLOR" not in os.environ)

    def _paint(self, text: str, style: str) -> str:
        return f"{style}{text}{RESET}" if self.colour else text

    def event(self, envelope: Any, *, verbose: bool | None = None) -> None:
        from controller.stream import wire

        if self.as_json:
            self.out.write(wire.dumps(envelope).decode() + "\n")
        else:
            during_pause = envelope.type == "shoe_card" and envelope.data.during_pause
            if envelope.type in VERBOSE_ONLY and not during_pause and \
                    not (self.verbose if verbose is None else verbose):
                return
            text = line(envelope)
            if envelope.type in ("fault", "hand_voided", "command_refused", "lock_refused",
                                 "jackpot_pending", "alarm", "request_refused",
                                 "refusals_counted"):
                text = self._paint(text, BOLD + RED)
            elif during_pause:
                text = self._paint(text, BOLD + YELLOW)
            elif envelope.type in ("hand_started", "hand_settled"):
                text = self._paint(text, BOLD)
            self.out.write(text + "\n")
        self.out.flush()

    def note(self, text: str, style: str = DIM) -> None:
        stream = self.err if self.as_json else self.out
        stream.write((text if self.as_json else self._paint(text, style)) + "\n")
        stream.flush()


# --- connecting --------------------------------------------------------------------------------

def _check_endpoint(option: str, endpoint: str) -> None:
    if not _ENDPOINT.match(endpoint):
        raise WatchError(f"bad endpoint for {option}: {endpoint!r}; expected tcp://HOST:PORT "
                         "(e.g. tcp://127.0.0.1:5555) or ipc://PATH", 2)


def _discover_table(context: Any, args: argparse.Namespace, timeout: float) -> str:
    """The table id: from a snapshot (the daemon's state names it), else from a heartbeat."""
    import zmq

    from controller.stream import wire
    from controller.stream.frames import FrameReader
    from controller.stream.security import client as curve_client

    dealer = context.socket(zmq.DEALER)
    dealer.setsockopt(zmq.LINGER, 0)
    sub = context.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    if getattr(args, "curve", None) is not None:
        curve_client(dealer, **args.curve)
        curve_client(sub, **args.curve)
    try:
        dealer.connect(args.replay)
        sub.setsockopt(zmq.SUBSCRIBE, b"")
        sub.connect(args.connect)
        dealer.send(wire.canonical_json({"request": "snapshot"}))
        if not dealer.poll(int(timeout * 1000), zmq.POLLIN):
            raise WatchError(_no_answer(args, timeout), 2)
        reply = wire.decode_reply(dealer.recv())
        table_id = reply.state.get("table_id") if isinstance(reply, wire.SnapshotReply) else None
        if isinstance(table_id, str) and table_id:
            return table_id
        deadline = time.monotonic() + timeout
        reader = FrameReader(sub, 2)    # [topic, message]: a longer one is dropped
        while sub.poll(max(0, int((deadline - time.monotonic()) * 1000)), zmq.POLLIN):
            frames = reader.receive()
            if not isinstance(frames, list) or len(frames) != 2:
                continue
            try:
                message = wire.decode(frames[1].bytes)
            except wire.WireError:
                continue
            return message.table_id
        raise WatchError(f"the table answered on {args.replay} but sent nothing on "
                         f"{args.connect} within {timeout:g} s: check --connect, or pass "
                         "--table", 2)
    finally:
        dealer.close(0)
        sub.close(0)


def _no_answer(args: argparse.Namespace, timeout: float) -> str:
    return (f"no answer from the table's replay socket {args.replay} within {timeout:g} s: "
            "is the daemon running (lowball-table run, or make run), and are --replay and "
            "--connect its stream.replay and stream.events endpoints?")


# --- the modes ---------------------------------------------------------------------------------

def run(args: argparse.Namespace, out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    import zmq

    from controller.stream import wire
    from controller.stream.client import StreamError

    output = Output(as_json=args.json, verbose=args.verbose, out=out or sys.stdout,
                    err=err or sys.stderr)
    from controller.stream.client import StreamClient

    context = zmq.Context()
    client = None
    try:
        _check_endpoint("--connect", args.connect)
        _check_endpoint("--replay", args.replay)
        from controller.stream.security import client_keys
        try:
            args.curve = client_keys(getattr(args, "key", None),
                                     getattr(args, "server_key", None))
        except ValueError as error:
            raise WatchError(str(error), 2) from None
        timeout = min(CONNECT_TIMEOUT_S, args.timeout or CONNECT_TIMEOUT_S)
        table_id = args.table or _discover_table(context, args, timeout)
        try:
            client = StreamClient(context, table_id=table_id, pub_endpoint=args.connect,
                                  replay_endpoint=args.replay,
                                  family=getattr(args, "family", "surveillance"),
                                  curve=args.curve)
        except zmq.ZMQError as error:
            raise WatchError(f"cannot connect to {args.connect} / {args.replay}: {error}", 2)
        if args.recall is not None:
            return recall(client, args, output, timeout)
        if args.hand is not None:
            return show_hand(client, args, output, timeout)
        return live(client, args, output, timeout)
    except WatchError as error:
        (err or sys.stderr).write(f"lowball-table watch: {error}\n")
        return error.status
    except StreamError as error:
        (err or sys.stderr).write(f"lowball-table watch: {error}\n")
        return 1
    except wire.WireError as error:
        (err or sys.stderr).write(f"lowball-table watch: the table sent a malformed message: "
                                  f"{error}\n")
        return 1
    except BrokenPipeError:  # `watch | head`: the reader has gone, which is not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    finally:
        if client is not None:
            client.close()
        context.destroy(linger=0)


def live(client: Any, args: argparse.Namespace, output: Output, timeout: float) -> int:
    from controller.stream.client import StreamError, StreamTimeout

    started = time.monotonic()
    end = started + args.timeout if args.timeout else None
    try:
        snapshot = client.sync(timeout=timeout)
    except StreamError as error:
        raise WatchError(_no_answer(args, timeout) if isinstance(error, StreamTimeout)
                         else str(error), 2) from None
    beat = client.await_heartbeat(timeout=max(timeout, 1.5))
    if beat is None:
        raise WatchError(f"the table answered on {args.replay} but no heartbeat of table "
                         f"{client.table_id} arrived on {args.connect}: check --connect and "
                         "--table", 2)
    state = snapshot.state
    hand = state["hand"].get("hand_id") if isinstance(state.get("hand"), dict) else None
    output.note(f"watching table {client.table_id}: state {state.get('state', beat.state)}, "
                f"seq {snapshot.seq}"
                + (f", hand {hand} in progress" if hand else "")
                + " (Ctrl-C stops)", BOLD)
    seen, last_heard, beats, silent = 0, time.monotonic(), client.heartbeats, False
    while args.count is None or seen < args.count:
        now = time.monotonic()
        if end is not None and now >= end:
            if args.count is not None:
                raise WatchError(f"only {seen} of {args.count} events within "
                                 f"{args.timeout:g} s")
            return 0
        wait = 0.5 if end is None else max(0.0, min(0.5, end - now))
        envelope = client.receive(timeout=wait)
        if client.heartbeats != beats or envelope is not None:
            beats, last_heard = client.heartbeats, time.monotonic()
            if silent:
                silent = False
                state_now = client.last_heartbeat.state if client.last_heartbeat else "?"
                output.note(f"table {client.table_id} heard again (state {state_now})", YELLOW)
        elif not silent and time.monotonic() - last_heard >= args.silence:
            silent = True
            output.note(f"WARNING: no heartbeat from table {client.table_id} for "
                        f"{args.silence:g} s: the table or the network is down", BOLD + RED)
        if envelope is None:
            continue
        while client.lost and client.lost[0].last < envelope.seq:
            lost = client.lost.popleft()
            span = f"{lost.first}" if lost.first == lost.last else f"{lost.first}-{lost.last}"
            output.note(f"WARNING: seq {span} not served by the table: {lost.reason}",
                        BOLD + RED)
        while client.archived and client.archived[0][1] < envelope.seq:
            client.archived.popleft()
        if client.archived and client.archived[0][0] == envelope.seq:
            first, last, archived = client.archived.popleft()
            output.note(f"(seq {first}-{last} from the archived journal {archived}: "
                        f"read-only, its chain verified)")
        while client.filled and client.filled[0][1] < envelope.seq:
            client.filled.popleft()
        if client.filled and client.filled[0][0] == envelope.seq:
            first, last = client.filled.popleft()
            span = f"{first}" if first == last else f"{first}-{last}"
            output.note(f"(filled seq {span} from replay)")
        output.event(envelope)
        seen += 1
    return 0


def _owner(envelope: Any) -> str | None:
    """The hand an event belongs to: the one its envelope names, or its data names
    (``jackpot_verified`` comes after its hand)."""
    return envelope.hand_id or getattr(envelope.data, "hand_id", None)


def _history(client: Any, end: int, timeout: float, enough: Callable[[list[Any]], bool],
             keep: Callable[[Any], bool] = lambda envelope: True) -> list[Any]:
    """The journaled events through seq ``end`` that ``keep`` accepts, read backwards from the
    replay socket a window at a time until ``enough(window)`` (called with each window's
    events, newest window first) or the journal's start."""
    events: list[Any] = []
    high = end
    while high > 0:
        low = max(0, high - WINDOW)
        window = client.replay(low, until=high, timeout=timeout)
        events[:0] = [envelope for envelope in window if keep(envelope)]
        high = low
        if enough(window):
            break
    return events


def _hands(events: list[Any]) -> dict[str, list[Any]]:
    """Hand id -> its events in seq order, for every hand whose start is in ``events``, in
    the order the hands started."""
    starts = [e.data.hand_id for e in events if e.type == "hand_started"]
    hands: dict[str, list[Any]] = {hand_id: [] for hand_id in starts}
    for envelope in events:
        owner = _owner(envelope)
        if owner in hands:
            hands[owner].append(envelope)
    return hands


def _ended(events: list[Any]) -> bool:
    return any(envelope.type in HAND_ENDS for envelope in events)


def _snapshot(client: Any, args: argparse.Namespace, timeout: float) -> Any:
    from controller.stream.client import StreamError, StreamTimeout

    try:
        return client.snapshot(timeout=timeout)
    except StreamError as error:
        raise WatchError(_no_answer(args, timeout) if isinstance(error, StreamTimeout)
                         else str(error), 2) from None


def net_by_seat(events: Iterable[Any]) -> dict[int, int]:
    """Each seat's net result (wager nets plus progressive awards: what ``hand_settled``'s
    ``players_net`` adds up)."""
    net: dict[int, int] = {}
    for envelope in events:
        if envelope.type == "wager_settled":
            net[envelope.data.seat] = net.get(envelope.data.seat, 0) + envelope.data.net
        elif envelope.type == "progressive_awarded":
            net[envelope.data.seat] = net.get(envelope.data.seat, 0) + envelope.data.amount
    return net


def _print_hand(hand_id: str, events: list[Any], output: Output,
                pause: Callable[[], None] | None = None) -> None:
    started = next((e for e in events if e.type == "hand_started"), None)
    end = next((e for e in events if e.type in HAND_ENDS), None)
    what = ("settled" if end.type == "hand_settled" else "VOIDED") if end is not None \
        else "IN PROGRESS"
    about = (f"#{started.data.number}, {started.data.game}, {started.data.paytable}, "
             if started is not None else "")
    output.note(f"=== hand {hand_id} ({about}{what}): {len(events)} events, seq "
                f"{events[0].seq}-{events[-1].seq} ===", BOLD)
    for index, envelope in enumerate(events):
        if pause is not None and index:
            pause()
        output.event(envelope, verbose=True)
    net = net_by_seat(events)
    players = {e.data.seat: e.data.player for e in events
               if e.type in ("wager_settled", "progressive_awarded") and e.data.player}
    if net:
        output.note("    net by seat: " + ", ".join(f"{seat(number, players.get(number, ''))} "
                                                    f"{signed(amount)}"
                                                    for number, amount in sorted(net.items())))


def recall(client: Any, args: argparse.Namespace, output: Output, timeout: float) -> int:
    """The last ``args.recall`` completed hands, and the hand in progress, in full."""
    snapshot = _snapshot(client, args, timeout)
    wanted: int = args.recall
    ended: set[str] = set()
    complete_starts = 0

    def enough(window: list[Any]) -> bool:
        # Read backwards: a hand's end is always seen before (or with) its start.
        nonlocal complete_starts
        for envelope in reversed(window):
            owner = _owner(envelope)
            if envelope.type in HAND_ENDS and owner:
                ended.add(owner)
            elif envelope.type == "hand_started" and envelope.data.hand_id in ended:
                complete_starts += 1
        return complete_starts >= wanted

    hands = _hands(_history(client, snapshot.seq, timeout, enough,
                            keep=lambda envelope: _owner(envelope) is not None))
    complete = [hand_id for hand_id, events in hands.items() if _ended(events)][-wanted:]
    order = list(hands)
    current = [order[-1]] if order and not _ended(hands[order[-1]]) else []
    state = snapshot.state.get("state", "?")
    output.note(f"table {client.table_id}: the last {len(complete)} of {wanted} hands "
                f"requested" + (f" and hand {current[0]}, in progress" if current else "")
                + f" (journal seq {snapshot.seq}, table {state})", BOLD)
    if not hands:
        output.note("no hands in the journal yet")
    for hand_id in complete + current:
        _print_hand(hand_id, hands[hand_id], output)
    return 0


def show_hand(client: Any, args: argparse.Namespace, output: Output, timeout: float) -> int:
    """All events of hand ``args.hand`` in order, paced on a terminal."""
    snapshot = _snapshot(client, args, timeout)
    hand_id = args.hand
    starts: list[str] = []   # every hand started, newest first

    def found(window: list[Any]) -> bool:
        for envelope in reversed(window):
            if envelope.type == "hand_started":
                starts.append(envelope.data.hand_id)
                if envelope.data.hand_id == hand_id:
                    return True
        return False

    events = _history(client, snapshot.seq, timeout, found,
                      keep=lambda envelope: _owner(envelope) == hand_id)
    if hand_id not in starts:
        known = (f"hands {starts[-1]} to {starts[0]} are in the journal" if starts
                 else "the journal has no hands yet")
        raise WatchError(f"no hand {hand_id!r} in the journal of table {client.table_id} "
                         f"({known})")
    tty = output.out.isatty() and not output.as_json
    _print_hand(hand_id, events, output,
                pause=(lambda: time.sleep(STEP_PAUSE_S)) if tty else None)
    return 0

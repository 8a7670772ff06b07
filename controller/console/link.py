"""The console's link to its table: one thread owns every ZeroMQ socket the console uses.

It follows the table's *table family* (:mod:`controller.stream.table_family`: what the table
shows, never a hidden card) with :class:`controller.stream.client.StreamClient` (snapshot,
then every event exactly once, gaps filled by replay), notes each event on the
:class:`~controller.console.board.Board`, and after each burst of events takes a fresh
snapshot and hands the new view to the web side. Commands from the web side are queued to
this thread and sent on the command channel by a
:class:`~controller.stream.command_client.CommandClient`, several in flight at once: each
reply comes back with its request's id, which says whose answer it is. A command not answered
in time is withdrawn by its ``request_id`` (docs/command-channel.md, section 6), and its screen
is told what the withdrawal settled: carried out, or never to be.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import structlog
import zmq

from controller.stream import wire
from controller.console.board import Board
from controller.console.recall import Alarms, Recall
from controller.stream.client import StreamClient, StreamError
from controller.stream.command_client import CommandClient, new_request_id
from controller.stream.command_replies import Refused, Reply, Withdrawn

log = structlog.get_logger("lowball.console")

#: How long the table has to answer one command.
COMMAND_TIMEOUT_S = 5.0
#: How long the table has to answer the withdrawal of commands it did not answer in time
#: (with COMMAND_TIMEOUT_S, within the screen's own wait, state.ANSWER_TIMEOUT_S).
WITHDRAW_TIMEOUT_S = 3.0
#: Commands waiting for the table at once (from all browsers together); more are refused.
MAX_IN_FLIGHT = 16
#: No heartbeat for this long: the screen says the table is not answering.
SILENCE_S = 3.0
#: At start, the events before the snapshot read to rebuild the last hand's screen and the
#: pit's recall of the last hands (about 100 hands of a full table).
LOOK_BACK = 8000
#: How long the link sleeps at most with nothing to do (it wakes at once for an event or a
#: command).
IDLE_POLL_MS = 500
#: How long the table has to answer one replay request (a gap, or the look back).
REPLAY_TIMEOUT_S = 2.0
WAKE = "inproc://console-link-wake"

Answer = Callable[[dict[str, Any]], None]
#: What a screen is told when neither the command nor its withdrawal was answered in time.
_UNSETTLED = ("the table did not answer in time, nor to the withdrawal of the command: it may "
              "still be carried out; look at the screen before trying again")


class _Pending(NamedTuple):
    request: dict[str, Any]
    answer: Answer
    deadline: float


class _Withdrawal(NamedTuple):
    """Commands not answered in time, withdrawn together: socket request id -> command."""

    commands: dict[int, _Pending]
    deadline: float


def _settled(pending: _Pending, withdrawal: Withdrawn) -> dict[str, Any]:
    """What the screen is told of a command its withdrawal settled."""
    seq = withdrawal.carried_out.get(pending.request["request_id"])
    if seq is not None:  # it was carried out, late: the screen shows its effect
        return {"ok": True, "seq": seq}
    return Refused("the table did not answer in time; the command is withdrawn: it was not "
                   "carried out").wire()


class TableLink:
    def __init__(self, *, table_id: str, spots: int, events: str, replay: str, commands: str,
                 on_view: Callable[[dict[str, Any]], None],
                 curve: dict[str, bytes] | None = None) -> None:
        self.table_id, self.spots = table_id, spots
        self.endpoints = {"events": events, "replay": replay, "commands": commands}
        self.on_view = on_view
        self.curve = curve
        self.board = Board(spots)
        self.recall = Recall()
        self.alarms = Alarms()
        self._outbox: queue.Queue[_Pending] = queue.Queue()
        self._stop = threading.Event()
        self._context = zmq.Context()
        self._wake_out = self._context.socket(zmq.PAIR)
        self._wake_out.bind(f"{WAKE}-{id(self)}")
        self._wake_lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, name="console-link", daemon=True)
        self.view: dict[str, Any] | None = None
        #: the journal's verification as the last heartbeat stated it (None before one)
        self.journal: dict[str, Any] | None = None

    # -- from any thread ------------------------------------------------------------------

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake()
        self.thread.join(10)
        self._wake_out.close(0)
        self._context.term()

    def hand_in_play(self) -> str | None:
        """The id of the hand in play as the last view showed it (None between hands)."""
        view = self.view
        return None if view is None else view.get("hand_id")

    def send(self, request: dict[str, Any], answer: Answer) -> None:
        """Queue a command for the table; ``answer`` is called (from the link's thread) with
        the table's answer, or with a refusal saying why it was not sent or not answered."""
        if self._outbox.qsize() >= MAX_IN_FLIGHT:
            answer(Refused("the console has too many commands waiting for the table; try "
                           "again").wire())
            return
        request = {**request, "request_id": new_request_id()}  # withdrawn by it if need be
        self._outbox.put(_Pending(request, answer, time.monotonic() + COMMAND_TIMEOUT_S))
        self._wake()

    def _wake(self) -> None:
        with self._wake_lock:
            self._wake_out.send(b"", zmq.NOBLOCK)

    # -- the link's thread ----------------------------------------------------------------

    def _run(self) -> None:
        wake = self._context.socket(zmq.PAIR)
        wake.connect(f"{WAKE}-{id(self)}")
        commands = CommandClient(self.endpoints["commands"], context=self._context,
                                 # room for the withdrawals of as many commands again
                                 curve=self.curve, in_flight=4 * MAX_IN_FLIGHT)
        in_flight: dict[int, _Pending] = {}
        #: withdrawals waiting for their answer, by the withdraw request's socket id
        withdrawing: dict[int, _Withdrawal] = {}
        client: StreamClient | None = None
        last_heard = time.monotonic()
        heartbeats = -1
        connected = changed = False
        #: The view just published may be older than the board: joining the stream notes the
        #: events that arrived after its snapshot, and nothing else may come to redraw the
        #: screen (a card dealt as the console joined, then a quiet table).
        behind = False
        try:
            while not self._stop.is_set():
                if client is None:
                    client = self._follow()
                    if client is None:
                        self._publish_offline()
                        self._refuse_waiting("the console cannot reach the table: nothing "
                                             "was sent")
                        self._stop.wait(1.0)
                        continue
                    connected, last_heard, behind = True, time.monotonic(), True
                    heartbeats = -1   # the new client counts its own
                # Events the stream client read while it waited for a snapshot are in its
                # buffer, not on the socket: after a snapshot, look again at once.
                ready = client.wait(0 if changed or behind else IDLE_POLL_MS, wake,
                                    commands.socket)
                if wake in ready:
                    while wake.poll(0):
                        wake.recv()
                if not connected:   # no heartbeat for SILENCE_S: the table is not answering
                    self._refuse_waiting("the table is not answering: nothing was sent")
                while len(in_flight) < MAX_IN_FLIGHT:
                    try:
                        pending = self._outbox.get_nowait()
                    except queue.Empty:
                        break
                    if time.monotonic() > pending.deadline:
                        pending.answer(Refused("the table could not be asked in time: nothing "
                                               "was sent").wire())
                        continue
                    in_flight[commands.send(pending.request)] = pending
                while (in_flight or withdrawing) and (got := commands.receive()) is not None:
                    self._answer(*got, in_flight, withdrawing)
                self._withdraw_late(commands, in_flight, withdrawing)
                changed, behind = behind, False
                try:
                    while (envelope := client.receive(0, replay_timeout=REPLAY_TIMEOUT_S)) is not None:
                        self._note(envelope)
                        changed = True
                    if client.heartbeats != heartbeats:
                        heartbeats, last_heard = client.heartbeats, time.monotonic()
                        changed |= self._note_journal(client.last_heartbeat)
                    silent = time.monotonic() - last_heard > SILENCE_S
                    if silent and connected:
                        connected = False
                        self._publish_offline()
                    elif changed or (not silent and not connected):
                        connected = changed = True
                        snapshot = client.snapshot()
                        self._publish(snapshot.state, snapshot.seq, connected)
                except StreamError as error:
                    log.warning("the table's stream failed; following it again", error=str(error))
                    client.close()
                    client, connected = None, False
        finally:
            if client is not None:
                client.close()
            commands.close()
            wake.close(0)
            for pending in [*in_flight.values(), *self._outbox.queue]:
                pending.answer(Refused("the console is stopping").wire())
            for withdrawal in withdrawing.values():
                for pending in withdrawal.commands.values():
                    pending.answer(Refused(_UNSETTLED).wire())

    @staticmethod
    def _answer(request_id: int, reply: Reply, in_flight: dict[int, _Pending],
                withdrawing: dict[int, _Withdrawal]) -> None:
        """Hand a reply to whoever waits for it: a command's screen, or the screens of the
        commands a withdrawal settled (a command's own late reply settles it as well)."""
        if (answered := in_flight.pop(request_id, None)) is not None:
            answered.answer(reply.wire())
            return
        if (withdrawal := withdrawing.pop(request_id, None)) is not None:
            for pending in withdrawal.commands.values():
                pending.answer(_settled(pending, reply) if isinstance(reply, Withdrawn)
                               else Refused(_UNSETTLED).wire())
            return
        for withdrawal in withdrawing.values():
            if (late := withdrawal.commands.pop(request_id, None)) is not None:
                late.answer(reply.wire())
                return

    @staticmethod
    def _withdraw_late(commands: CommandClient, in_flight: dict[int, _Pending],
                       withdrawing: dict[int, _Withdrawal]) -> None:
        """Withdraw the commands not answered in time (the daemon may hold them still: a
        slow disk), and give up on withdrawals not answered in time either."""
        now = time.monotonic()
        late = {request_id: pending for request_id, pending in in_flight.items()
                if now > pending.deadline}
        if late:
            for request_id in late:
                del in_flight[request_id]
            try:
                asked = commands.send({"command": "withdraw", "requests": [
                    pending.request["request_id"] for pending in late.values()]})
            except zmq.Again:  # the table reads nothing at all: nothing settles them now
                for pending in late.values():
                    pending.answer(Refused(_UNSETTLED).wire())
            else:
                withdrawing[asked] = _Withdrawal(late, now + WITHDRAW_TIMEOUT_S)
        for asked, withdrawal in list(withdrawing.items()):
            if now > withdrawal.deadline:
                del withdrawing[asked]
                for pending in withdrawal.commands.values():
                    pending.answer(Refused(_UNSETTLED).wire())

    def _refuse_waiting(self, why: str) -> None:
        """Answer every command still waiting to be sent, without sending it: a command the
        screen was told had failed must never reach the table later."""
        while True:
            try:
                self._outbox.get_nowait().answer(Refused(why).wire())
            except queue.Empty:
                return

    def _follow(self) -> StreamClient | None:
        """Join the stream: the events of the last hand first (to rebuild its screen), then
        the snapshot and everything after it."""
        client = StreamClient(self._context, table_id=self.table_id,
                              pub_endpoint=self.endpoints["events"],
                              replay_endpoint=self.endpoints["replay"], family=wire.TABLE,
                              curve=self.curve)
        try:
            latest = client.snapshot(timeout=2.0)
            self.board, self.recall = Board(self.spots), Recall()
            snapshot = client.sync(replay_from=max(0, latest.seq - LOOK_BACK), timeout=2.0)
            while (envelope := client.receive(0, replay_timeout=REPLAY_TIMEOUT_S)) is not None:
                self._note(envelope)
            self._publish(snapshot.state, snapshot.seq, True)
            return client
        except StreamError as error:
            log.warning("the table does not answer", error=str(error))
            client.close()
            return None

    def _note(self, envelope: wire.EnvelopeBase) -> None:
        data = json.loads(wire.dumps(envelope))
        kind, ts = data["type"], data["ts"]
        self.board.note(envelope.seq, kind, envelope.hand_id, data["data"])
        self.recall.note(envelope.seq, kind, envelope.hand_id, ts, data["data"])
        self.alarms.note(envelope.seq, kind, ts, data["data"])

    def _note_journal(self, beat: wire.Heartbeat | None) -> bool:
        """The journal's verification as the table's heartbeat states it; whether it is news
        for the screens. A broken chain is an alarm too."""
        if beat is None:
            return False
        journal = {"verified_at_start": beat.journal_verified_at_start,
                   "verified_through": beat.journal_verified_through,
                   "broken_at": beat.journal_broken_at}
        if beat.journal_broken_at is not None:
            self.alarms.journal_broken(beat.journal_broken_at, wire.format_ts(beat.ts))
        if journal == self.journal:
            return False
        self.journal = journal
        return True

    def _publish(self, state: dict[str, Any], seq: int, connected: bool) -> None:
        self.view = self.with_pit(self.board.view(state, seq, connected=connected))
        self.on_view(self.view)

    def with_pit(self, view: dict[str, Any]) -> dict[str, Any]:
        """The view with what the pit shows too: the alarms and the last hands."""
        return {**view, "alarms": self.alarms.all(), "recall": self.recall.hands(),
                "journal": self.journal}

    def _publish_offline(self) -> None:
        if self.view is not None and self.view["connected"]:
            self.view = {**self.view, "connected": False, "actions": []}
            self.on_view(self.view)

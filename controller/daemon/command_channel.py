"""The command channel: the socket dealers, supervisors and consoles send requests to.

A ZeroMQ ROUTER. Each message's last frame is the request, one JSON object (the requests are
:mod:`controller.stream.table_commands`); the frames before it are the envelope, sent back as
they came with the reply (:mod:`controller.stream.command_replies`), so a REQ client (an
empty delimiter) and a DEALER client (its own request id, then the delimiter) both get the
reply to the request they sent. docs/command-channel.md is the protocol as a client sees it.

This module keeps the transport, the caps and the roles; a request is read by the stream
layer (:mod:`controller.stream.command_requests`: the JSON, the keys every request may carry,
text hygiene; :mod:`controller.stream.table_commands`: the command's model). What a request
meets, in order:

* size: a frame over :data:`MAX_COMMAND_FRAME_BYTES` never arrives (the transport closes the
  connection); a message of more than :data:`MAX_COMMAND_FRAMES` frames is read to its end a
  bounded number of frames a turn, dropped and refused; a request over
  :data:`MAX_COMMAND_BYTES` is refused, saying how long it was;
* JSON (read by the stream layer): UTF-8, no ``NaN``, no lone surrogate, an object;
* the credential: one typed anywhere but ``credential`` (alone or within a longer text, as a
  key or a value, at any depth) refuses the request whole; a wrong one is refused and counted
  towards the alarm (:class:`CredentialWatch`); a right one makes the role ``supervisor``
  and, for a per-supervisor credential, the name journaled. The shared credential cannot sign
  as a configured supervisor (a ``by`` naming one is refused); what signed a command (none,
  shared, own) and the client's transport identity are journaled with it;
* ``request_id``: the client's id for the request; a request withdrawn (``withdraw``) or
  already carried out under its id is refused (:mod:`controller.daemon.withdrawals`);
* ``by``: printable ASCII; every other text: readable (no control, format or separator
  character);
* the command: parsed by its model, then carried out by the table (or ``reload`` by the
  daemon); ``status`` only reads.

Every request is answered and never ends the daemon. A refusal is journaled in full or
counted (:class:`controller.daemon.refusal_ledger.RefusalLedger`); while the journal is broken
nothing is journaled and every command but ``status`` is refused.

The turn budget: the daemon's loop serves at most :data:`MAX_COMMANDS_PER_TURN` requests, for
at most :data:`TURN_BUDGET_S`, and one only while a device report waits (:meth:`serve_turn`). It
reads every request waiting first (up to :data:`MAX_WAITING`) and answers the withdrawals
among them before any command.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections import deque
from enum import StrEnum
from typing import TYPE_CHECKING, Any, cast

import zmq

from controller.core import vocabulary
from controller.core.cards import DECK
from controller.core.commands import AcknowledgeAlarm
from controller.core.player_key import lookalike_keys
from controller.core.table_events import CommandAccepted, CommandRefused, LockRefused
from controller.daemon.chain_watch import TableHeld
from controller.daemon.pin_locks import FAILURES as PIN_FAILURES
from controller.daemon.pin_locks import PinLocks
from controller.daemon.refusal_ledger import CredentialWatch
from controller.daemon.withdrawals import RECALLED_RECORDS, TooManyWithdrawals, Withdrawals
from controller.settings.pins import is_pin, pin_matches
from controller.settings.validation import InputError
from controller.stream.command_replies import (
    Accepted,
    Refused,
    Reply,
    Status,
    Withdrawn,
    encode,
)
from controller.stream import command_requests as requests
from controller.stream.command_requests import COMMAND_FIELDS, WITHDRAW, is_withdrawal, texts
from controller.stream.frames import FrameReader, TooManyFrames, send_whole
from controller.stream.security import COMMANDS_DOMAIN, StreamSecurity, bind
from controller.stream.table_commands import (
    COMMANDS,
    DEALER_ROLE,
    SUPERVISOR_ROLE,
    name_of,
    parse_command,
    parse_withdraw,
    refused_arguments,
)
from controller.stream.transport_identity import LOCAL_CLIENT, client_of

if TYPE_CHECKING:
    from controller.daemon.loop import TableDaemon

#: Requests that only read (answered, not journaled).
QUERIES = ("status",)
#: The longest request the table reads: a longer one is refused, saying so.
MAX_COMMAND_BYTES = 4096
#: The longest frame the socket's transport takes at all: ZeroMQ closes the connection of a
#: client that sends more, without delivering it (so it cannot be answered).
MAX_COMMAND_FRAME_BYTES = 64 * 1024
#: The most frames a request has as the daemon reads it: the client's routing id, the
#: envelope (a REQ's delimiter; a DEALER's request id and delimiter; a proxy's hops), the
#: request. One with more is read to its end a bounded number of frames a turn
#: (:mod:`controller.stream.frames`), dropped, and refused.
MAX_COMMAND_FRAMES = 8
#: One loop turn serves at most this many requests, for at most this long, before it goes
#: back to the devices, the heartbeat and the watchdog: no client can hold a card back for
#: longer than one turn.
MAX_COMMANDS_PER_TURN = 32
TURN_BUDGET_S = 0.02
#: Requests read off the socket and held to be served in later turns, at most: every request
#: waiting is read before any is served, so a withdrawal is seen before the command it names.
MAX_WAITING = 256
#: Withdrawals answered in one turn, at most (each answered as it is read): a client sending
#: them without end cannot keep the loop from the devices. A withdrawal left unread past a
#: command already read (a flood past MAX_DEFERRED_TURNS) is answered truly when it is read:
#: carried out, with the seq.
MAX_WITHDRAWALS_PER_TURN = 32
#: Turns in a row the commands read wait while the socket is not read to its end (other
#: clients' withdrawals past MAX_WITHDRAWALS_PER_TURN, a message of too many frames being
#: dropped): a withdrawal behind them is read before its command is carried out, and a flood
#: delays the table's commands by this many turns at most, never for good.
MAX_DEFERRED_TURNS = 16
BAD_CREDENTIAL = "the supervisor credential is not valid"
MISPLACED_CREDENTIAL = ("the supervisor credential was sent outside \"credential\": the command "
                        "is refused and none of it is kept; change the credential, it may "
                        "have been seen")
#: The pieces of a text that could be a credential typed into it: ``lowball-table credential``
#: makes URL-safe ones (letters, digits, ``-``, ``_``); any other is found as a whole text or
#: a word between spaces, with or without the punctuation around it.
_CREDENTIAL_LIKE = re.compile(r"[A-Za-z0-9_-]+")
_PUNCTUATION = "\"'`.,;:!?()[]{}<>"
#: What signed a command, as journaled (``command_accepted``'s ``credential``).
NO_CREDENTIAL, SHARED_CREDENTIAL, OWN_CREDENTIAL, PIN_CREDENTIAL = "none", "shared", "own", "pin"
#: The words every request is made of (the protocol's keys, its command names, the values of
#: its vocabularies, the cards): public, so each is checked against the credentials once
#: (:meth:`CommandChannel._credential_misplaced`), not in every request that holds it.
_PUBLIC_WORDS = COMMAND_FIELDS | frozenset(COMMANDS) | frozenset(
    member.value for enum in vars(vocabulary).values()
    if isinstance(enum, type) and issubclass(enum, StrEnum) and enum is not StrEnum
    for member in enum) | frozenset(str(card) for card in DECK) | {DEALER_ROLE, SUPERVISOR_ROLE}


#: ``zmq.POLLIN`` as a plain int: the flag enum's ``&`` costs more than the question it asks.
_POLLIN = int(zmq.POLLIN)


def _candidates(text: str) -> set[str]:
    """The pieces of ``text`` that could be a credential (:data:`_CREDENTIAL_LIKE`)."""
    words = text.split()
    return {text.strip(), *words, *(word.strip(_PUNCTUATION) for word in words),
            *_CREDENTIAL_LIKE.findall(text)}


def _holds_credential(pieces: set[str], digests: frozenset[str]) -> bool:
    """Whether one of ``pieces`` hashes to one of the credentials' ``digests``."""
    # A set lookup, not a constant-time compare: what its time could tell is a prefix of
    # a SHA-256 of what the client sent, which says nothing of any credential.
    return any(hashlib.sha256(piece.encode("utf-8", "surrogatepass")).hexdigest() in digests
               for piece in pieces)


#: Printable ASCII a name may hold that draws a letter a player id's key does not cover.
_NAME_LOOKALIKES = str.maketrans({"|": "l"})


def _name_keys(name: str) -> tuple[str, ...]:
    """A name as compared with a supervisor's: case, spacing and lookalike letters (capital I
    for l, rn for m, vv for w, cl for d, | for l, another script's, capitals) do not tell two
    apart: the players' lookalike keys (TR39 and more), and the name case-folded (a name may
    hold what an id may not)."""
    spaced = " ".join(name.split())
    return spaced.casefold(), *lookalike_keys(spaced.translate(_NAME_LOOKALIKES))


def _refused(reason: str, name: str = "?", arguments: str = "", by: str = "?",
             role: str = DEALER_ROLE) -> list[Any]:
    return [CommandRefused(name, arguments, by, role, reason)]


class CommandChannel:
    """The daemon's command socket and the answers to what arrives on it. It runs on the
    daemon's thread and acts through the daemon (its table, journal, devices and clock)."""

    def __init__(self, daemon: TableDaemon) -> None:
        self.daemon = daemon
        self.socket: zmq.Socket[bytes] | None = None
        #: whether the socket is a CURVE server (its clients are named by their keys)
        self._curve = True
        self.credentials = CredentialWatch()
        self.pins = PinLocks()
        #: (the credentials' digests, the public words that hold none of them)
        self._public: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
        self.withdrawals = Withdrawals()
        self._recalled = False
        #: Requests read off the socket, not yet served: (envelope, payload frame).
        self._waiting: deque[tuple[list[bytes], zmq.Frame]] = deque()
        #: turns in a row the commands read waited for the rest of the socket to be read
        self._deferred = 0
        self._reader: FrameReader | None = None

    @property
    def pending(self) -> bool:
        """Whether requests read off the socket wait to be served (the loop then comes back
        at once, without waiting for the socket)."""
        return bool(self._waiting)

    def bind(self, context: zmq.Context[Any], security: StreamSecurity, endpoint: str) -> None:
        socket = self.socket = context.socket(zmq.ROUTER)
        self._curve = security.enabled
        socket.setsockopt(zmq.LINGER, 0)
        socket.setsockopt(zmq.MAXMSGSIZE, MAX_COMMAND_FRAME_BYTES)
        self._reader = FrameReader(socket, MAX_COMMAND_FRAMES)
        security.server(socket, COMMANDS_DOMAIN)
        bind(socket, endpoint)
        self._recall()  # before the first request, not while a card waits behind it

    def close(self) -> None:
        if self.socket is not None:
            self.socket.close(0)

    def serve_turn(self) -> None:
        """Serve the requests waiting, within one turn's budget (at most
        :data:`MAX_COMMANDS_PER_TURN`, at most :data:`TURN_BUDGET_S`, and one only while a
        device report waits): then the loop goes back to the devices, the heartbeat and the
        watchdog, and serves the rest next turn. A card therefore waits for one request at
        most, and a device backlog (a turn's worth of reports) never starves a command. The
        ROUTER queues each client's requests apart and takes them in turn, so one client's
        flood of commands delays another's request by one turn at most (a flood of
        withdrawals, or of too many frames, by :data:`MAX_DEFERRED_TURNS` at most: below).

        Every request waiting on the socket is read first (up to :data:`MAX_WAITING` held),
        and the withdrawals among them are answered before any command: a command its client
        gave up on and withdrew is refused, however late the daemon comes to it. While the
        socket cannot be read to its end in one turn, the commands read wait (at most
        :data:`MAX_DEFERRED_TURNS` turns in a row), so a withdrawal behind other clients'
        traffic still comes first."""
        socket, reports, clock = self.socket, self.daemon.devices.reports, self.daemon.clock
        assert socket is not None
        deadline = clock() + TURN_BUDGET_S
        if not self._read_waiting(socket) and len(self._waiting) < MAX_WAITING \
                and self._deferred < MAX_DEFERRED_TURNS:
            self._deferred += 1
            return
        self._deferred = 0
        served = 0
        while self._waiting and served < MAX_COMMANDS_PER_TURN:
            if served and not reports.empty():
                return  # a card or a device report waits: it goes first
            envelope, payload = self._waiting.popleft()
            client = client_of(payload, self._curve)
            self._reply(socket, envelope, self.answer(payload.bytes, client))
            served += 1
            if clock() >= deadline:
                return

    def _read_waiting(self, socket: zmq.Socket[bytes]) -> bool:
        """Read the requests waiting on the socket into :attr:`_waiting`, answering each
        withdrawal at once (it is cheap and journals nothing); whether the socket was read to
        its end."""
        reader = self._reader
        assert reader is not None
        withdrawals, first = 0, True
        while len(self._waiting) < MAX_WAITING and withdrawals < MAX_WITHDRAWALS_PER_TURN:
            # Ask the socket whether a request waits before each read but the first: a read of
            # an empty socket raises zmq.Again, which costs more than the question, but the
            # question costs libzmq a poll of its mailbox, and the loop comes here mostly
            # when its poll has just found a request waiting.
            if not first and not cast(int, socket.get(zmq.EVENTS)) & _POLLIN:
                return True
            first = False
            frames = reader.receive()
            if frames is None:  # none waits, or one too long is being dropped: next turn
                return not cast(int, socket.get(zmq.EVENTS)) & _POLLIN
            if isinstance(frames, TooManyFrames):
                self._refuse_frames(socket, frames)
                continue
            envelope, payload = [frame.bytes for frame in frames[:-1]], frames[-1]
            if is_withdrawal(payload.bytes, MAX_COMMAND_BYTES):
                client = client_of(payload, self._curve)
                self._reply(socket, envelope, self.answer(payload.bytes, client))
                withdrawals += 1
            else:
                self._waiting.append((envelope, payload))
        return not cast(int, socket.get(zmq.EVENTS)) & _POLLIN

    def _refuse_frames(self, socket: zmq.Socket[bytes], message: TooManyFrames) -> None:
        """Refuse a message of more frames than a request has (read to its end and dropped),
        journaled as any refusal is; the reply goes to its client as to a REQ (the routing id,
        the delimiter): which of its frames were an envelope nobody can tell."""
        client = client_of(message.kept[0], self._curve)
        reason = (f"a request is at most {MAX_COMMAND_FRAMES} frames (the envelope, then the "
                  f"request); this message had {message.frames}: nothing of it was read")
        reply = self._settle(_refused(reason), client)
        if not (isinstance(reply, Refused) and reply.counted):  # logged as often as journaled
            self.daemon.log.warning("command refused", reason=reason, client=client)
        self._reply(socket, [message.kept[0].bytes, b""], reply)

    def _reply(self, socket: zmq.Socket[bytes], envelope: list[bytes], reply: Reply) -> None:
        try:
            send_whole(socket, [*envelope, encode(reply)])
        except zmq.ZMQError as error:  # the client went away: its command still stands
            self.daemon.log.warning("command reply not delivered", error=str(error))

    def _recall(self) -> None:
        """Read the ids of the commands journaled lately, once (the journal outlives the
        daemon's memory: a withdrawal after a restart is still answered true)."""
        if self._recalled:
            return
        self._recalled = True
        journal = self.daemon.journal
        try:
            # Only records the start-up check verified tell what was carried out: past them
            # may lie another process's, appended before the running check holds the table
            # (_uncertain answers no withdrawal once it does).
            chain = self.daemon.chain
            end = journal.last_seq if chain is None else chain.verified_at_start
            self.withdrawals.recall(record for record in journal.recalled(RECALLED_RECORDS)
                                    if record.seq <= end)
        except Exception:  # a broken journal: the table is held, nothing is carried out
            self.daemon.log.exception("request ids not recalled from the journal")

    def answer(self, payload: bytes, client: str = LOCAL_CLIENT) -> Reply:
        """The reply to one request; always answers, never raises (but for the journal
        failing: then the table cannot go on, see :meth:`TableDaemon.apply`; a write refused
        by a broken journal is answered as held)."""
        try:
            outcome = self._outcome(payload, client)
        except Exception as error:  # a fault serving one request must not end the table
            self.daemon.log.exception("command failed", client=client)
            outcome = _refused(f"the controller could not serve this command "
                               f"({type(error).__name__}); nothing was carried out")
        return self._settle(outcome, client)

    def _settle(self, outcome: Status | Refused | Withdrawn | list[Any], client: str) -> Reply:
        """The reply to an outcome: a query's answer or an unjournaled refusal as it is, the
        events of a command (or its refusal) journaled first."""
        if isinstance(outcome, (Status, Refused, Withdrawn)):
            return outcome
        try:
            return self._journaled(outcome, client)
        except TableHeld as held:  # its write found the journal broken: nothing carried out
            return Refused(str(held))

    def _outcome(self, payload: bytes,
                 client: str) -> Status | Refused | Withdrawn | list[Any]:
        """A query's answer, a refusal nothing may journal, or the events a command causes
        (the first is its record)."""
        daemon = self.daemon
        if len(payload) > MAX_COMMAND_BYTES:
            return _refused(f"a command is at most {MAX_COMMAND_BYTES} bytes; this one is "
                            f"{len(payload)}")
        try:
            request = requests.decode(payload)
            name = name_of(request)
            if self._credential_misplaced(request):
                return _refused(MISPLACED_CREDENTIAL, name)
            by = requests.take_by(request)
            credential = request.pop("credential", None)
            asked_from = requests.take_asked_from(request, by)
            if request.get("command") == WITHDRAW:
                return self._withdraw(request, name, by, client)
            request_id = requests.take_request_id(request, by)
        except requests.RequestRefused as refused:
            return _refused(refused.reason, refused.name, refused.arguments, refused.by)
        if request.get("command") in QUERIES:
            if len(request) > 1:
                return _refused(f"'{request['command']}' takes no arguments", "?",
                                refused_arguments(request), by)
            # the table's side: what the table shows (controller.core.hidden_cards), whoever
            # asks; surveillance reads every card on its own stream
            return Status(daemon.table.snapshot(table_side=True), daemon.journal.last_seq,
                          daemon.devices.status(), daemon.journal_status(table_side=True))
        if (held := daemon.held_reason()) is not None:  # nothing is journaled: it is evidence
            daemon.log.warning("command refused", command=name, reason=held, by=by)
            return Refused(held)
        role, signed = DEALER_ROLE, NO_CREDENTIAL
        if credential is not None:
            pin = is_pin(credential)
            if pin:
                supervisor, refusal = self._pin_supervisor(credential, by)
                if supervisor is None:
                    return _refused(refusal, name, "", by, SUPERVISOR_ROLE)
            else:
                supervisor = self._supervisor(credential)
            if supervisor is None:
                return _refused(BAD_CREDENTIAL, name, "", by, SUPERVISOR_ROLE)
            if supervisor == "" and (named := self._named_supervisor(by)) is not None:
                # The audit reads by as who acted: only her own credential signs as her.
                return _refused(f"by: '{named}' is a supervisor with her own credential; "
                                f"the table's shared credential cannot sign as her", name, "",
                                by, SUPERVISOR_ROLE)
            role, by = SUPERVISOR_ROLE, supervisor or by
            signed = PIN_CREDENTIAL if pin else OWN_CREDENTIAL if supervisor \
                else SHARED_CREDENTIAL
        if (where := requests.unreadable_text(request)) is not None:
            return _refused(f"{where}: a control, format or separator character (NUL, a "
                            f"newline, a bidirectional override, a zero-width space) is not "
                            f"text a command may carry", name, "", by, role)
        try:
            command = parse_command(request)
        except InputError as error:
            # A supervisor command without the credential says so first, whatever else is
            # wrong with it.
            kind = COMMANDS.get(name)
            needs = [f"'{name}' needs the supervisor credential"] \
                if kind is not None and kind.supervisor_only and role != SUPERVISOR_ROLE else []
            return _refused("; ".join([*needs, *error.problems]), name,
                            refused_arguments(request), by, role)
        if request_id is not None:
            self._recall()
            if (why := self.withdrawals.refusal(request_id)) is not None:
                return _refused(why, name, command.arguments(), by, role)
        if command.command == "reload":
            events = daemon.reload(by, role)
        elif isinstance(command, AcknowledgeAlarm):
            events = daemon.acknowledge_alarm(command, by, role)
        else:
            events = daemon.table.command(command, by, role)
        if events and type(events[0]) is CommandAccepted:
            events[0] = events[0]._replace(credential=signed, client=client,
                                           request_id=request_id or "", asked_from=asked_from)
        return events

    def _withdraw(self, request: dict[str, Any], name: str, by: str,
                  client: str) -> Refused | Withdrawn | list[Any]:
        """A ``withdraw``: each request it names answered carried out or withdrawn."""
        try:
            withdraw = parse_withdraw(request)
        except InputError as error:
            return _refused("; ".join(error.problems), name, "", by)
        self._recall()
        if (uncertain := self._uncertain()) is not None:
            return _refused(uncertain, name, "", by)
        try:
            done, withdrawn = self.withdrawals.withdraw(withdraw.requests, client,
                                                        self.daemon.clock())
        except TooManyWithdrawals as error:
            return _refused(str(error), name, "", by)
        self.daemon.log.info("requests withdrawn", by=by, client=client, carried_out=done,
                             withdrawn=withdrawn)
        return Withdrawn(done, withdrawn)

    def _uncertain(self) -> str | None:
        """Why a withdrawal cannot be answered: the table is held and its journal holds
        records past the ones verified. Any of them may be a request's command, and any
        record before them may be another process's (a chain recomputed from seq 1 verifies
        as well as the daemon's): neither "carried out" nor "withdrawn" can be told."""
        daemon, chain = self.daemon, self.daemon.chain
        if daemon.journal_broken is None or chain is None:
            return None
        verified, stored = chain.verified_through, daemon.journal.stored_end()
        if type(stored) is int and stored <= verified:
            return None  # every record the file holds from the first on was verified
        return (f"the table is held and its journal holds records past seq {verified} that "
                f"were not verified: whether a request was carried out cannot be told from "
                f"it (a supervisor reads the journal: lowball-table journal show)")

    def _journaled(self, events: list[Any], client: str) -> Reply:
        """Journal what a command caused and say so. A refusal is journaled in full, or
        counted when its client was already refused in this window (see
        :mod:`controller.daemon.refusal_ledger`)."""
        daemon = self.daemon
        first, now = events[0], daemon.clock()
        refused = type(first) is CommandRefused
        if (held := daemon.held_reason()) is not None:  # nothing is journaled: it is evidence
            return Refused(first.reason if refused else held)
        if refused:
            alarms = self.credentials.failed(client, now) \
                if first.reason == BAD_CREDENTIAL else []
            journaled, counts = daemon.refusals.admit(client, first.command, first.reason, now)
            for event in [*counts, *alarms]:
                daemon.apply([event])
            if not journaled:
                return Refused(first.reason, counted=True)
        records = daemon.apply(events)
        if refused:
            return Refused(first.reason, seq=records[0].seq)
        if type(first) is CommandAccepted and first.request_id:
            self.withdrawals.carried_out(first.request_id, records[0].seq, client)
        problems = [p for e in events if type(e) is LockRefused for p in e.problems]
        if problems:
            return Refused("; ".join(problems), seq=records[-1].seq)
        return Accepted(records[-1].seq, daemon.table.state,
                        daemon.table.expecting(table_side=True))

    def _credential_misplaced(self, request: dict[str, Any]) -> bool:
        """Whether a supervisor credential is in a key or a text value of ``request``, at any
        depth, anywhere but under ``credential`` (a supervisor who typed it into ``by``, a
        reason or a player's name, alone or with other words): such a command is refused
        whole, since what a refusal keeps is journaled and published. The daemon holds only
        the credentials' hashes, so every piece of every text that could be one
        (:func:`_candidates`) is hashed and compared."""
        security = self.daemon.loaded.config.security
        digests = frozenset(digest for digest in (security.supervisor_credential_sha256,
                                                  *security.supervisors.values())
                            if digest is not None)
        if not digests:
            return False
        public = self._public_words(digests)
        candidates = {piece for text in texts(request) if text not in public
                      for piece in _candidates(text) if 0 < len(piece) <= 256}
        return _holds_credential(candidates, digests)

    def _public_words(self, digests: frozenset[str]) -> frozenset[str]:
        """The :data:`_PUBLIC_WORDS` none of whose pieces is a credential: a text that is one
        of them needs no hashing (whether a text is public says nothing of a secret)."""
        known, words = self._public
        if known != digests:
            words = frozenset(word for word in _PUBLIC_WORDS
                              if not _holds_credential(_candidates(word), digests))
            self._public = (digests, words)
        return words

    def _named_supervisor(self, by: str) -> str | None:
        """The configured supervisor ``by`` names (whatever its case and spacing), or None."""
        wanted = _name_keys(by)
        return next((name for name in self.daemon.loaded.config.security.supervisors
                     if any(map(str.__eq__, _name_keys(name), wanted))), None)

    def _pin_supervisor(self, pin: str, by: str) -> tuple[str | None, str]:
        """Whose PIN this is: the supervisor ``by`` names, if it is her PIN (and her PIN is
        not locked); else None and why. A wrong PIN counts towards her PIN's lock
        (:class:`controller.daemon.pin_locks.PinLocks`) and, as any wrong credential,
        towards the alarm."""
        security = self.daemon.loaded.config.security
        named = self._named_supervisor(by)
        stored = security.supervisor_pins.get(named) if named is not None else None
        if named is None or stored is None:
            return None, BAD_CREDENTIAL
        now = self.daemon.clock()
        if wait := self.pins.locked_for(named, now):
            return None, (f"{named}'s PIN is locked for {int(wait) + 1} s after "
                          f"{PIN_FAILURES} wrong PINs; her credential still signs")
        if not pin_matches(pin, stored):
            self.pins.failed(named, now)
            return None, BAD_CREDENTIAL
        self.pins.succeeded(named)
        return named, ""

    def _supervisor(self, credential: Any) -> str | None:
        """Whose credential this is: a supervisor's name (``[security.supervisors]``), ``""``
        for the table's shared supervisor credential, None for no valid credential. Every
        hash is compared, so the time taken says nothing about which one matched."""
        security = self.daemon.loaded.config.security
        if not isinstance(credential, str) or len(credential) > 256:
            return None
        digest = hashlib.sha256(credential.encode("utf-8")).hexdigest()
        found = None
        for supervisor, expected in [("", security.supervisor_credential_sha256),
                                     *security.supervisors.items()]:
            if expected is not None and hmac.compare_digest(digest, expected):
                found = supervisor
        return found

"""The one client of the command channel: ``lowball-table dealer``, the console, the simulated
dealer and the benchmarks all send their requests through :class:`CommandClient`.

It talks to the daemon's ROUTER from a DEALER socket. Each request goes out as three frames,
``[request id, empty delimiter, JSON]``; the daemon sends the envelope back with the reply
(docs/command-channel.md), so every reply is matched to its request by id: a late reply (to a
request that timed out) is never taken for the answer to a later one, and requests may be
pipelined (the console keeps several in flight; the flood benchmark thousands).

Every command goes out with a ``request_id`` of its own (a random UUID). A command not
answered in time is withdrawn (``withdraw``, on the same socket, right behind it): the daemon
reads every request waiting before it serves any and answers withdrawals first, so the answer
settles the command for good: carried out (and the seq of its record), or withdrawn, never to
be carried out, however late the daemon comes to it. :class:`CommandTimeout` says which; only
when the withdrawal is not answered either is it unknown, and then the caller withdraws it
again (:meth:`CommandClient.withdraw`) before giving it again, never the other way round.
Nothing is resent unless asked (``retries``), and only ``status`` may be.

Replies are typed (:mod:`controller.stream.command_replies`).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

import zmq
from pydantic import BaseModel

from controller.core.commands import Command
from controller.errors import LowballError
from controller.stream.command_replies import Reply, Withdrawn, decode
from controller.stream.security import client as curve_client

#: How long a request waits for its reply unless told otherwise.
DEFAULT_TIMEOUT_S = 5.0
#: Requests that may be sent again after a timeout: they only read, or only withdraw.
REPEATABLE = frozenset({"status", "withdraw"})
#: Requests that carry out nothing, and so need no ``request_id``.
UNNAMED = REPEATABLE


def new_request_id() -> str:
    """A fresh ``request_id``: no other client's request has it (122 random bits)."""
    return uuid.uuid4().hex

Request = Mapping[str, Any] | BaseModel | Command


class CommandTimeout(LowballError, TimeoutError):
    """No reply within the time given. For a command, the answer to its withdrawal says what
    became of it: ``carried_out`` (the seq of its record), ``withdrawn`` (never carried out),
    or neither (the withdrawal was not answered either: withdraw ``request_id`` again)."""

    def __init__(self, endpoint: str, command: str, timeout_s: float, *,
                 request_id: str | None = None, withdrawal: Withdrawn | None = None) -> None:
        self.endpoint, self.command, self.timeout_s = endpoint, command, timeout_s
        self.request_id = request_id
        self.carried_out: int | None = None
        self.withdrawn = False
        if withdrawal is not None and request_id is not None:
            self.carried_out = withdrawal.carried_out.get(request_id)
            self.withdrawn = request_id in withdrawal.withdrawn
        if self.carried_out is not None:
            fate = f"; it was carried out late (seq {self.carried_out}): do not give it again"
        elif self.withdrawn:
            fate = "; it is withdrawn: it was not and will never be carried out"
        elif request_id is not None:
            fate = (f"; nor to its withdrawal: it may still be carried out. Withdraw request "
                    f"{request_id} again before giving the command again")
        else:
            fate = ""
        super().__init__(f"no answer from {endpoint} to {command} within {timeout_s:g} s"
                         f"{fate}")


class CommandClient:
    """Requests to one table's command socket, and their replies.

    ``by`` and ``credential`` are added to every request (``credential`` only to those sent
    with ``supervisor=True``); ``curve`` is the client's keys and the table's public key
    (:func:`controller.stream.security.client_keys`). ``in_flight`` bounds the requests the
    socket queues (0: no bound, for a client that pipelines on purpose)."""

    def __init__(self, endpoint: str, *, context: zmq.Context[Any] | None = None,
                 curve: dict[str, bytes] | None = None, by: str | None = None,
                 credential: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
                 in_flight: int = 1000) -> None:
        self.endpoint, self.curve = endpoint, curve
        self.by, self.credential, self.timeout_s = by, credential, timeout_s
        self.in_flight = in_flight
        self.context = context or zmq.Context.instance()
        self._next_id = 0
        self._socket: zmq.Socket[bytes] | None = None

    @property
    def socket(self) -> zmq.Socket[bytes]:
        """The DEALER socket (for a poller); replaced by :meth:`reset`."""
        if self._socket is None:
            socket = self.context.socket(zmq.DEALER)
            socket.setsockopt(zmq.LINGER, 0)
            socket.setsockopt(zmq.SNDHWM, self.in_flight)
            socket.setsockopt(zmq.RCVHWM, self.in_flight)
            if self.curve is not None:
                curve_client(socket, **self.curve)
            socket.connect(self.endpoint)
            self._socket = socket
        return self._socket

    # -- one request at a time ------------------------------------------------------------

    def ask(self, request: Request, *, supervisor: bool = False,
            timeout_s: float | None = None, retries: int = 0) -> Reply:
        """Send ``request`` and wait for its reply. :class:`CommandTimeout` when none comes in
        time: a ``status`` is sent again up to ``retries`` times first; a command is withdrawn,
        waiting as long again for the answer, which the exception carries."""
        timeout = self.timeout_s if timeout_s is None else timeout_s
        data = self._request(request, supervisor)
        name = str(data.get("command"))
        if name in REPEATABLE:
            for _ in range(retries + 1):
                reply = self.reply_to(self.send(data), timeout)
                if reply is not None:
                    return reply
                self.reset()
            raise CommandTimeout(self.endpoint, name, timeout)
        sent = self.send(data)
        reply = self.reply_to(sent, timeout)
        if reply is not None:
            return reply
        # The daemon may hold the command still (a slow disk): settle it before anything else.
        request_id = str(data["request_id"])
        got = self._withdraw([request_id], timeout, also=sent)
        if got is not None and got[0] == sent:  # the command's own reply came after all
            return got[1]
        withdrawal = got[1] if got is not None and isinstance(got[1], Withdrawn) else None
        raise CommandTimeout(self.endpoint, name, timeout, request_id=request_id,
                             withdrawal=withdrawal)

    def withdraw(self, request_ids: list[str], timeout_s: float | None = None) -> Reply | None:
        """Withdraw the requests named (by ``request_id``) and wait for the answer: a
        :class:`Withdrawn` saying which were carried out and which never will be (or the
        refusal of a malformed withdrawal); None when none comes in time (withdraw them
        again: it is safe to repeat)."""
        got = self._withdraw(request_ids, self.timeout_s if timeout_s is None else timeout_s)
        return None if got is None else got[1]

    def _withdraw(self, request_ids: list[str], timeout_s: float,
                  also: int | None = None) -> tuple[int, Reply] | None:
        """Send a withdrawal and wait for its answer, or for the reply to the request sent
        as ``also`` (the command itself, whose own reply is as good an answer)."""
        asked = self.send({"command": "withdraw", "requests": request_ids})
        deadline = time.monotonic() + timeout_s
        while (got := self.receive(max(0.0, deadline - time.monotonic()))) is not None:
            if got[0] == asked or got[0] == also:
                return got
        return None

    def reply_to(self, request_id: int, timeout_s: float) -> Reply | None:
        """The reply to ``request_id``, waiting at most ``timeout_s`` (replies to other
        requests are dropped); None when it has not come (the request is still in flight:
        wait again, or :meth:`reset` to forget it)."""
        deadline = time.monotonic() + timeout_s
        while True:
            got = self.receive(max(0.0, deadline - time.monotonic()))
            if got is None:
                return None
            if got[0] == request_id:
                return got[1]

    # -- pipelined ------------------------------------------------------------------------

    def send(self, request: Request, *, supervisor: bool = False) -> int:
        """Send ``request`` without waiting; its id (which :meth:`receive` gives back with the
        reply). ``zmq.Again`` when ``in_flight`` requests are already queued."""
        return self.send_payload(json.dumps(self._request(request, supervisor)).encode())

    def send_payload(self, payload: bytes) -> int:
        """Send ``payload`` as the request, byte for byte (a test or a benchmark sending what
        no well-behaved client would)."""
        self._next_id += 1
        self.socket.send_multipart([self._next_id.to_bytes(8, "big"), b"", payload],
                                   zmq.NOBLOCK)
        return self._next_id

    def receive(self, timeout_s: float = 0.0) -> tuple[int, Reply] | None:
        """The next reply that arrives within ``timeout_s`` and its request's id, or None.
        :class:`controller.stream.command_replies.ReplyError` for a reply that is not one."""
        socket, deadline = self.socket, time.monotonic() + timeout_s
        while socket.poll(max(0, int((deadline - time.monotonic()) * 1000))):
            frames = socket.recv_multipart()
            if len(frames) == 3 and len(frames[0]) == 8 and not frames[1]:
                return int.from_bytes(frames[0], "big"), decode(frames[2])
        return None

    def reset(self) -> None:
        """Forget every request in flight: a fresh socket, so none still queued is sent, and
        no late reply is read."""
        if self._socket is not None:
            self._socket.close(0)
            self._socket = None

    def close(self) -> None:
        self.reset()

    def __enter__(self) -> CommandClient:
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()

    def _request(self, request: Request, supervisor: bool) -> dict[str, Any]:
        if isinstance(request, Command):
            data = {"command": request.command, **asdict(request)}
        elif isinstance(request, BaseModel):
            data = request.model_dump()
        else:
            data = dict(request)
        if self.by is not None:
            data.setdefault("by", self.by)
        if data.get("command") not in UNNAMED:
            data.setdefault("request_id", new_request_id())
        if supervisor and self.credential is not None:
            data["credential"] = self.credential
        return data

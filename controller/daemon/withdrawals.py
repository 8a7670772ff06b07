"""Which requests were carried out and which were withdrawn, by the id their client gave them.

A client that gets no answer in time cannot tell whether its command was carried out: the
daemon's ZeroMQ I/O thread may hold it still, and a slow disk, a checkpoint or a paused VM may
let the daemon read it seconds later. So the client withdraws it (``withdraw``, naming its
``request_id``), and the answer settles it: carried out (its ``command_accepted`` record), or
withdrawn, and then refused whenever it arrives. The daemon reads every request waiting before
it serves any (:meth:`controller.daemon.command_channel.CommandChannel.serve_turn`) and serves
the withdrawals first, so a command and its withdrawal waiting together always end withdrawn.

Both memories are kept per client, the client as the daemon knows it (its CURVE key or its
network address, :func:`controller.stream.transport_identity.client_of`, never a field it
sends): each client's ids are bounded (:data:`PER_CLIENT`, its own oldest forgotten first), all
of them together too (:data:`TOTAL`: past it, the client holding the most forgets its oldest),
and so are the clients (:data:`MAX_CLIENTS`: past it, the one heard from least lately is
forgotten). So one client withdrawing ids by the thousand forgets its own, never another's: a
request another client withdrew stays refused. An id is looked up among every client's, so a
client whose address changed between a command and its withdrawal is still answered true.
The ids carried out are journaled with their commands and their clients, and recalled from
the journal's last records on start, so an answer stays true across a restart.

A withdrawn id is never forgotten before :data:`KEEP_S`, far longer than any command takes to
reach the daemon: a client (or several sharing its address) withdrawing more than its bound
within that time has its next withdrawal refused (:class:`TooManyWithdrawals`: nothing
withdrawn, and the client knows it), never an earlier withdrawal forgotten, so a request its
client was told is withdrawn is never carried out, whatever else arrives.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from typing import Generic, TypeVar

from controller.errors import LowballError
from controller.stream import wire
from controller.stream.journal import JournalRecord
from controller.stream.transport_identity import LOCAL_CLIENT

#: Ids remembered of each kind for one client: far more than any client keeps in flight (the
#: console 16), however many it withdraws.
PER_CLIENT = 2_000
#: Ids remembered of each kind for all clients together.
TOTAL = 20_000
#: Clients remembered at once: far more than one table has (a console, the dealer's CLI, the
#: simulated dealer, a few tools); each is a CURVE key the operator allowed or a local address.
MAX_CLIENTS = 256
#: Seconds a withdrawn id is kept at least: its command, if it was ever sent, has reached the
#: daemon by then (a client waits seconds for an answer; ZeroMQ's queues hold a request only
#: while the daemon is not reading).
KEEP_S = 600.0
#: Journal records read back on start for the ids of the commands they hold.
RECALLED_RECORDS = 20_000
_ACCEPTED = "command_accepted"

V = TypeVar("V")


class _Memory(Generic[V]):
    """Ids with a value each (the seq of a request carried out, None for one withdrawn), kept
    per client within the bounds above, looked up whoever's they are."""

    def __init__(self) -> None:
        #: client -> its ids, oldest first; the clients heard from least lately first
        self._clients: OrderedDict[str, OrderedDict[str, V]] = OrderedDict()
        #: id -> how many clients hold it, and its latest value
        self._holders: dict[str, int] = {}
        self._values: dict[str, V] = {}
        self._size = 0

    def __contains__(self, request_id: str) -> bool:
        return request_id in self._holders

    def __len__(self) -> int:
        return self._size

    def get(self, request_id: str) -> V | None:
        return self._values.get(request_id)

    def held(self) -> dict[str, int]:
        """How many ids each client holds."""
        return {client: len(ids) for client, ids in self._clients.items()}

    def remember(self, client: str, request_id: str, value: V) -> None:
        ids = self._clients.get(client)
        if ids is None:
            while len(self._clients) >= MAX_CLIENTS:
                self._forget_client(next(iter(self._clients)))
            ids = self._clients[client] = OrderedDict()
        self._clients.move_to_end(client)
        if request_id in ids:
            ids.move_to_end(request_id)
            self._values[request_id] = ids[request_id] = value
            return
        ids[request_id] = self._values[request_id] = value
        self._holders[request_id] = self._holders.get(request_id, 0) + 1
        self._size += 1
        if len(ids) > PER_CLIENT:
            self._forget_oldest(client)
        while self._size > TOTAL:
            # the client holding the most (the one heard from least lately of those holding
            # as many): a flood of ids forgets the flooder's own
            busiest = max(self._clients, key=lambda name: len(self._clients[name]))
            self._forget_oldest(busiest)

    def _forget_oldest(self, client: str) -> None:
        ids = self._clients[client]
        request_id, _ = ids.popitem(last=False)
        self._unindex(request_id)
        if not ids:
            del self._clients[client]

    def _forget_client(self, client: str) -> None:
        for request_id in self._clients.pop(client):
            self._unindex(request_id)

    def _unindex(self, request_id: str) -> None:
        self._size -= 1
        self._holders[request_id] -= 1
        if not self._holders[request_id]:
            del self._holders[request_id], self._values[request_id]


class TooManyWithdrawals(LowballError):
    """A withdrawal the daemon cannot remember without forgetting one made within KEEP_S:
    refused, nothing withdrawn."""


def _expire(memory: _Memory[float], cutoff: float) -> None:
    """Forget the withdrawn ids remembered before ``cutoff`` (each client's oldest first)."""
    for client in list(memory._clients):
        ids = memory._clients[client]
        while ids and next(iter(ids.values())) < cutoff:
            memory._forget_oldest(client)
            if client not in memory._clients:
                break


class Withdrawals:
    """The ids of the requests carried out (with their record's seq) and of those withdrawn,
    each client's apart."""

    def __init__(self) -> None:
        self._carried_out: _Memory[int] = _Memory()
        #: id -> when it was withdrawn
        self._withdrawn: _Memory[float] = _Memory()

    def recall(self, records: Iterable[JournalRecord]) -> None:
        """Remember the ids of the commands journaled in ``records`` (read on start)."""
        for record in records:
            if record.type != _ACCEPTED:
                continue
            try:
                data = wire.decode_event(record.message).data
            except Exception:  # noqa: BLE001 (the chain check at start names a bad record)
                continue
            request_id = getattr(data, "request_id", "")
            if request_id:
                self.carried_out(request_id, record.seq,
                                 getattr(data, "client", "") or LOCAL_CLIENT)

    def carried_out(self, request_id: str, seq: int, client: str = LOCAL_CLIENT) -> None:
        """``client``'s request ``request_id`` was carried out; its ``command_accepted`` is
        ``seq``."""
        self._carried_out.remember(client, request_id, seq)

    def withdraw(self, request_ids: Iterable[str], client: str = LOCAL_CLIENT,
                 now: float = 0.0) -> tuple[dict[str, int], list[str]]:
        """``client`` withdraws ``request_ids`` at ``now`` (the daemon's clock): those already
        carried out, with their record's seq, and those withdrawn (never carried out; refused
        if they arrive). :class:`TooManyWithdrawals` if the ids to remember do not fit without
        forgetting one withdrawn within KEEP_S: then nothing is withdrawn."""
        done: dict[str, int] = {}
        new: list[str] = []
        for request_id in dict.fromkeys(request_ids):
            seq = self._carried_out.get(request_id)
            if seq is not None:
                done[request_id] = seq
            else:
                new.append(request_id)
        memory = self._withdrawn
        _expire(memory, now - KEEP_S)
        ids = memory._clients.get(client)
        fresh = [request_id for request_id in new if ids is None or request_id not in ids]
        own = 0 if ids is None else len(ids)
        if own + len(fresh) > PER_CLIENT or len(memory) + len(fresh) > TOTAL or \
                (ids is None and fresh and len(memory._clients) >= MAX_CLIENTS):
            raise TooManyWithdrawals(
                f"too many withdrawals: at most {PER_CLIENT:,} request ids a client and "
                f"{TOTAL:,} in all within {KEEP_S / 60:.0f} minutes (none is forgotten sooner, "
                f"so a withdrawn request stays refused): nothing withdrawn")
        for request_id in new:
            memory.remember(client, request_id, now)
        return done, new

    def refusal(self, request_id: str) -> str | None:
        """Why a request with this id is not carried out now, or None if it may be."""
        if request_id in self._withdrawn:
            return ("request_id: withdrawn by its client before the table read it; nothing "
                    "was carried out")
        seq = self._carried_out.get(request_id)
        if seq is not None:
            return (f"request_id: this request was carried out already (seq {seq}); a "
                    f"request is carried out once")
        return None

    def held(self) -> dict[str, tuple[int, int]]:
        """How many ids each client has remembered: (carried out, withdrawn)."""
        carried_out, withdrawn = self._carried_out.held(), self._withdrawn.held()
        return {client: (carried_out.get(client, 0), withdrawn.get(client, 0))
                for client in {*carried_out, *withdrawn}}

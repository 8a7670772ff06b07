"""Which requests were carried out and which were withdrawn, by the id their client gave them.

A client that gets no answer in time cannot tell whether its command was carried out: the
daemon's ZeroMQ I/O thread may hold it still, and a slow disk, a checkpoint or a paused VM may
let the daemon read it seconds later. So the client withdraws it (``withdraw``, naming its
``request_id``), and the answer settles it: carried out (its ``command_accepted`` record), or
withdrawn, and then refused whenever it arrives. The daemon reads every request waiting before
it serves any (:meth:`controller.daemon.command_channel.CommandChannel.serve_turn`) and serves
the withdrawals first, so a command and its withdrawal waiting together always end withdrawn.

Both memories are bounded (:data:`REMEMBERED`, the oldest forgotten first); the ids carried out
are journaled with their commands and recalled from the journal's last records on start, so
an answer stays true across a restart.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

from controller.stream import wire
from controller.stream.journal import JournalRecord

#: Ids remembered of each kind: far more than any client keeps in flight (the console 16).
REMEMBERED = 10_000
#: Journal records read back on start for the ids of the commands they hold.
RECALLED_RECORDS = 20_000
_ACCEPTED = "command_accepted"


class Withdrawals:
    """The ids of the requests carried out (with their record's seq) and of those withdrawn."""

    def __init__(self) -> None:
        self._carried_out: OrderedDict[str, int] = OrderedDict()
        self._withdrawn: OrderedDict[str, None] = OrderedDict()

    def recall(self, records: Iterable[JournalRecord]) -> None:
        """Remember the ids of the commands journaled in ``records`` (read on start)."""
        for record in records:
            if record.type != _ACCEPTED:
                continue
            try:
                request_id = getattr(wire.decode_event(record.message).data, "request_id", "")
            except Exception:  # noqa: BLE001 (the chain check at start names a bad record)
                continue
            if request_id:
                self.carried_out(request_id, record.seq)

    def carried_out(self, request_id: str, seq: int) -> None:
        """The request ``request_id`` was carried out; its ``command_accepted`` is ``seq``."""
        self._remember(self._carried_out, request_id, seq)

    def withdraw(self, request_ids: Iterable[str]) -> tuple[dict[str, int], list[str]]:
        """Withdraw ``request_ids``: those already carried out, with their record's seq, and
        those withdrawn (never carried out; refused if they arrive)."""
        done: dict[str, int] = {}
        withdrawn: list[str] = []
        for request_id in request_ids:
            seq = self._carried_out.get(request_id)
            if seq is not None:
                done[request_id] = seq
            else:
                self._remember(self._withdrawn, request_id, None)
                withdrawn.append(request_id)
        return done, withdrawn

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

    @staticmethod
    def _remember(memory: OrderedDict[str, int] | OrderedDict[str, None], request_id: str,
                  value: int | None) -> None:
        memory[request_id] = value  # type: ignore[assignment]
        memory.move_to_end(request_id)
        while len(memory) > REMEMBERED:
            memory.popitem(last=False)

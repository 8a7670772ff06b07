"""What the command channel keeps of refused commands, so that a flood cannot fill the journal.

Every refused command is answered. The first :data:`IN_FULL` refusals a client earns in a
one-second window are journaled in full (:class:`controller.core.table_events.CommandRefused`);
the rest of that window's refusals from the same client are only counted, and the count is
journaled once the window has passed (:class:`controller.core.table_events.RefusalsCounted`). A
client flooding the table with junk therefore costs the journal at most four records a
second, and surveillance still sees every refusal: in full, or in a count naming the client,
the window and the last reason.

:class:`CredentialWatch` counts failed supervisor credentials from every client together:
the fifth within a minute raises an :class:`controller.core.table_events.Alarm` (one a minute at
most), for surveillance to act on.

Pure: the daemon gives the clock.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass

from controller.core.table_events import Alarm, RefusalsCounted

#: Seconds of one client's refusal window.
WINDOW_S = 1.0
#: Refusals journaled in full per client and window (a dealer's slip and its correction).
IN_FULL = 3
#: Clients whose windows are remembered at once; the oldest is closed (its count journaled)
#: when a new client would pass this, so a client that changes its address each time
#: cannot grow the ledger.
MAX_CLIENTS = 1024
#: Failed supervisor credentials within :data:`CREDENTIAL_WINDOW_S` that raise the alarm.
CREDENTIAL_FAILURES = 5
CREDENTIAL_WINDOW_S = 60.0


@dataclass
class _Window:
    opened: float
    in_full: int = 1
    counted: int = 0
    last_command: str = ""
    last_reason: str = ""


class RefusalLedger:
    """Decides which refusals are journaled in full and which are counted."""

    def __init__(self, window_s: float = WINDOW_S, in_full: int = IN_FULL,
                 max_clients: int = MAX_CLIENTS):
        self.window_s = window_s
        self.in_full = in_full
        self.max_clients = max_clients
        self._windows: OrderedDict[str, _Window] = OrderedDict()

    def admit(self, client: str, command: str, reason: str,
              now: float) -> tuple[bool, list[RefusalsCounted]]:
        """Whether this refusal is journaled in full, and the counts of windows it closed
        (journal them first)."""
        closed = self.due(now)
        window = self._windows.get(client)
        if window is None:
            if len(self._windows) >= self.max_clients:
                oldest, old = self._windows.popitem(last=False)
                closed += self._count(oldest, old, now)
            self._windows[client] = _Window(now)
            return True, closed
        if window.in_full < self.in_full:
            window.in_full += 1
            return True, closed
        window.counted += 1
        window.last_command, window.last_reason = command, reason
        return False, closed

    def due(self, now: float) -> list[RefusalsCounted]:
        """The counts of every window that has passed (each client's window is closed)."""
        closed: list[RefusalsCounted] = []
        while self._windows:
            client, window = next(iter(self._windows.items()))
            if now - window.opened < self.window_s:
                break  # windows open in order: the rest are younger
            del self._windows[client]
            closed += self._count(client, window, now)
        return closed

    def close(self, client: str, now: float) -> list[RefusalsCounted]:
        """Close ``client``'s window now (what it refused is settled): its count, if any."""
        window = self._windows.pop(client, None)
        return [] if window is None else self._count(client, window, now)

    def next_due(self, now: float) -> float | None:
        """Seconds until the oldest window closes; None when none is open."""
        if not self._windows:
            return None
        window = next(iter(self._windows.values()))
        return max(0.0, window.opened + self.window_s - now)

    @staticmethod
    def _count(client: str, window: _Window, now: float) -> list[RefusalsCounted]:
        if not window.counted:
            return []
        return [RefusalsCounted(client, window.counted, round((now - window.opened) * 1000),
                                window.last_command, window.last_reason)]


class CredentialWatch:
    """Failed supervisor credentials, from every client; raises the alarm."""

    def __init__(self, failures: int = CREDENTIAL_FAILURES,
                 window_s: float = CREDENTIAL_WINDOW_S):
        self.failures = failures
        self.window_s = window_s
        self._times: deque[float] = deque(maxlen=failures)
        self._alarmed_at: float | None = None

    def failed(self, client: str, now: float) -> list[Alarm]:
        """One more failure from ``client``: the alarm, when this one raises it."""
        self._times.append(now)
        if len(self._times) < self.failures or now - self._times[0] > self.window_s:
            return []
        if self._alarmed_at is not None and now - self._alarmed_at < self.window_s:
            return []
        self._alarmed_at = now
        return [Alarm("credential_failures",
                      f"{self.failures} failed supervisor credentials within "
                      f"{self.window_s:g} s, the last from {client}")]

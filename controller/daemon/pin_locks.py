"""Wrong supervisor PINs at the table: a supervisor's PIN locks after :data:`FAILURES` wrong
ones within :data:`WINDOW_S`, for :data:`LOCKOUT_S`.

A PIN is short (:mod:`controller.settings.pins`): without a bound, anyone who reaches the
command channel (the dealer's own command line) could try every PIN. So each supervisor's
PIN counts its wrong tries, and once locked it is refused without being checked. The lock is
the PIN's only: her credential still signs (a guesser can keep her PIN locked, never her out).
The book holds the configured supervisors' names only (a name with no PIN is no PIN's), so it
is bounded by the config.
"""

from __future__ import annotations

from collections import deque

#: Wrong PINs for one supervisor within WINDOW_S that lock her PIN for LOCKOUT_S.
FAILURES, WINDOW_S, LOCKOUT_S = 5, 60.0, 300.0


class PinLocks:
    def __init__(self) -> None:
        self._failures: dict[str, deque[float]] = {}
        self._locked: dict[str, float] = {}

    def locked_for(self, supervisor: str, now: float) -> float:
        """Seconds the supervisor's PIN stays locked (0: it may be checked)."""
        left = self._locked.get(supervisor, 0.0) - now
        if left <= 0:
            self._locked.pop(supervisor, None)
            return 0.0
        return left

    def failed(self, supervisor: str, now: float) -> bool:
        """A wrong PIN for ``supervisor``; whether it locked her PIN now."""
        times = self._failures.setdefault(supervisor, deque(maxlen=FAILURES))
        times.append(now)
        if len(times) == FAILURES and now - times[0] <= WINDOW_S:
            self._locked[supervisor] = now + LOCKOUT_S
            times.clear()
            return True
        return False

    def succeeded(self, supervisor: str) -> None:
        """Her PIN was right: the wrong ones before it no longer count."""
        self._failures.pop(supervisor, None)

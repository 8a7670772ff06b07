"""Supervisor sessions on the console.

A supervisor signs in with a name and their credential. The console sends a ``sign_in``
command with it: the daemon checks the credential, journals who signed in (or counts the
failure, and raises its ``credential_failures`` alarm after five in a minute). Then the
browser gets a random session token in an HttpOnly cookie; the credential stays in the
console's memory for the session and is never sent to the browser. A session ends when it
expires, at sign-out, or when the console stops.

Too many failed sign-ins from one address lock it out for a while, without asking the table;
too many for one name, from any number of addresses, hold that name for a shorter while (a
guesser spread over many machines gets no more guesses at a supervisor's credential, and
someone failing on purpose can keep a supervisor out only a minute at a time); and many
failures on the whole console, whatever the names and addresses, slow every sign-in to one
checked every few seconds, one turn a check. The turn goes to the waiting address that failed
longest ago (never, first; then the longest waiting), so a guesser, whose every address has
failed, never goes before the real supervisor; an IPv6 address counts as its /64 network (one
machine has any number of them). A screen where a supervisor signed in before, and that has
not failed since, waits for none.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

COOKIE = "lowball_session"
#: Failed sign-ins from one address within WINDOW_S that lock it out for LOCKOUT_S.
FAILURES, WINDOW_S, LOCKOUT_S = 5, 60.0, 300.0
#: Failed sign-ins for one name (from anywhere) within WINDOW_S that hold it for NAME_LOCKOUT_S.
NAME_LOCKOUT_S = 60.0
#: Failed sign-ins on the whole console within WINDOW_S after which it checks at most one
#: sign-in every SPACING_S, whoever and wherever from (the table checks a credential against
#: every supervisor's, whatever name comes with it: a guesser who changes address and name at
#: each guess is slowed all the same).
CONSOLE_FAILURES, SPACING_S = 10, 5.0
#: An address where a supervisor signed in within TRUSTED_S, and that has not failed since,
#: is not slowed by a guesser elsewhere.
TRUSTED_S = 12 * 3600.0
#: Addresses waiting for a turn at once: past it, the one that failed last gives its place to
#: a newcomer that failed longer ago (or never).
MAX_WAITING = 256
#: Addresses whose last failure is remembered (the oldest forgotten first).
MAX_REMEMBERED = 4096
#: Sessions kept at once (the oldest goes first).
MAX_SESSIONS = 64


@dataclass
class Session:
    name: str
    #: the supervisor's credential (sent with their commands); None for a dealer or the pit
    credential: str | None = field(repr=False)
    expires: float
    role: str = "supervisor"


def network_of(address: str) -> str:
    """What the sign-in limits count as one machine: an IPv4 address, or an IPv6 address's
    /64 network (a machine chooses the rest itself); anything else as given."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:  # an IPv4 client of a dual-stack socket
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, 64), strict=False))
    return str(parsed)


class Sessions:
    def __init__(self, minutes: int, supervisors: dict[str, str],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.lifetime = minutes * 60.0
        self.supervisors = supervisors
        self.clock = clock
        self._sessions: dict[str, Session] = {}
        self._failures: dict[str, deque[float]] = {}
        self._locked: dict[str, float] = {}
        self._name_failures: dict[str, deque[float]] = {}
        self._names_locked: dict[str, float] = {}
        #: every failed sign-in within WINDOW_S, from anywhere (bounded: at most one is
        #: checked every SPACING_S once there are CONSOLE_FAILURES)
        self._all_failures: deque[float] = deque(maxlen=4 * CONSOLE_FAILURES)
        #: while spaced: the addresses waiting for a turn, in order of waiting -> when each
        #: last asked (one that has not asked within SPACING_S lets the next go first)
        self._waiting: dict[str, float] = {}
        #: the address whose turn it is, until when (its request asks more than once)
        self._turn: tuple[str, float] = ("", float("-inf"))
        self._last_turn = float("-inf")
        #: address -> when a supervisor's sign-in from it last succeeded
        self._signed_in_from: dict[str, float] = {}
        #: address -> when a sign-in from it last failed (who goes first for a turn)
        self._last_failed: dict[str, float] = {}

    def locked_for(self, address: str, name: str | None = None) -> float:
        """Seconds a sign-in from ``address`` (for ``name``, if given) must still wait
        (0: none). An address or name locked out takes no turn."""
        address = network_of(address)
        locked = max(self._left(self._locked, address),
                     self._left(self._names_locked, name) if name is not None else 0.0)
        return locked if locked > 0 else self._spacing_left(address)

    def _spacing_left(self, address: str) -> float:
        """Seconds until a sign-in from ``address`` may be checked while the console is
        under a guesser (CONSOLE_FAILURES failures within WINDOW_S; 0 otherwise): one every
        SPACING_S, the turn going, among the addresses still asking, to the one that failed
        longest ago (never: first), then to the one waiting longest."""
        now, failures = self.clock(), self._all_failures
        while failures and failures[0] < now - WINDOW_S:
            failures.popleft()
        if len(failures) < CONSOLE_FAILURES or self._trusted(address, now):
            return 0.0
        holder, until = self._turn
        if holder == address and now <= until:
            return 0.0
        waiting, last_failed = self._waiting, self._last_failed
        never = float("-inf")
        if address not in waiting and len(waiting) >= MAX_WAITING:
            self._forget_waiting(now)
            if len(waiting) >= MAX_WAITING:
                worst = max(waiting, key=lambda waiter: last_failed.get(waiter, never))
                if last_failed.get(worst, never) <= last_failed.get(address, never):
                    return SPACING_S
                del waiting[worst]
        waiting[address] = now
        opens = max(self._last_turn, failures[-1]) + SPACING_S
        if now < opens:
            return opens - now
        first = min((waiter for waiter, asked in waiting.items() if asked >= now - SPACING_S),
                    key=lambda waiter: last_failed.get(waiter, never))
        if first != address:
            return SPACING_S
        del waiting[address]
        self._turn, self._last_turn = (address, now + 1.0), now
        return 0.0

    def _trusted(self, address: str, now: float) -> bool:
        """A screen where a supervisor signed in within TRUSTED_S, and that has not failed
        since."""
        signed = self._signed_in_from.get(address, float("-inf"))
        return signed >= now - TRUSTED_S and \
            self._last_failed.get(address, float("-inf")) < signed

    def _forget_waiting(self, now: float) -> None:
        for gone in [waiter for waiter, asked in self._waiting.items()
                     if asked < now - WINDOW_S]:
            del self._waiting[gone]

    def signed_in_from(self, address: str, role: str = "supervisor") -> None:
        """A sign-in from ``address`` succeeded, as ``role``: a supervisor's makes the screen
        trusted (bounded: the longest known forgotten first); a dealer's or the pit's account
        does not (whoever knows one must not buy guesses at a supervisor's credential)."""
        address = network_of(address)
        if self._turn[0] == address:
            self._turn = ("", float("-inf"))
        self._waiting.pop(address, None)
        if role != "supervisor":
            return
        book = self._signed_in_from
        book.pop(address, None)
        book[address] = self.clock()
        while len(book) > 4 * MAX_SESSIONS:
            del book[next(iter(book))]

    def _left(self, locks: dict[str, float], key: str) -> float:
        left = locks.get(key, 0.0) - self.clock()
        if left <= 0:
            locks.pop(key, None)
            return 0.0
        return left

    def failed(self, address: str, name: str | None = None) -> None:
        """Count a failed sign-in from ``address`` (for ``name``); its turn, if it had one,
        is spent."""
        address = network_of(address)
        now = self.clock()
        self._count(self._failures, self._locked, address, LOCKOUT_S)
        self._all_failures.append(now)
        if self._turn[0] == address:
            self._turn = ("", float("-inf"))
        book = self._last_failed
        book.pop(address, None)
        book[address] = now
        while len(book) > MAX_REMEMBERED:
            del book[next(iter(book))]
        if name is not None:
            self._count(self._name_failures, self._names_locked, name, NAME_LOCKOUT_S)

    def _count(self, failures_of: dict[str, deque[float]], locks: dict[str, float],
               key: str, lockout_s: float) -> None:
        now = self.clock()
        failures = failures_of.setdefault(key, deque())
        failures.append(now)
        while failures and failures[0] < now - WINDOW_S:
            failures.popleft()
        if len(failures) >= FAILURES:
            locks[key] = now + lockout_s
            failures.clear()
        if len(failures_of) > 4 * MAX_SESSIONS:  # bounded: forget the quiet ones first
            for quiet in [k for k, v in failures_of.items()
                          if not v or v[-1] < now - WINDOW_S]:
                del failures_of[quiet]
            while len(failures_of) > 4 * MAX_SESSIONS:  # then the longest known
                del failures_of[next(iter(failures_of))]

    def owner(self, name: str, credential: str) -> str:
        """Who the credential belongs to, as the daemon will journal it: the supervisor whose
        hash it matches, else (the table's shared credential) the name given."""
        digest = hashlib.sha256(credential.encode("utf-8")).hexdigest()
        found = name
        for supervisor, expected in self.supervisors.items():
            if hmac.compare_digest(digest, expected):
                found = supervisor
        return found

    def open(self, name: str, credential: str) -> tuple[str, Session]:
        """A supervisor's new session (after the table accepted the credential), its token."""
        return self._add(Session(self.owner(name, credential), credential,
                                 self.clock() + self.lifetime))

    def account(self, name: str, credential: str,
                accounts: dict[str, Any]) -> tuple[str, Session] | None:
        """A dealer's or the pit's new session, if ``credential`` is that account's."""
        account = accounts.get(name)
        digest = hashlib.sha256(credential.encode("utf-8")).hexdigest()
        if account is None or not hmac.compare_digest(digest, account.credential_sha256):
            return None
        return self._add(Session(name, None, self.clock() + self.lifetime, account.role))

    def _add(self, session: Session) -> tuple[str, Session]:
        self._expire()
        while len(self._sessions) >= MAX_SESSIONS:
            # the oldest session of the name holding the most: one account signing in over
            # and over ends its own sessions, never another's (a supervisor's)
            counts = Counter(held.name for held in self._sessions.values())
            busiest = max(counts, key=counts.__getitem__)
            del self._sessions[next(token for token, held in self._sessions.items()
                                    if held.name == busiest)]
        token = secrets.token_urlsafe(32)
        self._sessions[token] = session
        return token, session

    def get(self, token: str | None) -> Session | None:
        """The live session of ``token``; None if there is none or it has expired."""
        if not token:
            return None
        session = self._sessions.get(token)
        if session is None:
            return None
        if session.expires <= self.clock():
            del self._sessions[token]
            return None
        return session

    def close(self, token: str | None) -> None:
        if token:
            self._sessions.pop(token, None)

    def seconds_left(self, session: Session) -> int:
        return max(0, int(session.expires - self.clock()))

    def _expire(self) -> None:
        now = self.clock()
        for token in [t for t, s in self._sessions.items() if s.expires <= now]:
            del self._sessions[token]

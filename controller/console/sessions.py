"""Supervisor sessions on the console.

A supervisor signs in with a name and their credential, or their PIN (keyed in on the
sign-in page's keypad, or typed by a badge reader; the table checks it against the hash of the
supervisor named, :mod:`controller.settings.pins`). The console sends a ``sign_in``
command with it: the daemon checks the credential, journals who signed in (or counts the
failure, and raises its ``credential_failures`` alarm after five in a minute). Then the
browser gets a random session token in an HttpOnly cookie; the credential stays in the
console's memory and is never sent to the browser. A session ends when it expires, at
sign-out, or when the console stops.

A supervisor acts once. The authority a sign-in gives (the credential the console keeps)
covers one supervisor command carried out by the table, and ends sooner after
:data:`AUTHORITY_S` or when the next hand starts, whichever comes first: a supervisor who
signed in on the dealer's screen to void a misdeal leaves no authority behind for the dealer.
What remains of the session is the pit's view (``role`` ``pit``) until it expires. Each
command given with the authority names the screen that asked and the dealer signed in there
(:attr:`Session.dealer`), which the table journals beside the supervisor (``asked_from``).

Too many failed sign-ins from one address lock it out for a while, without asking the table
(the exact address: on a LAN of screens one device failing must not lock out the others).
Many failures on the whole console, whatever the names and addresses, slow every sign-in to
one checked every few seconds (the table checks a credential against every supervisor's,
whatever name comes with it, so it is the number of checks that bounds a guesser, not the
name: a name is never held, which would only let anyone keep a supervisor out). While the
console is slowed, the turns go in order of waiting, by network (an IPv6 /48, a site: one
host chooses among more addresses than any line can hold; an IPv4 address): the network
waiting longest, among those still asking, has the next turn, taken by its first request. A
turn is one request, checked or not; the network that took it goes to the back of the line. A
guesser with many machines in one network waits as one; one bringing a fresh network to
every turn joins at the back each time. A screen where a supervisor signed in
within TRUSTED_S, and that has failed fewer than FAILURES times since, waits for none: her
podium stays hers whatever a guesser does elsewhere.
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

from controller.settings.pins import is_pin

COOKIE = "lowball_session"
#: Failed sign-ins from one address within WINDOW_S that lock it out for LOCKOUT_S.
FAILURES, WINDOW_S, LOCKOUT_S = 5, 60.0, 300.0
#: Failed sign-ins on the whole console within WINDOW_S after which it checks at most one
#: sign-in every SPACING_S, whoever and wherever from.
CONSOLE_FAILURES, SPACING_S = 10, 5.0
#: An address where a supervisor signed in within TRUSTED_S, and that has failed fewer than
#: FAILURES times since, is not slowed by a guesser elsewhere.
TRUSTED_S = 12 * 3600.0
#: Networks waiting for a turn at once: a newcomer past it is told to wait without a place
#: (the places of those that stopped asking are given first).
MAX_WAITING = 256
#: The longest a turn lasts (its request gives it back when answered: :meth:`Sessions.spent`).
TURN_S = 30.0
#: Sessions kept at once (the oldest goes first).
MAX_SESSIONS = 64
#: A supervisor's authority (one command) lasts at most this long after the sign-in.
AUTHORITY_S = 120.0


@dataclass
class Session:
    name: str
    #: the supervisor's credential (sent with their one command); None for a dealer or the
    #: pit, and once a supervisor's authority is spent or over
    credential: str | None = field(repr=False)
    expires: float
    role: str = "supervisor"
    #: until when a supervisor's authority lasts (a clock reading; 0: none)
    authority_until: float = 0.0
    #: the dealer signed in on the screen where the supervisor signed in ("" when none)
    dealer: str = ""
    #: why a supervisor's authority ended ("" while it lasts, or for a dealer or the pit)
    ended: str = ""


def network_of(address: str) -> str:
    """Where an address waits in the line for a turn: an IPv6 address's /48 (a site; any one
    host there chooses among more addresses than a line holds), an IPv4 address as it is;
    anything else as given."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:  # an IPv4 client of a dual-stack socket
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, 48), strict=False))
    return str(parsed)


class Sessions:
    def __init__(self, minutes: int, supervisors: dict[str, str],
                 clock: Callable[[], float] = time.monotonic, *,
                 with_pins: tuple[str, ...] = ()) -> None:
        self.lifetime = minutes * 60.0
        self.supervisors = supervisors
        #: the supervisors who have a PIN (the sign-in page offers their names to touch)
        self.with_pins = with_pins
        self.clock = clock
        self._sessions: dict[str, Session] = {}
        self._failures: dict[str, deque[float]] = {}
        self._locked: dict[str, float] = {}
        #: every failed sign-in within WINDOW_S, from anywhere (bounded: at most one is
        #: checked every SPACING_S once there are CONSOLE_FAILURES)
        self._all_failures: deque[float] = deque(maxlen=4 * CONSOLE_FAILURES)
        #: while spaced, the line: network -> when a request from it last asked, in order of
        #: waiting (one that has not asked within SPACING_S lets the next go first)
        self._line: dict[str, float] = {}
        #: the address whose turn it is, until when (its one request asks more than once,
        #: and may wait for the check before it)
        self._turn: tuple[str, float] = ("", float("-inf"))
        self._last_turn = float("-inf")
        #: address -> when a supervisor's sign-in from it last succeeded, and how many
        #: sign-ins from it failed since (its trust ends at FAILURES)
        self._signed_in_from: dict[str, tuple[float, int]] = {}

    def locked_for(self, address: str) -> float:
        """Seconds a sign-in from ``address`` must still wait (0: none; a request told 0 has
        the turn, which it gives back with :meth:`spent`). An address locked out takes no
        turn."""
        locked = self._left(self._locked, address)
        return locked if locked > 0 else self._spacing_left(address)

    def _spacing_left(self, address: str) -> float:
        """Seconds until a sign-in from ``address`` may be checked while the console is
        under a guesser (CONSOLE_FAILURES failures within WINDOW_S; 0 otherwise): one every
        SPACING_S, to the first request from the network waiting longest among those still
        asking."""
        now, failures = self.clock(), self._all_failures
        while failures and failures[0] < now - WINDOW_S:
            failures.popleft()
        if len(failures) < CONSOLE_FAILURES or self._trusted(address, now):
            return 0.0
        holder, until = self._turn
        if holder == address and now <= until:
            return 0.0
        network = network_of(address)
        if not self._join(network, now):
            return SPACING_S
        opens = max(self._last_turn, failures[-1]) + SPACING_S
        if now < opens:
            return opens - now
        first = next(waiting for waiting, asked in self._line.items()
                     if asked >= now - SPACING_S)
        if first != network:
            return SPACING_S
        del self._line[network]               # to the back of the line at its next request
        self._turn, self._last_turn = (address, now + TURN_S), now
        return 0.0

    def _join(self, network: str, now: float) -> bool:
        """A request from ``network``: keep its place, or give it one at the back (False: the
        line is full of networks still asking)."""
        line = self._line
        if network not in line and len(line) >= MAX_WAITING:
            for quiet in [waiting for waiting, asked in line.items()
                          if asked < now - SPACING_S]:
                del line[quiet]
            if len(line) >= MAX_WAITING:
                return False
        line[network] = now
        return True

    def _trusted(self, address: str, now: float) -> bool:
        """A screen where a supervisor signed in within TRUSTED_S, and that has failed fewer
        than FAILURES times since (a typo does not cost her the podium; a guesser there is
        locked out at FAILURES all the same)."""
        signed, failed = self._signed_in_from.get(address, (float("-inf"), 0))
        return signed >= now - TRUSTED_S and failed < FAILURES

    def spent(self, address: str) -> None:
        """The request that had the turn (told 0 by :meth:`locked_for`) is answered, whatever
        the answer: the turn is over."""
        if self._turn[0] == address:
            self._turn = ("", float("-inf"))

    def signed_in_from(self, address: str, role: str = "supervisor") -> None:
        """A sign-in from ``address`` succeeded, as ``role``: a supervisor's makes the screen
        trusted (bounded: the longest known forgotten first); a dealer's or the pit's account
        does not (whoever knows one must not buy guesses at a supervisor's credential)."""
        self.spent(address)
        if role != "supervisor":
            return
        book = self._signed_in_from
        book.pop(address, None)
        book[address] = (self.clock(), 0)
        while len(book) > 4 * MAX_SESSIONS:
            del book[next(iter(book))]

    def _left(self, locks: dict[str, float], key: str) -> float:
        left = locks.get(key, 0.0) - self.clock()
        if left <= 0:
            locks.pop(key, None)
            return 0.0
        return left

    def failed(self, address: str) -> None:
        """Count a failed sign-in from ``address``; its turn, if it had one, is spent."""
        now = self.clock()
        self._all_failures.append(now)
        self.spent(address)
        failures = self._failures.setdefault(address, deque())
        failures.append(now)
        while failures and failures[0] < now - WINDOW_S:
            failures.popleft()
        if len(failures) >= FAILURES:
            locked = self._locked
            locked[address] = now + LOCKOUT_S
            if len(locked) > 4 * MAX_SESSIONS:  # bounded: the lock-outs over are forgotten
                for over in [key for key, until in locked.items() if until <= now]:
                    del locked[over]
        if (trusted := self._signed_in_from.get(address)) is not None:
            self._signed_in_from[address] = (trusted[0], trusted[1] + 1)
        book = self._failures
        if len(book) > 4 * MAX_SESSIONS:  # bounded: forget the quiet ones first
            for quiet in [key for key, times in book.items()
                          if not times or times[-1] < now - WINDOW_S]:
                del book[quiet]
            while len(book) > 4 * MAX_SESSIONS:  # then the longest known
                del book[next(iter(book))]

    def owner(self, name: str, credential: str) -> str:
        """Who the credential belongs to, as the daemon will journal it: the supervisor whose
        hash it matches, else (the table's shared credential) the name given; a PIN's, the
        supervisor named (as configured, whatever the case and spacing typed)."""
        if is_pin(credential):
            typed = " ".join(name.split()).casefold()
            return next((supervisor for supervisor in self.supervisors
                         if " ".join(supervisor.split()).casefold() == typed), name)
        digest = hashlib.sha256(credential.encode("utf-8")).hexdigest()
        found = name
        for supervisor, expected in self.supervisors.items():
            if hmac.compare_digest(digest, expected):
                found = supervisor
        return found

    def open(self, name: str, credential: str, dealer: str = "") -> tuple[str, Session]:
        """A supervisor's new session (after the table accepted the credential), its token.
        ``dealer``: the dealer signed in on that screen before, if any."""
        now = self.clock()
        return self._add(Session(self.owner(name, credential), credential,
                                 now + self.lifetime, authority_until=now + AUTHORITY_S,
                                 dealer=dealer))

    def authority(self, token: str | None) -> Session | None:
        """The session of ``token`` if it is a supervisor's whose authority still holds
        (not spent on a command, not past :data:`AUTHORITY_S`, no hand started since)."""
        session = self.get(token)
        if session is None or session.role != "supervisor" or session.credential is None:
            return None
        if self.clock() >= session.authority_until:
            self._end(session, "its two minutes are over")
            return None
        return session

    def spend(self, token: str | None) -> None:
        """The table carried out a command given with this session's authority: it is over."""
        session = self.get(token)
        if session is not None and session.role == "supervisor":
            self._end(session, "it was used for one command")

    def end_authority(self, why: str) -> None:
        """Every supervisor's authority ends now (the next hand started)."""
        for session in list(self._sessions.values()):
            if session.role == "supervisor":
                self._end(session, why)

    @staticmethod
    def _end(session: Session, why: str) -> None:
        session.credential, session.role, session.ended = None, "pit", why

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
        """A supervisor's authority's seconds left; anyone else's session's."""
        until = session.authority_until if session.role == "supervisor" else session.expires
        return max(0, int(until - self.clock()))

    def _expire(self) -> None:
        now = self.clock()
        for token in [t for t, s in self._sessions.items() if s.expires <= now]:
            del self._sessions[token]

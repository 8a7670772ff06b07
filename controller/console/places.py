"""Which screen may take a place on the console, and which gives way for it.

Each open screen holds a socket and is sent every view, so the console keeps a bounded number
(:data:`MAX_SCREENS`, :data:`MAX_SCREENS_PER_ADDRESS` from one machine). A cap alone let
whoever opened screens first keep them: 64 idle screens from four machines locked the
supervisor and the dealer out. So the places are ranked by who is signed in on the screen:

* a screen with no sign-in (only a console on loopback serves one) may hold at most
  :data:`UNSIGNED_PLACES`, so signed-in screens always find room;
* screens signed in with a dealer's or the pit's account may hold, with those, at most
  :data:`ACCOUNT_PLACES`, so a supervisor always finds room;
* a supervisor's screen may take any place.

A new screen that finds its places taken makes an older one give way, never one of a higher
rank: the lowest rank first, of that rank the name (the account, or the machine of a screen
with no sign-in) holding the most screens, of that name the oldest. So a script opening
screens in a loop closes its own, and a dealer's screen that gave way takes a place again
when it reconnects. A screen whose sign-in has ended counts as one with no sign-in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from enum import IntEnum
from typing import Generic, TypeVar

#: Screens open at once on the whole console, and from one machine.
MAX_SCREENS, MAX_SCREENS_PER_ADDRESS = 64, 16
#: The places screens with no sign-in may hold together.
UNSIGNED_PLACES = 32
#: The places screens signed in with a dealer's or the pit's account, and those with no
#: sign-in, may hold together: the rest are always a supervisor's to take.
ACCOUNT_PLACES = 56


class Rank(IntEnum):
    """Who is signed in on a screen: the higher, the surer its place."""

    UNSIGNED = 0
    ACCOUNT = 1
    SUPERVISOR = 2


#: The places screens of each rank and below may hold together.
LIMITS = {Rank.UNSIGNED: UNSIGNED_PLACES, Rank.ACCOUNT: ACCOUNT_PLACES,
          Rank.SUPERVISOR: MAX_SCREENS}
_WHO = {Rank.UNSIGNED: "with no sign-in", Rank.ACCOUNT: "of dealers and the pit",
        Rank.SUPERVISOR: ""}


@dataclass(frozen=True)
class Holder:
    """An open screen: the machine it is from, and the session token it opened with (whose
    sign-in :class:`Places` looks up at each new screen: it may have ended since)."""

    address: str
    token: str | None


#: what names a screen (the console: its socket's id)
K = TypeVar("K", bound=Hashable)


class Places(Generic[K]):
    """The screens holding places, in the order they opened. ``who(token)``: the rank and name
    of the sign-in behind a session token now (an ended one: ``Rank.UNSIGNED``)."""

    def __init__(self, who: Callable[[str | None], tuple[Rank, str | None]]) -> None:
        self.who = who
        self._held: dict[K, Holder] = {}

    def __len__(self) -> int:
        return len(self._held)

    def _rank_name(self, holder: Holder) -> tuple[Rank, str]:
        rank, name = self.who(holder.token)
        return rank, name if rank is not Rank.UNSIGNED and name else f"machine {holder.address}"

    def take(self, key: K, address: str, token: str | None
             ) -> tuple[list[K], str | None]:
        """Give the new screen ``key`` a place: the screens that give way for it (the caller
        closes them), or why it gets none (and nothing gives way)."""
        rank, _ = self.who(token)
        ranked = {held: self._rank_name(holder) for held, holder in self._held.items()}
        victims: list[K] = []
        while True:
            staying = {held: ranked[held] for held in ranked if held not in victims}
            crowded, why = self._crowded(rank, address, staying)
            if crowded is None:
                break
            if not crowded:
                return [], why
            victims.append(self._victim(crowded, staying))
        for victim in victims:
            del self._held[victim]
        self._held[key] = Holder(address, token)
        return victims, None

    def _crowded(self, rank: Rank, address: str, staying: dict[K, tuple[Rank, str]]
                 ) -> tuple[list[K] | None, str]:
        """The screens one of which must give way for a screen of ``rank`` from ``address``
        (None: there is room; empty: none may, and why)."""
        mine = [key for key in staying if self._held[key].address == address]
        if len(mine) >= MAX_SCREENS_PER_ADDRESS:
            return ([key for key in mine if staying[key][0] <= rank],
                    f"{MAX_SCREENS_PER_ADDRESS} screens are open from this machine: "
                    f"close one first")
        for limit_rank in (r for r in Rank if r >= rank):
            below = [key for key, (held, _) in staying.items() if held <= limit_rank]
            if len(below) >= LIMITS[limit_rank]:
                who = _WHO[limit_rank]
                return ([key for key in below if staying[key][0] <= rank],
                        f"this console has {LIMITS[limit_rank]} screens "
                        f"{who + ' ' if who else ''}open: close one first")
        return None, ""

    @staticmethod
    def _victim(crowded: list[K], staying: dict[K, tuple[Rank, str]]) -> K:
        """The one to give way: the lowest rank, the name holding the most, the oldest."""
        lowest = min(staying[key][0] for key in crowded)
        names = Counter(staying[key][1] for key in staying if staying[key][0] == lowest)
        candidates = [key for key in crowded if staying[key][0] == lowest]
        busiest = max(names[staying[key][1]] for key in candidates)
        return next(key for key in candidates if names[staying[key][1]] == busiest)

    def leave(self, key: K) -> None:
        self._held.pop(key, None)

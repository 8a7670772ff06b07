"""The table's states (docs/operators.md, "The table's states") and the transitions between them.

::

    CLOSED -> OPEN -> LOCKED -> DEALING <-> DECIDING -> SETTLED -> OPEN
                        |          |           |          |
                        +------> PAUSED <------+          +-> CLOSED (and OPEN -> CLOSED)

``PAUSED`` is reachable from every in-hand state; the dealer continues it (a recoverable
device fault) back to where the hand stands, a card the hand expects may settle it, and a
supervisor's void takes any hand in play back to ``OPEN``. :data:`TRANSITIONS` is the whole
table; :func:`check_transition` refuses anything else with :class:`IllegalTransition`.

The values are the wire's: ``state_changed`` events and snapshots carry them as text.
"""

from __future__ import annotations

from enum import StrEnum
from controller.errors import LowballError


class TableState(StrEnum):
    """The table's states (docs/operators.md). PAUSED is reachable from every in-hand state."""

    CLOSED = "CLOSED"
    OPEN = "OPEN"
    LOCKED = "LOCKED"
    DEALING = "DEALING"
    DECIDING = "DECIDING"
    SETTLED = "SETTLED"
    PAUSED = "PAUSED"


CLOSED, OPEN, LOCKED, DEALING, DECIDING, SETTLED, PAUSED = TableState
#: The states of a hand in play.
IN_HAND = frozenset({LOCKED, DEALING, DECIDING, PAUSED})

#: state -> the states the table may go to from it.
TRANSITIONS: dict[TableState, frozenset[TableState]] = {
    CLOSED: frozenset({OPEN}),
    OPEN: frozenset({LOCKED, CLOSED}),
    LOCKED: frozenset({DEALING, PAUSED, OPEN}),
    DEALING: frozenset({DECIDING, SETTLED, PAUSED, OPEN}),
    DECIDING: frozenset({DEALING, SETTLED, PAUSED, OPEN}),
    PAUSED: frozenset({LOCKED, DEALING, DECIDING, SETTLED, OPEN}),
    SETTLED: frozenset({OPEN, CLOSED}),
}


class IllegalTransition(LowballError, RuntimeError):
    """The table tried to move between two states the transition table does not link: a
    defect of the table, never a refusal of an input."""

    def __init__(self, previous: TableState, state: TableState):
        allowed = ", ".join(sorted(TRANSITIONS[previous]))
        super().__init__(f"the table cannot go from {previous} to {state} "
                         f"(from {previous}: {allowed})")
        self.previous, self.state = previous, state


def check_transition(previous: TableState, state: TableState) -> None:
    if state not in TRANSITIONS[previous]:
        raise IllegalTransition(previous, state)

"""The table's state machine: an explicit transition table, checked on every change."""

from __future__ import annotations

import pytest

from controller.core.commands import Reload
from controller.core.table_events import CommandRefused, StateChanged
from controller.core.table_states import (
    CLOSED,
    DEALING,
    IN_HAND,
    OPEN,
    PAUSED,
    SETTLED,
    TRANSITIONS,
    IllegalTransition,
    TableState,
    check_transition,
)

from tests.support.table import Driver, cali_hand


def test_every_state_has_its_row_and_the_values_are_the_wire_s() -> None:
    assert set(TRANSITIONS) == set(TableState)
    assert [state.value for state in TableState] == [
        "CLOSED", "OPEN", "LOCKED", "DEALING", "DECIDING", "SETTLED", "PAUSED"]
    assert all(PAUSED in TRANSITIONS[state] for state in IN_HAND - {PAUSED})
    assert all(OPEN in TRANSITIONS[state] for state in IN_HAND)  # a void


@pytest.mark.parametrize("previous, state", [(CLOSED, DEALING), (OPEN, SETTLED),
                                             (SETTLED, PAUSED), (CLOSED, CLOSED)])
def test_a_move_outside_the_table_is_refused_by_type(previous: TableState, state: TableState
                                                     ) -> None:
    with pytest.raises(IllegalTransition) as raised:
        check_transition(previous, state)
    assert (raised.value.previous, raised.value.state) == (previous, state)
    assert f"from {previous} to {state}" in str(raised.value)


def test_the_table_checks_every_change(monkeypatch: pytest.MonkeyPatch) -> None:
    d = Driver()
    d.do(command="open")
    d.do(command="place", spot=1, wager="ante", amount=1000)
    d.do(command="place", spot=1, wager="xtra_bonus", amount=1000)
    monkeypatch.setitem(TRANSITIONS, OPEN, frozenset({CLOSED}))   # as if OPEN -> LOCKED were not
    with pytest.raises(IllegalTransition, match="from OPEN to LOCKED"):
        d.do(command="lock")
    assert d.table.state is OPEN


def test_a_whole_hand_moves_only_along_the_table() -> None:
    d = Driver()
    cali_hand(d)
    d.cards("As 9c Kd 2s 9d Kh")
    d.do(command="decide", spot=1, decision="raise")
    d.do(command="decide", spot=2, decision="check")
    d.cards("3h 4h 5c")
    d.do(command="decide", spot=2, decision="bet")
    moves = [(TableState(e.previous), TableState(e.state)) for e in d.events
             if type(e) is StateChanged]
    assert moves[-1][1] is SETTLED
    for previous, state in moves:
        assert state in TRANSITIONS[previous]


def test_reload_is_not_carried_out_by_the_table_itself() -> None:
    d = Driver()
    (refused,) = d.table.command(Reload(), "sam", "supervisor")
    assert type(refused) is CommandRefused and "Table.reload" in refused.reason

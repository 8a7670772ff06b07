"""The lamp policy: a pure function of the table's events."""

from __future__ import annotations

from controller.core import lamps
from controller.core.events import DecisionMade, DecisionsDue, ProgressiveAwarded, WagerSettled
from controller.core.table_events import StateChanged, WagerCancelled, WagerPlaced
from controller.core.table_states import TableState
from controller.core.vocabulary import WagerKey


def test_each_event_lights_its_lamps() -> None:
    assert lamps.lamps_after(StateChanged(TableState.OPEN, TableState.SETTLED, "next hand"), {}) == [(0, "attract")]
    assert lamps.lamps_after(StateChanged(TableState.CLOSED, TableState.OPEN, "closed"), {}) == [(0, "off")]
    assert lamps.lamps_after(StateChanged(TableState.LOCKED, TableState.OPEN, "locked"), {}) == []
    assert lamps.lamps_after(WagerPlaced(3, WagerKey.ANTE, 500, "", "dealer"), {}) == \
        [(3, "wager_accepted")]
    cancelled = WagerCancelled(3, WagerKey.ANTE, 500, "dealer")
    assert lamps.lamps_after(cancelled, {3: {"xtra_bonus": 500}}) == [(3, "wager_accepted")]
    assert lamps.lamps_after(cancelled, {3: {}}) == [(3, "attract")]
    assert lamps.lamps_after(DecisionMade(2, "raise", 3000, ()), {}) == [(2, "wager_accepted")]
    assert lamps.lamps_after(DecisionsDue("pre-flop", (1, 4), ("raise", "check")), {}) == \
        [(1, "to_act"), (4, "to_act")]


def test_a_settled_hand_lights_each_spot_by_its_net_and_awards() -> None:
    history = [WagerSettled(4, "ante", 1000, "lose", -1000),
               WagerSettled(4, "bonus", 1000, "lose", -1000),
               WagerSettled(1, "ante", 1000, "win", 1000),
               WagerSettled(2, "ante", 1000, "push", 0),
               WagerSettled(3, "ante", 1000, "lose", -1000),
               WagerSettled(3, "progressive", 100, "lose", -100),
               ProgressiveAwarded(3, "5-high", 300)]
    assert lamps.settlement_lamps(history) == [
        (1, "win"), (2, "push"), (3, "progressive_winner"), (4, "lose")]


def test_a_sensor_that_disagrees_with_the_locked_wagers() -> None:
    locked = {1: {"ante": 500, "bonus": 500, "progressive": 100}, 2: {"ante": 500}}
    assert lamps.sensor_lamp(1, True, locked) == []
    assert lamps.sensor_lamp(1, False, locked) == [(1, "changed_after_lock")]
    assert lamps.sensor_lamp(2, True, locked) == [(2, "changed_after_lock")]
    assert lamps.sensor_lamp(5, False, locked) == []

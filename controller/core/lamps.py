"""The lamp policy: which lamp a betting spot shows, as a pure function of the table's events.

Each function answers "after this event, which spots show which lamp" as ``(spot, lamp)``
pairs (spot 0 = every spot); the table lights them, once each (a spot already showing the
lamp is not set again), right after the event. The spot controller's driver maps each lamp
to a colour and mode.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from controller.core.events import DecisionMade, DecisionsDue, ProgressiveAwarded, WagerSettled
from controller.core.table_events import StateChanged, WagerCancelled, WagerPlaced
from controller.core.vocabulary import SpotLamp

ATTRACT, WAGER_ACCEPTED, CHANGED_AFTER_LOCK, TO_ACT = (
    SpotLamp.ATTRACT, SpotLamp.WAGER_ACCEPTED, SpotLamp.CHANGED_AFTER_LOCK, SpotLamp.TO_ACT)
WIN, LOSE, PUSH, PROGRESSIVE_WINNER = (
    SpotLamp.WIN, SpotLamp.LOSE, SpotLamp.PUSH, SpotLamp.PROGRESSIVE_WINNER)
#: A linked table's pool channel is down: no progressive wager is taken.
PROGRESSIVE_CLOSED = SpotLamp.PROGRESSIVE_CLOSED
#: Every spot dark: the table is closed.
OFF = SpotLamp.OFF
ALL_SPOTS = 0

Lighting = list[tuple[int, SpotLamp]]


def lamps_after(event: object, layout: Mapping[int, Mapping[str, int]],
                progressive_closed: bool = False) -> Lighting:
    """The lamps an event lights. ``layout``: the wagers on the layout after the event;
    ``progressive_closed``: a linked table's pool channel is down.

    - the table opens (or opens for the next hand): every spot attracts, or shows that the
      progressive is closed; it closes: all off;
    - a wager placed, or a decision made, on a spot: wager accepted;
    - a wager cancelled: wager accepted while the spot keeps another wager, else attract;
    - decisions due: those spots are to act.
    """
    kind = type(event)
    if kind is StateChanged:
        assert isinstance(event, StateChanged)
        lamp = {"OPEN": PROGRESSIVE_CLOSED if progressive_closed else ATTRACT,
                "CLOSED": OFF}.get(event.state)
        return [] if lamp is None else [(ALL_SPOTS, lamp)]
    if kind is WagerPlaced:
        assert isinstance(event, WagerPlaced)
        return [(event.spot, WAGER_ACCEPTED)]
    if kind is WagerCancelled:
        assert isinstance(event, WagerCancelled)
        return [(event.spot, WAGER_ACCEPTED if layout.get(event.spot) else ATTRACT)]
    if kind is DecisionMade:
        assert isinstance(event, DecisionMade)
        return [(event.seat, WAGER_ACCEPTED)]
    if kind is DecisionsDue:
        assert isinstance(event, DecisionsDue)
        return to_act(event.seats)
    return []


def to_act(spots: Iterable[int]) -> Lighting:
    """The spots whose decision the hand waits for (when decisions fall due, or when a
    paused hand continues)."""
    return [(spot, TO_ACT) for spot in spots]


def settlement_lamps(history: Iterable[object]) -> Lighting:
    """Each spot of a settled hand, in spot order, from the hand's events: a progressive
    award shows the progressive winner; otherwise the spot's net over all its wagers shows
    win, lose or push."""
    nets: dict[int, int] = {}
    winners: set[int] = set()
    for event in history:
        if type(event) is WagerSettled:
            assert isinstance(event, WagerSettled)
            nets[event.seat] = nets.get(event.seat, 0) + event.net
        elif type(event) is ProgressiveAwarded:
            assert isinstance(event, ProgressiveAwarded)
            nets[event.seat] = nets.get(event.seat, 0) + event.amount
            winners.add(event.seat)
    return [(spot, PROGRESSIVE_WINNER if spot in winners
             else WIN if net > 0 else LOSE if net < 0 else PUSH)
            for spot, net in sorted(nets.items())]


def sensor_lamp(spot: int, covered: bool, locked: Mapping[int, Mapping[str, int]]) -> Lighting:
    """A progressive sensor during a hand: a spot whose sensor disagrees with the wagers
    locked for the hand shows that the layout changed after the lock."""
    if covered != ("progressive" in locked.get(spot, {})):
        return [(spot, CHANGED_AFTER_LOCK)]
    return []


def progressive_reopened(shown: Mapping[int, SpotLamp | str],
                         layout: Mapping[int, Mapping[str, int]]) -> Lighting:
    """The pool channel is back on an open table: each spot that showed the progressive
    closed shows its wagers accepted, or attracts."""
    return [(spot, WAGER_ACCEPTED if layout.get(spot) else ATTRACT)
            for spot, lamp in sorted(shown.items()) if lamp == PROGRESSIVE_CLOSED]

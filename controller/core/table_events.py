"""What the table yields around a hand: state changes, wagers, faults, supervisor actions,
lamps and the meter. The hand's own events are in :mod:`controller.core.events`.

These are immutable NamedTuples (the hand's events are records with the same API, see
:mod:`controller.core.events`); :data:`KINDS` names them on the wire.
"""

from __future__ import annotations

from typing import NamedTuple, Union

from controller.core.cards import Card
from controller.core.events import Wager, kinds_of

# Table states (SPEC section 6). PAUSED is reachable from every in-hand state.
CLOSED, OPEN, LOCKED, DEALING, DECIDING, SETTLED, PAUSED = (
    "CLOSED", "OPEN", "LOCKED", "DEALING", "DECIDING", "SETTLED", "PAUSED")
STATES = (CLOSED, OPEN, LOCKED, DEALING, DECIDING, SETTLED, PAUSED)
IN_HAND = frozenset({LOCKED, DEALING, DECIDING, PAUSED})


class TableOpened(NamedTuple):
    """The table opened for betting with this game and paytable."""

    table_id: str
    game: str
    paytable: str
    paytable_status: str


class TableClosed(NamedTuple):
    by: str


class StateChanged(NamedTuple):
    state: str
    previous: str
    reason: str


class WagerPlaced(NamedTuple):
    """A wager on a spot while the table is open. ``source``: ``dealer`` or ``sensor``."""

    spot: int
    wager: str
    amount: int
    player: str
    source: str


class WagerCancelled(NamedTuple):
    spot: int
    wager: str
    amount: int
    source: str


class LockRefused(NamedTuple):
    """The wagers could not be locked; each problem names the spot."""

    problems: tuple[str, ...]


class HandStarted(NamedTuple):
    hand_id: str
    game: str
    paytable: str
    number: int


class ShoeCard(NamedTuple):
    """A card as the shoe reported it, before the deal order assigns it (surveillance sees
    every card, including one that the hand refuses). ``count`` is the shoe's card count
    since its last shuffle or reset; ``during_pause`` marks a card that left the shoe while
    the table was PAUSED."""

    card: Card
    shoe_seq: int
    tag: str
    count: int
    during_pause: bool


class Fault(NamedTuple):
    """Something stopped the hand; the table is PAUSED until a dealer or supervisor acts.

    ``code`` is one of :data:`FAULT_CODES`; ``recoverable`` says whether the dealer may
    continue (a device fault) or only a supervisor can void (a misdeal)."""

    code: str
    detail: str
    device: str
    recoverable: bool


class HandContinued(NamedTuple):
    by: str


class HandVoided(NamedTuple):
    """A supervisor voided the hand: every wager is returned and the progressive
    contributions of the hand come off the meter."""

    hand_id: str
    by: str
    reason: str
    returned: tuple[Wager, ...]
    contributions_reversed: int


class JackpotPending(NamedTuple):
    """A jackpot was hit: the hand-pay waits for a supervisor's verification."""

    hand_id: str
    seats: tuple[int, ...]
    amount: int


class JackpotVerified(NamedTuple):
    hand_id: str
    by: str
    meter: int


class MeterChanged(NamedTuple):
    """The jackpot meter's value now, and why it moved."""

    amount: int
    reason: str


class LampSet(NamedTuple):
    """A betting-spot lamp (spot 0 = all spots): ``lamp`` is the state it shows."""

    spot: int
    lamp: str


class SensorReport(NamedTuple):
    """A progressive wager sensor changed: chip ``covered`` or not."""

    spot: int
    covered: bool


class DeviceStatus(NamedTuple):
    device: str
    status: str
    detail: str


class CommandAccepted(NamedTuple):
    """A dealer or supervisor command the table carried out (journaled before its effect)."""

    command: str
    arguments: str
    by: str
    role: str


class CommandRefused(NamedTuple):
    command: str
    arguments: str
    by: str
    role: str
    reason: str


class RequestRefused(NamedTuple):
    """A snapshot or replay request refused on a replay socket (``family``: ``surveillance``
    or ``cms``); ``client`` is the client's CURVE key or network address."""

    family: str
    client: str
    reason: str


class RefusalsCounted(NamedTuple):
    """Refused commands from one client that were answered but not journaled one by one:
    after a client's first refusal in a window (journaled in full), the rest of the window's
    refusals are counted here. ``client`` is the client's CURVE key or network address."""

    client: str
    count: int
    window_ms: int
    last_command: str
    last_reason: str


class Alarm(NamedTuple):
    """Something surveillance must look at that does not stop the hand (``code``:
    ``credential_failures``)."""

    code: str
    detail: str


class ConfigApplied(NamedTuple):
    """The game configuration the table runs with from here on: when the table opens, when a
    supervisor reloads the config between hands, when the daemon starts with a changed file.
    ``fingerprint`` is the SHA-256 of the canonical JSON ``config`` (game, paytable and its
    lines, rules, limits, progressive); ``changed`` names the keys that differ from before.
    A replay applies ``config`` itself, so the table is rebuilt under the configuration it
    actually ran with."""

    fingerprint: str
    reason: str
    changed: tuple[str, ...]
    config: str


class JournalContinued(NamedTuple):
    """The first record of a journal that continues one a supervisor quarantined because its
    hash chain was broken (``lowball-table journal quarantine``). ``archived`` is the file the
    broken journal was moved to, kept whole; ``archived_seq`` and ``archived_hash`` its last
    record as found; ``first_bad_seq`` and ``broken`` where and how its chain broke. ``meter``
    is the jackpot meter carried over (the players' money), ``meter_from`` the record of the
    archived journal it comes from (the last verified ``meter_changed``, or null and "none"
    when no meter was journaled before the break: the table then starts at its seed)."""

    archived: str
    archived_seq: int
    archived_hash: str
    first_bad_seq: int
    broken: str
    meter: int | None
    meter_from: str
    by: str
    reason: str


FAULT_CODES = (
    "duplicate_card",     # a card already in this hand (misdeal)
    "unknown_tag",        # an RFID tag not in the registered deck
    "unexpected_card",    # a card when the hand expects none (too many cards for a step)
    "missing_cards",      # the step ended short of cards (too few cards for a step)
    "card_missing",       # the shoe's card count skipped: a card left it and never arrived
    "shoe_conflict",      # the shoe named another card for a SEQ and count already taken
    "shoe_jam", "shoe_misread", "shoe_door", "shoe_empty", "shoe_error",
    "device_lost",        # a device went silent or was unplugged mid-hand
    "controller_restart",  # the controller restarted (power cut, crash) with a hand in play
)

TableEvent = Union[TableOpened, TableClosed, StateChanged, WagerPlaced, WagerCancelled,
                   LockRefused, HandStarted, ShoeCard, Fault, HandContinued, HandVoided,
                   JackpotPending, JackpotVerified, MeterChanged, LampSet, SensorReport,
                   DeviceStatus, CommandAccepted, CommandRefused, RequestRefused,
                   RefusalsCounted, Alarm, ConfigApplied, JournalContinued]

KINDS: dict[type, str] = kinds_of(TableEvent)

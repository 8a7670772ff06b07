"""What the table yields around a hand: state changes, wagers, faults, supervisor actions,
lamps and the meter. The hand's own events are in :mod:`controller.core.events`.

Every event is a record, as the hand's are (:mod:`controller.core.records`); :data:`KINDS`
names them on the wire. A field whose values come from a fixed set is typed with its
vocabulary (:mod:`controller.core.vocabulary`, and
:class:`controller.core.table_states.TableState`).
"""

from __future__ import annotations

from typing import NamedTuple, Union

from controller.core.cards import Card
from controller.core import events as hand_events
from controller.core.events import HandSettled, Wager, kinds_of
from controller.core.table_states import (  # the states are declared with their transitions
    CLOSED as CLOSED,
    DEALING as DEALING,
    DECIDING as DECIDING,
    IN_HAND as IN_HAND,
    LOCKED as LOCKED,
    OPEN as OPEN,
    PAUSED as PAUSED,
    SETTLED as SETTLED,
    TableState as TableState,
)
from controller.core.vocabulary import (
    Device,
    DeviceCondition,
    FaultCode,
    Game,
    LinkStatus,
    PoolState,
    Role,
    ShoeFaultCode,
    SpotLamp,
    WagerKey,
    WagerSource,
)


class TableOpened(NamedTuple):
    """The table opened for betting with this game and paytable."""

    table_id: str
    game: Game
    paytable: str
    paytable_status: str


class TableClosed(NamedTuple):
    by: str


class StateChanged(NamedTuple):
    state: TableState
    previous: TableState
    reason: str


class WagerPlaced(NamedTuple):
    """A wager on a spot while the table is open. ``source``: ``dealer`` or ``sensor``."""

    spot: int
    wager: WagerKey
    amount: int
    player: str
    source: WagerSource


class WagerCancelled(NamedTuple):
    spot: int
    wager: WagerKey
    amount: int
    source: WagerSource


class LockRefused(NamedTuple):
    """The wagers could not be locked; each problem names the spot."""

    problems: tuple[str, ...]


class HandStarted(NamedTuple):
    """A hand began: its id and number, the game and paytable, and the dealer signed in at
    the table (``change_dealer``; "" when none is)."""

    hand_id: str
    game: Game
    paytable: str
    number: int
    dealer: str = ""


ShoeCard = NamedTuple("ShoeCard", [("card", Card), ("shoe_seq", int), ("tag", str),
                                   ("count", int), ("during_pause", bool)])
ShoeCard.__doc__ = (
    """A card as the shoe reported it, before the deal order assigns it (surveillance sees
    every card, including one that the hand refuses). ``count`` is the shoe's card count
    since its last shuffle or reset; ``during_pause`` marks a card that left the shoe while
    the table was PAUSED.""")


class Fault(NamedTuple):
    """Something stopped the hand; the table is PAUSED until a dealer or supervisor acts.

    ``recoverable`` says whether the dealer may continue (a device fault no card left the
    shoe by) or only a supervisor can act (a card out of the shoe not dealt, a misdeal);
    ``burnable`` whether the supervisor may burn the cards out of play and continue (where
    the card-room rules allow it) or only void the hand."""

    code: FaultCode
    detail: str
    device: Device
    recoverable: bool
    burnable: bool = False


class HandContinued(NamedTuple):
    by: str


class CardsBurned(NamedTuple):
    """A supervisor burned the cards that left the shoe in this hand and were dealt to no one
    (``cards``: each as read, ``??`` for one the shoe could not read; ``counts``: the shoe's
    card count of each), so the hand goes on where the rules allow it. ``reason`` is the
    supervisor's."""

    hand_id: str
    cards: tuple[str, ...]
    counts: tuple[int, ...]
    by: str
    reason: str


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
    lamp: SpotLamp


class SensorReport(NamedTuple):
    """A progressive wager sensor changed: chip ``covered`` or not."""

    spot: int
    covered: bool


class DeviceStatus(NamedTuple):
    """A device connected, was lost, or sent input its driver could not read."""

    device: Device
    status: DeviceCondition
    detail: str


class DeviceFault(NamedTuple):
    """A device reported a fault (the shoe's ``JAM``, ``MISREAD``, ``DOOR``, ``EMPTY``,
    ``TAGUNKNOWN``, ``DUPLICATE``), or its driver refused a frame that named another card for a
    sequence number already taken (``CONFLICT``). Mid-hand, a ``fault`` follows it."""

    device: Device
    code: ShoeFaultCode
    detail: str


class CommandAccepted(NamedTuple):
    """A dealer or supervisor command the table carried out (journaled before its effect).
    ``credential`` is what signed it: ``none`` (a dealer command), ``shared`` (the table's
    shared supervisor credential: ``by`` is only what the client wrote), ``own`` (a
    supervisor's own credential: ``by`` is that supervisor) or ``pin`` (a supervisor's PIN:
    ``by`` is that supervisor). ``client`` is the giver's CURVE
    key or network address; ``request_id`` the id the client gave the request (``""``: none),
    which a client that gave up on it names to withdraw it. ``asked_from``: the screen a
    console gave the command for, and the dealer signed in there (``""``: not a console's)."""

    command: str
    arguments: str
    by: str
    role: Role
    credential: str = "none"
    client: str = ""
    request_id: str = ""
    asked_from: str = ""


class CommandRefused(NamedTuple):
    command: str
    arguments: str
    by: str
    role: Role
    reason: str


class RequestRefused(NamedTuple):
    """A snapshot or replay request refused on a replay socket (``family``: ``surveillance``
    or ``cms``); ``client`` is the client's CURVE key or network address."""

    family: str
    client: str
    reason: str


RefusalsCounted = NamedTuple("RefusalsCounted", [
    ("client", str), ("count", int), ("window_ms", int), ("last_command", str),
    ("last_reason", str)])
RefusalsCounted.__doc__ = (
    """Refused commands from one client that were answered but not journaled one by one:
    after a client's first refusal in a window (journaled in full), the rest of the window's
    refusals are counted here. ``client`` is the client's CURVE key or network address.""")


class Alarm(NamedTuple):
    """Something surveillance must look at (``code``: ``credential_failures``;
    ``shoe_door_in_hand``, the shoe's door opened while a hand was in play;
    ``shoe_back_in_hand``, the shoe lost and connected again while a hand was in play;
    ``shoe_count_back``, the shoe's card count went back in the middle of a hand)."""

    code: str
    detail: str


class AlarmAcknowledged(NamedTuple):
    """A supervisor acknowledged the alarm journaled at ``seq`` (a fault, a device lost, an
    ``alarm``, a pending jackpot, counted refusals). ``by`` is who, as the daemon decided it
    from the credential; the record's ``ts`` is when."""

    seq: int
    by: str


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


class CarriedJackpot(NamedTuple):
    """A jackpot that awaited a supervisor's verification when its journal broke, carried
    into the journal that continues it: the hand, its seats, the hand-pay (``amount``) and
    the meter the verification resets to (``meter_after_reset``, the seed put back)."""

    hand_id: str
    seats: tuple[int, ...]
    amount: int
    meter_after_reset: int


class JournalContinued(NamedTuple):
    """The first record of a journal that continues one a supervisor quarantined because its
    hash chain was broken (``lowball-table journal quarantine``). ``archived`` is the file the
    broken journal was moved to, kept whole; ``archived_seq`` and ``archived_hash`` its last
    record as found (when damaged pages hide its end: a bound on its seqs, and "");
    ``first_bad_seq`` and ``broken`` where and how its chain broke. ``meter``
    is the jackpot meter carried over (the players' money): the last one the archived journal
    holds, read past the break (``meter_from`` names its record and says when it comes after
    the first bad one, so is found, not verified; null and "none" when no meter was journaled:
    the table then starts at its seed). ``verified_meter`` and ``verified_meter_from`` are the
    last meter before the first bad record (null and "none": none, or a journal quarantined
    before they were recorded). ``meter_held``: the table does not open until a supervisor
    confirms the meter (``adjust_meter``; an amount of 0 confirms it as it stands).
    ``pending_jackpots``: the jackpot (at most one) the archived journal left awaiting
    verification, read past the break: the table holds it pending as before (it does not
    open until a supervisor verifies the hand-pay, once). ``hand_number``: the highest hand
    number the archived journal used, read past the break; the table numbers its next hand
    after it, so no hand id of the table repeats (0: none, or a record written before it was
    recorded). The record's own seq follows ``archived_seq``: seqs do not repeat either.
    ``verified_hash``: the hash of record ``first_bad_seq`` - 1 as the quarantine verified it
    (64 zeros when it verified none): the anchor of the archived records a replay serves, which
    come only from a file whose chain from its first record recomputes to it ("": a record
    written before it was recorded; the archived journal's records are then not served)."""

    archived: str
    archived_seq: int
    archived_hash: str
    first_bad_seq: int
    broken: str
    meter: int | None
    meter_from: str
    verified_meter: int | None
    verified_meter_from: str
    meter_held: bool
    by: str
    reason: str
    pending_jackpots: tuple[CarriedJackpot, ...] = ()
    hand_number: int = 0
    verified_hash: str = ""


class PoolHit(NamedTuple):
    """A hit the linked pool claimed and whose verification it awaits: the table and hand,
    its place among the hits awaiting verification (1 locked the pool) and what it pays."""

    table_id: str
    hand_id: str
    lock_order: int
    paid: int


class PoolMeter(NamedTuple):
    """The linked pool's meter as the floor published it, journaled when what the table
    shows changes: the meter, and while the pool is ``locked`` the hits awaiting verification
    in lock order (the sign shows JACKPOT and the first one's table)."""

    pool_id: str
    meter: int
    state: PoolState
    hits: tuple[PoolHit, ...]


class PoolLink(NamedTuple):
    """The floor's pool channel: heard from again (``connected``), or silent longer than
    the table's ``stale_after_ms`` (``lost``: progressive wagers are refused at lock)."""

    pool_id: str
    status: LinkStatus
    detail: str


class JackpotClaimed(NamedTuple):
    """The linked pool claimed this table's pending jackpot: what it pays (``paid``, ``share``
    a seat) and its place among the hits (``lock_order``). Verification waits for it."""

    pool_id: str
    hand_id: str
    lock_order: int
    paid: int
    share: int


TableEvent = Union[TableOpened, TableClosed, StateChanged, WagerPlaced, WagerCancelled,
                   LockRefused, HandStarted, ShoeCard, Fault, HandContinued, CardsBurned,
                   HandVoided,
                   JackpotPending, JackpotVerified, MeterChanged, LampSet, SensorReport,
                   DeviceStatus, DeviceFault, CommandAccepted, CommandRefused, RequestRefused,
                   RefusalsCounted, Alarm, AlarmAcknowledged, ConfigApplied, JournalContinued,
                   PoolMeter, PoolLink, JackpotClaimed]

KINDS: dict[type, str] = kinds_of(TableEvent)
#: The wire names of the events that end a hand (settled, or voided by a supervisor).
HAND_ENDS = frozenset({hand_events.KINDS[HandSettled], KINDS[HandVoided]})

"""One table: spots and wagers, the hand in play, the jackpot meter, faults and lamps.

The table is pure: it is driven by *inputs* (dealer and supervisor commands, cards from the
shoe, device reports, wager sensors) and answers each with the list of events it caused, the
input's own record first. It does no I/O. The daemon journals that list in one transaction
before it publishes anything, lights a lamp or acknowledges anything, and after a restart
rebuilds the table by feeding the journaled inputs back through :meth:`Table.replay`. Since the
table is deterministic, the rebuilt table stands at the exact step the hand had reached.

The table keeps the state and carries out the inputs; its parts each have a module:

- :mod:`controller.core.table_states`: the states and the transition table, checked on every
  change (a jackpot also holds the table after settlement until a supervisor verifies it);
- :mod:`controller.core.commands`: the commands, carried out by ``match`` on their class;
- :mod:`controller.core.lamps`: which lamp each spot shows, a pure function of the events;
- :mod:`controller.core.table_view`: the dealer's prompt and the snapshot;
- the game's engine (:mod:`controller.core.games`): everything that depends on the game;
- :mod:`controller.core.table_settings`: the game settings it runs under.
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice
from typing import Any

from controller.core.cards import Card
from controller.core.events import (
    CardDealt,
    DecisionMade,
    DecisionsDue,
    Event,
    MeterContributed,
    MeterSettled,
    ProgressiveAwarded,
    WagerSettled,
)
from controller.core.commands import (
    DEALER_ROLE,
    SUPERVISOR_ROLE,
    AcknowledgeAlarm,
    AdjustMeter,
    Burn,
    Cancel,
    ChangeDealer,
    Close,
    Command,
    Continue,
    Decide,
    Lock,
    Open,
    Place,
    Reload,
    SeatPlayer,
    SignIn,
    VerifyJackpot,
    Void,
    command_from_record,
)
from controller.core import lamps, table_view
from controller.core.money import format_cents
from controller.core.player_key import one_player_each
from controller.core.games import ENGINES, Decision, DuplicateCard, Hand, IllegalAction, WagerError
from controller.errors import LowballError
from controller.core.vocabulary import (
    Device,
    DeviceCondition,
    FaultCode,
    LinkStatus,
    Phase,
    PoolState,
    ShoeFaultCode,
    SpotLamp,
    WagerKey,
    WagerSource,
)
from controller.core.table_settings import (
    REGULATED,
    GameSettings,
    GameSetup,
    Limits,
    settings_changed,
)
from controller.core.table_states import (
    CLOSED,
    DEALING,
    DECIDING,
    IN_HAND,
    LOCKED,
    OPEN,
    PAUSED,
    SETTLED,
    TableState,
    check_transition,
)
from controller.core.table_events import (
    Alarm,
    AlarmAcknowledged,
    CardsBurned,
    CommandAccepted,
    CommandRefused,
    ConfigApplied,
    DeviceFault,
    DeviceStatus,
    Fault,
    HandContinued,
    HandStarted,
    HandVoided,
    JackpotClaimed,
    JackpotPending,
    JackpotVerified,
    JournalContinued,
    LampSet,
    LockRefused,
    MeterChanged,
    PoolHit,
    PoolLink,
    PoolMeter,
    SensorReport,
    ShoeCard,
    StateChanged,
    TableClosed,
    TableEvent,
    TableOpened,
    WagerCancelled,
    WagerPlaced,
)

AnyEvent = Event | TableEvent

#: Shoe fault codes (as the shoe reports them, and CONFLICT: the driver refused a frame that
#: reused the last SEQ with other content) -> the table's fault and whether the dealer may
#: continue once it is cleared. A card out of the shoe and dealt to no one (a misread) is a
#: supervisor's to burn or void; a duplicate, an unknown tag or a conflict is a misdeal: void.
SHOE_FAULTS: dict[str, tuple[FaultCode, bool]] = {
    "JAM": (FaultCode.SHOE_JAM, True), "MISREAD": (FaultCode.SHOE_MISREAD, False),
    "DOOR": (FaultCode.SHOE_DOOR, True), "EMPTY": (FaultCode.SHOE_EMPTY, True),
    "TAGUNKNOWN": (FaultCode.UNKNOWN_TAG, False), "DUPLICATE": (FaultCode.DUPLICATE_CARD, False),
    "CONFLICT": (FaultCode.SHOE_CONFLICT, False),
}
#: The faults a supervisor may clear by burning the cards out of play and going on, once the
#: starting hands are complete: a card exposed or out of order on the draw is replaced, the
#: draw completed in order (Roberts' lowball rule 9); in the starting deal the same card is a
#: misdeal (rule 1: cards out of sequence, an incorrect number of cards): void.
BURNABLE = frozenset({FaultCode.SHOE_MISREAD, FaultCode.UNEXPECTED_CARD,
                      FaultCode.CARD_MISSING})
#: What each shoe fault means, in the dealer's words (the shoe's code follows in the text).
SHOE_WORDS: dict[str, str] = {
    "JAM": "the shoe is jammed", "MISREAD": "a card left the shoe unread",
    "DOOR": "the shoe's door is open", "EMPTY": "the shoe is empty",
    "TAGUNKNOWN": "a card the shoe does not know came out",
    "DUPLICATE": "the shoe read a card already out",
    "CONFLICT": "the shoe named two cards for one",
}
#: The devices as a dealer names them.
DEVICE_WORDS: dict[str, str] = {"shoe": "shoe", "spots": "spot lamps", "meter": "meter sign",
                                "controller": "table's controller"}
#: The phases of the starting deal (a card out of play there is a misdeal).
STARTING_DEAL = frozenset({Phase.HOLE_CARDS, Phase.DEAL})
#: How a card the shoe could not read is written among the cards burned.
UNREAD = "??"
#: Shoe faults that stand for a card out of the shoe (it left unread, or with a tag not in
#: the deck): each takes one card count.
CARD_FAULTS = frozenset({"MISREAD", "TAGUNKNOWN"})
#: The card count of a card journaled before shoes reported one (a shoe's count starts at 1).
UNCOUNTED = 0


class CommandError(LowballError, ValueError):
    """A command the table refuses now; the message says why."""


@dataclass
class PendingJackpot:
    hand_id: str
    seats: tuple[int, ...]
    amount: int
    meter_after_reset: int
    #: on a linked table, what the pool pays (its claim); verification waits for it
    claimed: JackpotClaimed | None = None


class Table:
    def __init__(self, table_id: str, settings: GameSettings):
        self.table_id = table_id
        #: the game settings in force (journaled with every ConfigApplied)
        self.settings = settings
        self.state: TableState = CLOSED
        self.hand: Hand | None = None
        self.hand_id: str | None = None
        self.hand_number = 0
        #: the jackpot meter (the players' money): the progressive's seed on a new journal;
        #: then it moves only by contributions, awards, voids and a supervisor's adjustment,
        #: whatever game the table runs (Cali LowBall carries it untouched)
        self.meter = settings.setup.progressive.seed
        #: the meter was carried over from a quarantined journal and no supervisor has
        #: confirmed it yet: the table does not open (journal_continued's meter_held)
        self.meter_held = False
        #: wagers on the layout for the next hand: spot -> wager -> amount
        self.wagers: dict[int, dict[str, int]] = defaultdict(dict)
        #: who plays each spot in the next hand, as a ``place`` named them (for that hand)
        self.players: dict[int, str] = {}
        #: who sits at each spot, as ``seat_player`` named them: kept hand after hand
        self.seated: dict[int, str] = {}
        #: the dealer signed in at the table (``change_dealer``; "" when none is)
        self.dealer = ""
        self.fault: Fault | None = None
        self.jackpot: PendingJackpot | None = None
        self.lamps: dict[int, SpotLamp] = {}
        #: (shoe seq, card, tag, count) of the last card accepted from the shoe, to recognise
        #: a resend (the same four) and a conflict (the same seq and count, another card)
        self.last_shoe_card: tuple[int, Card, str, int] | None = None
        #: the shoe's card count as far as the table knows (the last card's, plus the cards
        #: a misread or an unknown tag took); None before the first card
        self.shoe_count: int | None = None
        #: the count of the hand in play's first card out of the shoe (None before it): from
        #: then on, until the hand is over, the count only goes on, whatever fault came
        #: before (a shoe reloaded mid-hand is never dealt into it)
        self.hand_first_count: int | None = None
        #: the cards of the hand in play that left the shoe and went to no one, with their
        #: counts (a misread is UNREAD): a supervisor burns them or voids the hand
        self.out_of_play: list[tuple[str, int]] = []
        #: the shoe's trouble during the hand in play (faults, the shoe lost or back), named
        #: by the alarm if its count goes back
        self.shoe_trouble: list[str] = []
        #: devices reported lost and not yet back (a device fault waits for them)
        self.devices_down: set[str] = set()
        #: the most recently settled hand (shown until the next one settles)
        self.last_settled_hand: str | None = None
        self.last_settlement: list[WagerSettled] = []
        #: the progressive awards of the last settled hand: what the dealer pays, and to whom
        self.last_awards: list[ProgressiveAwarded] = []
        #: the hand a supervisor voided last, and how many cards it had out of the shoe: what
        #: the dealer gives back, shown until the next hand locks
        self.last_void: tuple[HandVoided, int] | None = None
        #: a linked table's pool channel as last journaled (None: not heard from yet)
        self.pool_link: LinkStatus | None = None
        #: the linked pool's meter as last journaled (what the sign shows)
        self.pool_shown: PoolMeter | None = None

    @property
    def setup(self) -> GameSetup:
        return self.settings.setup

    @property
    def limits(self) -> Limits:
        return self.settings.limits

    @property
    def fingerprint(self) -> str:
        return self.settings.fingerprint

    @property
    def game(self) -> str:
        return self.setup.game

    @property
    def pool(self) -> str | None:
        """The linked pool whose meter this table shows and pays, or None."""
        return self.setup.progressive.pool

    def progressive_closed(self) -> bool:
        """A linked table whose pool channel is not connected takes no progressive wager."""
        return self.pool is not None and self.pool_link != LinkStatus.CONNECTED

    @property
    def engine(self) -> type[Hand]:
        """The game's engine: what the table knows of the game is asked of it."""
        return ENGINES[self.setup.game]

    # -- inputs ---------------------------------------------------------------------------

    def command(self, command: Command, by: str, role: str) -> list[AnyEvent]:
        """Carry out a command (:mod:`controller.core.commands`).

        Returns ``[CommandAccepted, effects...]``, or ``[CommandRefused]`` naming why.
        """
        if type(command).supervisor_only and role != SUPERVISOR_ROLE:
            name = command.command
            return [CommandRefused(name, command.arguments(), by, role,
                                   f"'{name}' needs the supervisor credential")]
        return self._carry_out(command, by, role)

    # -- verify, can (pokerkit's pattern): the rules of each command, asked without acting --

    def verify(self, command: Command, role: str = DEALER_ROLE) -> None:
        """Raise (:class:`CommandError`, or the hand's :class:`IllegalAction` or
        :class:`WagerError`) naming why the table would refuse ``command`` from ``role`` now;
        change nothing. ``reload`` is verified as the console offers it: between hands (a
        reload mid-hand is the table's to refuse per key, :meth:`reload`)."""
        if type(command).supervisor_only and role != SUPERVISOR_ROLE:
            raise CommandError(f"'{command.command}' needs the supervisor credential")
        match command:
            case Place():
                self._verify_place(command)
            case SeatPlayer():
                self._verify_seat_player(command)
            case ChangeDealer():
                self._verify_change_dealer(command)
            case Cancel():
                self._verify_cancel(command)
            case Decide():
                self._verify_decide(command)
            case Lock():
                self._verify_lock()
            case Open():
                self._verify_open()
            case Close():
                self._verify_close()
            case Continue():
                self._verify_continue()
            case Void():
                self._verify_void()
            case Burn():
                self._verify_burn()
            case VerifyJackpot():
                self._verify_verify_jackpot()
            case AdjustMeter():
                self._verify_adjust_meter(command)
            case Reload():
                if not self.between_hands():
                    raise CommandError("reload between hands (no hand in play, no jackpot "
                                       "pending): the game settings change only then")
            case SignIn() | AcknowledgeAlarm():
                pass  # which seqs are alarms is the daemon's to know (it owns the journal)

    def can(self, command: Command, role: str = DEALER_ROLE) -> bool:
        """Whether the table would take ``command`` from ``role`` now."""
        try:
            self.verify(command, role)
        except (CommandError, IllegalAction, WagerError):
            return False
        return True

    def allowed(self) -> dict[str, list[dict[str, Any]]]:
        """The commands the table takes now, the dealer's and those only a supervisor may
        give, each with the arguments a button needs (a spot's decision, a wager to cancel;
        ``place`` and a supervisor's reasons are typed, so named only), and apart, the
        ``seating`` commands (who plays a spot, who deals). What the screens show as buttons:
        they derive nothing themselves."""
        dealer: list[dict[str, Any]] = [{"command": name} for name, command in (
            ("open", Open()), ("close", Close()), ("continue", Continue()))
            if self.can(command)]
        if self.can(Lock()) and any(self.wagers.values()):  # (its problems: the lock's answer)
            dealer.append({"command": "lock"})
        if self.state in (OPEN, SETTLED) and self.hand is None and self.jackpot is None:
            dealer.append({"command": "place"})
            dealer += [{"command": "cancel", "spot": spot, "wager": wager}
                       for spot, amounts in sorted(self.wagers.items()) for wager in amounts]
        hand = self.hand
        if hand is not None and self.state in (DECIDING, DEALING, LOCKED):
            step = hand.next_step()
            if step.kind == "decision":
                dealer += [{"command": "decide", "spot": spot, "decision": str(option)}
                           for spot in step.seats for option in step.options]
        supervisor = [{"command": name} for name, command in (
            ("burn", Burn("-")), ("void", Void("-")), ("verify_jackpot", VerifyJackpot()),
            ("reload", Reload())) if self.can(command, SUPERVISOR_ROLE)]
        # the dealer's commands that name who is at the table (a spot's player, the dealer):
        # between hands; typed, so named only
        seating = [{"command": name} for name in ("seat_player", "change_dealer")] \
            if self.hand is None and self.state not in IN_HAND else []
        return {"dealer": dealer, "supervisor": supervisor, "seating": seating}

    def _carry_out(self, command: Command, by: str, role: str) -> list[AnyEvent]:
        """A command whose giver may give it: accepted with its effects, or refused by the
        state of the table."""
        name, arguments = command.command, command.arguments()
        try:
            effects = self._effects(command, by)
        except (CommandError, IllegalAction, WagerError) as error:
            return [CommandRefused(name, arguments, by, role, str(error))]
        return [CommandAccepted(name, arguments, by, role), *effects]

    def _effects(self, command: Command, by: str) -> list[AnyEvent]:
        match command:
            case Place():
                return self._place(command)
            case SeatPlayer():
                return self._seat_player(command)
            case ChangeDealer():
                return self._change_dealer(command)
            case Cancel():
                return self._cancel(command)
            case Decide():
                return self._decide(command)
            case Lock():
                return self._lock()
            case Open():
                return self._open(by)
            case Close():
                return self._close(by)
            case Continue():
                return self._continue(by)
            case Void():
                return self._void(command, by)
            case Burn():
                return self._burn(command, by)
            case VerifyJackpot():
                return self._verify_jackpot(by)
            case AdjustMeter():
                return self._adjust_meter(command, by)
            case SignIn():
                return []
            case AcknowledgeAlarm():
                return [AlarmAcknowledged(command.seq, by)]
            case Reload():
                raise CommandError("reload: the daemon reads the config file and gives the "
                                   "table its settings (Table.reload)")
        raise CommandError(f"{command.command}: not a command the table knows")

    def shoe_card(self, card: Card, shoe_seq: int, tag: str, count: int, *,
                  dealt_then: bool | None = None) -> list[AnyEvent]:
        """A card left the shoe, the ``count``-th since its last shuffle or reset.

        Dealt to its recipient by the deal order; or recognised as the last card sent again
        (counted once); or refused, with the hand paused, when the shoe contradicts itself
        (the last card's SEQ and count with another card), when the count skips (a card left
        the shoe and never arrived), or on a misdeal. A card that arrives while the hand is
        paused is marked ``during_pause`` (see :meth:`_deal_while_paused`).

        ``dealt_then`` (a replay): whether the journal shows the card dealt, for a card an
        older release dealt by rules this one no longer has."""
        record = ShoeCard(card, shoe_seq, tag, count, self.state == PAUSED)
        last = self.last_shoe_card
        if count == UNCOUNTED:
            # A card journaled before the shoes reported counts: replayed as it was played
            # then (a resend is the same SEQ and card), and the reckoning starts afresh.
            if last is not None and last[:2] == (shoe_seq, card):
                return [record]
            last = None
            self.shoe_count = None
        elif last == (shoe_seq, card, tag, count):
            # The shoe sent the last card again: its acknowledgement was lost (the controller
            # stopped between the journal commit and the acknowledgement). It is the same
            # card: record it, count it once.
            return [record]
        in_hand = self.state in IN_HAND and self.hand is not None
        if last is not None and last[3] == count and (last[0] == shoe_seq or count != 1):
            # The shoe names another card for the count it gave the last one (a count of 1
            # under a new SEQ is a new shuffle): the table keeps the card it has and refuses
            # this one. The count, not the SEQ alone, decides, for the SEQ wraps every 256
            # frames and the table sees only the cards.
            # (the RFID tags are in the shoe_card records: surveillance's; a tag in a text a
            # person reads would name its card there, where the card itself is hidden)
            self._out_of_play(str(card), count, in_hand)
            return [record, *self._pause(
                FaultCode.SHOE_CONFLICT, f"the shoe named two cards for one card: it sent card "
                f"{card} (SEQ {shoe_seq:02X}) as card count {count}, which was card {last[1]} "
                f"(SEQ {last[0]:02X}): refused",
                Device.SHOE, recoverable=False)]
        known = self.shoe_count
        if count != UNCOUNTED and in_hand and self.hand_first_count is not None \
                and known is not None and count <= known and not dealt_then:
            # The count went back in the middle of the hand: the shoe was reset or reloaded
            # (a door opened, a jam cleared, power cut) with cards whose order nobody saw
            # shuffled. Never dealt into the hand, whatever fault came first.
            self.last_shoe_card = (shoe_seq, card, tag, count)
            self.shoe_count = count
            self._out_of_play(str(card), count, in_hand)
            trouble = "; ".join(self.shoe_trouble) or "no fault reported"
            detail = (f"the shoe's card count went back from {known} to {count} in the middle "
                      f"of hand {self.hand_id} (the shoe's trouble this hand: {trouble}); "
                      f"card {card} not dealt")
            return [record, Alarm("shoe_count_back", detail),
                    *self._pause(FaultCode.COUNT_WENT_BACK, detail, Device.SHOE,
                                 recoverable=False)]
        missing = self._missing_counts(count) if count != UNCOUNTED else ""
        self.last_shoe_card = (shoe_seq, card, tag, count)
        self.shoe_count = count if count != UNCOUNTED else None
        if in_hand and count != UNCOUNTED and self.hand_first_count is None:
            self.hand_first_count = count
        if missing:
            self._out_of_play(str(card), count, in_hand)
            return [record, *self._pause(
                FaultCode.CARD_MISSING, f"{missing} left the shoe and never arrived (the shoe's card "
                f"count went to {count}); card {card} not dealt", Device.SHOE, recoverable=False)]
        if self.state == PAUSED and self.hand is not None and self.fault is not None \
                and self.fault.recoverable and self.hand.cards_expected():
            # A card the hand expects, out of the shoe while a device fault holds the hand
            # (dealt while the controller restarted or the cable was out, and offered again
            # by the shoe): the deal order says whose it is. Deal it; the hand stays paused.
            return [record, *self._deal_while_paused(card, count)]
        if self.hand is None or self.state not in (LOCKED, DEALING, DECIDING):
            # No hand, or a card out of the shoe while a fault holds the hand: it belongs to
            # no hand; in a hand a supervisor burns it or voids.
            why = "with no hand in play" if self.hand is None else \
                "while the hand was paused" if self.state == PAUSED else \
                f"while the table was {self.state}"
            self._out_of_play(str(card), count, in_hand)
            return [record, *self._pause(FaultCode.UNEXPECTED_CARD, f"an extra card came out of "
                                         f"the shoe {why}: card {card}, dealt to no one",
                                         Device.SHOE, recoverable=False)]
        if self.hand.cards_expected() == 0:
            self._out_of_play(str(card), count, in_hand)
            seats = self.hand.next_step().seats
            return [record, *self._pause(
                FaultCode.UNEXPECTED_CARD, f"an extra card came out of the shoe while "
                f"{_spots(seats)} {'was' if len(seats) == 1 else 'were'} deciding: card {card}, "
                f"dealt to no one", Device.SHOE, recoverable=False)]
        try:
            events: list[AnyEvent] = [record, *self.hand.deal(card)]
        except IllegalAction as error:
            self._out_of_play(str(card), count, in_hand)
            return [record, *self._pause(*_misdeal(error), Device.SHOE, recoverable=False)]
        return events + self._after_hand_step()

    def _out_of_play(self, card: str, count: int, in_hand: bool) -> None:
        """A card of the hand in play left the shoe and went to no one."""
        if in_hand:
            self.out_of_play.append((card, count))

    def _missing_counts(self, count: int) -> str:
        """The card counts that should have come before ``count`` and did not, in words
        ("" if none): a count follows the last one, or is 1 (the shoe was shuffled or reset
        between hands, or before the hand in play's first card); before the first card any
        count starts the table's reckoning. (A count that goes back once the hand in play has
        had a card is never taken: :meth:`shoe_card` pauses the hand before it asks.)"""
        known = self.shoe_count
        if known is None or count == 1 or count == known + 1:
            return ""
        first = known + 1 if count > known else 1
        if count - first == 1:
            return f"card count {first}"
        return f"card counts {first}-{count - 1}"

    def _deal_while_paused(self, card: Card, count: int) -> list[AnyEvent]:
        assert self.hand is not None
        try:
            events: list[AnyEvent] = list(self.hand.deal(card))
        except IllegalAction as error:
            self._out_of_play(str(card), count, True)
            return self._pause(*_misdeal(error), Device.SHOE, recoverable=False)
        if self.hand.next_step().kind == "settled":
            # The card completed the hand: it settles; nothing is left to pause.
            self.fault = None
            return events + self._settled()
        return events

    def shoe_fault(self, code: ShoeFaultCode, detail: str = "", *,
                   recoverable: bool | None = None) -> list[AnyEvent]:
        """The shoe reported a fault (JAM, MISREAD, DOOR, EMPTY, TAGUNKNOWN, DUPLICATE), or
        its driver refused a conflicting frame (CONFLICT)."""
        fault, ruled = SHOE_FAULTS.get(code, (FaultCode.SHOE_ERROR, True))
        # a replay: the way out the journal gave (an older release let the dealer continue
        # after a misread)
        recoverable = ruled if recoverable is None else recoverable
        record = DeviceFault(Device.SHOE, code, detail)
        in_hand = self.state in IN_HAND and self.hand is not None
        if code in CARD_FAULTS and self.shoe_count is not None:
            self.shoe_count += 1
            # the card took a count: it is a card of the hand, out of play
            self._out_of_play(UNREAD if code == "MISREAD" else f"tag {detail or '?'}",
                              self.shoe_count, in_hand)
            if in_hand and self.hand_first_count is None:
                self.hand_first_count = self.shoe_count
        if not in_hand:
            return [record]
        count = "no card yet" if self.shoe_count is None else f"card count {self.shoe_count}"
        self.shoe_trouble.append(f"{code} at {count}")
        events: list[AnyEvent] = [record]
        if code == "DOOR":
            events.append(Alarm("shoe_door_in_hand", f"the shoe's door was opened during hand "
                                                     f"{self.hand_id} ({count})"))
        # the shoe's own text (a raw frame, a tag) stays in its device_fault, surveillance's
        words = SHOE_WORDS.get(code, "the shoe reported a fault")
        return events + self._pause(fault, f"{words} (the shoe reported {code})", Device.SHOE,
                                    recoverable)

    def device_status(self, device: Device, status: DeviceCondition, detail: str = "") -> list[AnyEvent]:
        """A device connected or was lost. Lost mid-hand pauses the hand (recoverable)."""
        record = DeviceStatus(device, status, detail)
        if device in ("shoe", "controller") and status in ("lost", "connected", "restarted") \
                and self.state in IN_HAND:
            self.shoe_trouble.append(f"{device} {status}")
        alarms: list[AnyEvent] = []
        if status == "lost":
            self.devices_down.add(device)
        elif status == "connected":
            if device == "shoe" and device in self.devices_down and self.state in IN_HAND:
                # Nothing on the port tells one shoe from another but the card count, which
                # the shoe says: a shoe swapped while the cable was out deals on unseen.
                count = "no card yet" if self.shoe_count is None \
                    else f"card count {self.shoe_count}"
                alarms.append(Alarm("shoe_back_in_hand", f"the shoe was lost and is back "
                                    f"during hand {self.hand_id} ({count}): surveillance "
                                    f"checks it is the table's shoe, with its cards"))
            self.devices_down.discard(device)
        if alarms:
            return [record, *alarms]
        if status == "lost" and self.state in IN_HAND and device in ("shoe", "spots"):
            return [record, *self._pause(FaultCode.DEVICE_LOST, f"the {DEVICE_WORDS[device]} "
                                         f"stopped answering ({detail or 'lost'})", device, True)]
        if device == "controller" and status == "restarted" and self.state in IN_HAND:
            # The devices may have moved on while the controller was down: hold the hand
            # until the dealer has checked the layout and the shoe, then continue (or void).
            return [record, *self._pause(FaultCode.CONTROLLER_RESTART,
                                         f"the table's controller restarted during the hand: "
                                         f"check the layout and the shoe ({detail})",
                                         device, True)]
        return [record]

    def pool_meter(self, pool_id: str, meter: int, state: str,
                   hits: tuple[PoolHit, ...]) -> list[AnyEvent]:
        """The linked pool's meter as the floor published it (the daemon journals it when it
        differs from :attr:`pool_shown`): from now on the table's meter is the pool's, and the
        next hand locks with it."""
        record = PoolMeter(pool_id, meter, PoolState(state), hits)
        if pool_id != self.pool:
            return [record]
        self.pool_shown = record
        self.meter = meter
        return [record]

    def pool_link_status(self, pool_id: str, status: str, detail: str = "") -> list[AnyEvent]:
        """The pool channel heard from again, or silent too long: while it is not connected,
        progressive wagers are refused at lock and an open table's spots show it."""
        record = PoolLink(pool_id, LinkStatus(status), detail)
        if pool_id != self.pool:
            return [record]
        self.pool_link = record.status
        if self.state != OPEN:
            return [record]  # a hand's lamps stay; the next round's opening shows the link
        if record.status == LinkStatus.LOST:
            return [record, *self._light([(lamps.ALL_SPOTS, SpotLamp.PROGRESSIVE_CLOSED)])]
        return [record, *self._light(lamps.progressive_reopened(self.lamps, self.wagers))]

    def awaits_claim(self, hand_id: str) -> bool:
        """Whether the pool's claim of ``hand_id`` is what this table's jackpot waits for."""
        jackpot = self.jackpot
        return self.pool is not None and jackpot is not None and jackpot.hand_id == hand_id \
            and jackpot.claimed is None

    def jackpot_claimed(self, pool_id: str, hand_id: str, lock_order: int, paid: int,
                        share: int) -> list[AnyEvent]:
        """The pool claimed this table's pending jackpot: what it pays is the pool's. A claim
        whose amount is not its share times the jackpot's seats (each seat paid the share) is
        journaled as received and not taken: the dealer would pay what the pool's ledger does
        not say; verification waits for a claim that adds up."""
        record = JackpotClaimed(pool_id, hand_id, lock_order, paid, share)
        if pool_id == self.pool and self.awaits_claim(hand_id) and self.claim_adds_up(paid, share):
            assert self.jackpot is not None
            self.jackpot.claimed = record
        return [record]

    def claim_adds_up(self, paid: int, share: int) -> bool:
        """Whether a claim of the pending jackpot pays its share to each of its seats."""
        jackpot = self.jackpot
        return jackpot is not None and share > 0 and paid == share * len(jackpot.seats)

    def sensor(self, spot: int, covered: bool) -> list[AnyEvent]:
        """The progressive wager sensor of ``spot`` was covered or uncovered."""
        record = SensorReport(spot, covered)
        if not self.engine.HAS_PROGRESSIVE or not 1 <= spot <= self.settings.spots:
            return [record]
        amount = self.setup.progressive.wager
        if self.state in (OPEN, SETTLED) and self.jackpot is None:
            if covered and self.wagers[spot].get("progressive") != amount:
                self.wagers[spot]["progressive"] = amount
                return [record, *self._opened_for_betting(), *self._lit(WagerPlaced(
                    spot, WagerKey.PROGRESSIVE, amount, self.seated_player(spot),
                    WagerSource.SENSOR))]
            if not covered and "progressive" in self.wagers.get(spot, {}):
                del self.wagers[spot]["progressive"]
                return [record, *self._lit(WagerCancelled(spot, WagerKey.PROGRESSIVE, amount,
                                                          WagerSource.SENSOR))]
            return [record]
        if self.state in IN_HAND:
            locked = self.hand.wagers if self.hand is not None else {}
            return [record, *self._light(lamps.sensor_lamp(spot, covered, locked))]
        return [record]

    def reload(self, settings: GameSettings, by: str, role: str) -> list[AnyEvent]:
        """A supervisor's ``reload``: the game ``settings`` of the re-read config file. The
        game, paytable and progressive change only with no hand in play."""
        name, arguments = "reload", "{}"
        if role != SUPERVISOR_ROLE:
            return [CommandRefused(name, arguments, by, role,
                                   f"'{name}' needs the supervisor credential")]
        changed = settings_changed(self.settings, settings)
        regulated = [key for key in changed if key.split(".")[0] in REGULATED]
        if regulated and not self.between_hands():
            where = f"hand {self.hand_id} is in play ({self.state})" if self.jackpot is None \
                else f"the jackpot of hand {self.jackpot.hand_id} awaits verification"
            return [CommandRefused(name, arguments, by, role,
                                   f"{', '.join(regulated)} cannot change while {where}: "
                                   f"reload between hands")]
        if "game" in changed and self.state != CLOSED:
            return [CommandRefused(name, arguments, by, role,
                                   f"the game changes only while the table is CLOSED "
                                   f"(it is {self.state})")]
        return [CommandAccepted(name, arguments, by, role),
                self.apply_settings(settings, f"reloaded by {by}")]

    def between_hands(self) -> bool:
        """No hand in play and no jackpot pending: regulated settings may change."""
        return self.state in (OPEN, SETTLED, CLOSED) and self.hand is None \
            and self.jackpot is None

    def apply_settings(self, settings: GameSettings, reason: str) -> ConfigApplied:
        """Run under ``settings`` from now on; the event to journal (a replay applies it)."""
        changed = settings_changed(self.settings, settings)
        self.settings = settings
        return ConfigApplied(self.fingerprint, reason, changed, settings.text)

    # -- replay ---------------------------------------------------------------------------

    def replay(self, events: Iterable[AnyEvent]) -> None:
        """Rebuild the table from journaled events by feeding their inputs back.

        Only inputs are replayed (accepted commands, shoe cards and faults, device reports,
        sensors, and the configuration: a journaled ``config_applied`` is applied as it was
        journaled, so the table is rebuilt under the settings it ran with, whatever the config
        file says now); the table regenerates its own effects, exactly as before. The meter
        is then set to its last journaled value rather than re-derived (a ``meter_changed``,
        or the meter a quarantined journal's successor carried over), whatever the game.
        """
        meter: int | None = None
        # The events are read one at a time (a journal's may be millions): two kept ahead,
        # for the inputs whose effects decide how they are replayed.
        stream = iter(events)
        ahead: deque[AnyEvent] = deque(islice(stream, 2))
        while ahead:
            event = ahead.popleft()
            ahead.extend(islice(stream, 2 - len(ahead)))
            if type(event) is ConfigApplied:
                self.apply_settings(GameSettings.from_document(json.loads(event.config)),
                                    event.reason)
            elif type(event) is MeterChanged:
                meter = event.amount
            elif type(event) is JournalContinued:
                meter, self.meter_held = event.meter, event.meter_held
                # the archived journal's hands keep their ids: the next one is numbered after
                self.hand_number = max(self.hand_number, event.hand_number)
                for carried in event.pending_jackpots:
                    self.jackpot = PendingJackpot(carried.hand_id, tuple(carried.seats),
                                                  carried.amount, carried.meter_after_reset)
            elif type(event) is CommandAccepted and event.command == "reload":
                continue  # its effect is the ConfigApplied that follows it
            elif type(event) is CommandAccepted:
                # Who could give the command was decided when it was accepted (the journal
                # keeps the role the daemon gave it): a replay repeats the decision's effect,
                # it does not take the decision again.
                command = command_from_record(event.command, event.arguments)
                result = self._carry_out(command, event.by, event.role)
                if type(refused := result[0]) is CommandRefused:
                    raise RuntimeError(f"journal replay: {event.command} was accepted before "
                                       f"but is refused now: {refused.reason}")
            elif type(event) is ShoeCard:
                # Whether the card was dealt was decided when it was journaled: a journal of
                # an older release, whose rules took a card this one refuses (a count that
                # went back after a shoe fault), replays as it was played.
                # (a card dealt is journaled with its card_dealt right after it)
                self.shoe_card(event.card, event.shoe_seq, event.tag, event.count,
                               dealt_then=bool(ahead) and type(ahead[0]) is CardDealt)
            elif type(event) is DeviceFault:
                # (its fault, if it paused the hand, follows it, after an alarm at most)
                then = next((effect for effect in ahead if type(effect) is Fault), None)
                self.shoe_fault(event.code, event.detail,
                                recoverable=None if then is None else then.recoverable)
            elif type(event) is DeviceStatus:
                self.device_status(event.device, event.status, event.detail)
            elif type(event) is SensorReport:
                self.sensor(event.spot, event.covered)
            elif type(event) is PoolMeter:
                self.pool_meter(event.pool_id, event.meter, event.state, event.hits)
                if event.pool_id == self.pool:
                    meter = event.meter
            elif type(event) is PoolLink:
                self.pool_link_status(event.pool_id, event.status, event.detail)
            elif type(event) is JackpotClaimed:
                self.jackpot_claimed(event.pool_id, event.hand_id, event.lock_order, event.paid,
                                     event.share)
        if meter is not None:
            self.meter = meter

    # -- commands -------------------------------------------------------------------------

    def _verify_open(self) -> None:
        if self.state not in (CLOSED, SETTLED):
            raise CommandError(f"the table is {self.state}; it opens from CLOSED or SETTLED")
        if self.jackpot is not None:
            raise CommandError(f"jackpot of hand {self.jackpot.hand_id} awaits a "
                               f"supervisor's verification")
        if self.meter_held and self.pool is None:   # a linked table's meter is the pool's
            raise CommandError(f"the jackpot meter ({format_cents(self.meter)}) was carried over "
                               f"from a quarantined journal: a supervisor confirms it first "
                               f"(adjust_meter; an amount of 0 confirms it as it stands)")

    def _open(self, by: str) -> list[AnyEvent]:
        self._verify_open()
        events: list[AnyEvent] = []
        if self.state == CLOSED:
            paytable = self.setup.paytable
            events.append(ConfigApplied(self.fingerprint, "table opened", (),
                                        self.settings.text))
            events.append(TableOpened(self.table_id, self.game, self.setup.paytable_name,
                                      paytable.status))
            if self.engine.HAS_PROGRESSIVE:
                events.append(MeterChanged(self.meter, "table opened"))
        return events + self._lit(*self._set_state(OPEN, f"opened by {by}"))

    def _verify_close(self) -> None:
        if self.state in IN_HAND:
            raise CommandError(f"a hand is in play ({self.state}); void it or finish it first")
        if self.state == CLOSED:
            raise CommandError("the table is already closed")
        if any(self.wagers.values()):
            raise CommandError("wagers are on the layout; cancel them first")

    def _close(self, by: str) -> list[AnyEvent]:
        self._verify_close()
        self.seated = {}  # the players leave with the table closed
        return [TableClosed(by), *self._lit(*self._set_state(CLOSED, f"closed by {by}"))]

    def _verify_place(self, command: Place) -> None:
        if self.state not in (OPEN, SETTLED):
            raise CommandError(f"wagers are taken only while the table is OPEN "
                               f"(it is {self.state})")
        self._verify_betting()
        spots = self.settings.spots
        if command.spot > spots:
            raise CommandError(f"spot {command.spot}: this table has spots 1 to {spots}")
        engine = self.engine
        if command.wager not in engine.WAGER_KEYS:
            raise CommandError(f"spot {command.spot}: {command.wager!r} is not a {self.game} "
                               f"wager (wagers: {', '.join(engine.WAGER_KEYS)})")
        problem = self.wager_limit_problem(command.spot, command.wager, command.amount) or \
            engine.wager_problem(self.setup, command.spot, command.wager, command.amount)
        if problem is not None:
            raise CommandError(problem)

    def _place(self, command: Place) -> list[AnyEvent]:
        self._verify_place(command)
        events = self._opened_for_betting()
        self.wagers[command.spot][command.wager] = command.amount
        if command.player:
            self.players[command.spot] = command.player
        return events + self._lit(WagerPlaced(command.spot, WagerKey(command.wager),
                                              command.amount,
                                              self.seated_player(command.spot),
                                              WagerSource.DEALER))

    def _verify_seat_player(self, command: SeatPlayer) -> None:
        if self.hand is not None or self.state in IN_HAND:
            raise CommandError(f"spot {command.spot}: a player is named between hands (a hand "
                               f"is in play: {self.state})")
        if command.spot > self.settings.spots:
            raise CommandError(f"spot {command.spot}: this table has spots 1 to "
                               f"{self.settings.spots}")
        if self.seated_player(command.spot) == command.player:
            raise CommandError(f"spot {command.spot} is already " + (
                f"player {command.player!r}" if command.player else "unrated"))

    def _seat_player(self, command: SeatPlayer) -> list[AnyEvent]:
        self._verify_seat_player(command)
        for names in (self.seated, self.players):
            if command.player:
                names[command.spot] = command.player
            else:
                names.pop(command.spot, None)
        return []

    def seated_player(self, spot: int) -> str:
        """Who plays ``spot`` in the next hand ("" when unrated): the player a ``place``
        named for it, else the one seated there."""
        return self.players.get(spot) or self.seated.get(spot, "")

    def _verify_change_dealer(self, command: ChangeDealer) -> None:
        if self.hand is not None or self.state in IN_HAND:
            raise CommandError(f"the dealer changes between hands (a hand is in play: "
                               f"{self.state}); finish or void it first")
        if command.dealer == self.dealer:
            raise CommandError(f"{command.dealer!r} is already the dealer" if command.dealer
                               else "no dealer is signed in")

    def _change_dealer(self, command: ChangeDealer) -> list[AnyEvent]:
        self._verify_change_dealer(command)
        self.dealer = command.dealer
        return []

    def _verify_cancel(self, command: Cancel) -> int:
        """The wager's amount, if it may be cancelled now."""
        if self.state not in (OPEN, SETTLED):
            raise CommandError(f"wagers are cancelled only while the table is OPEN "
                               f"(it is {self.state})")
        amount = self.wagers.get(command.spot, {}).get(command.wager)
        if amount is None:
            raise CommandError(f"spot {command.spot} has no {command.wager} wager")
        return amount

    def _cancel(self, command: Cancel) -> list[AnyEvent]:
        amount = self._verify_cancel(command)
        del self.wagers[command.spot][command.wager]
        if not self.wagers[command.spot]:
            self.players.pop(command.spot, None)
        return self._lit(WagerCancelled(command.spot, WagerKey(command.wager), amount,
                                        WagerSource.DEALER))

    def _verify_lock(self) -> None:
        """The table takes a lock now (whether the wagers may lock is the lock's answer: a
        ``lock_refused`` naming each problem)."""
        if self.state != OPEN:
            raise CommandError(f"wagers lock only while the table is OPEN (it is {self.state})")

    def _lock(self) -> list[AnyEvent]:
        self._verify_lock()
        wagers = {spot: dict(amounts) for spot, amounts in self.wagers.items() if amounts}
        problems = self.lock_problems(wagers)
        closed = sorted(spot for spot, amounts in wagers.items() if "progressive" in amounts) \
            if self.progressive_closed() else []
        problems += [f"spot {spot}: the pool link is down: no progressive wagers"
                     for spot in closed]
        if problems:
            return [LockRefused(tuple(problems)),
                    *self._light([(spot, SpotLamp.PROGRESSIVE_CLOSED) for spot in closed])]
        hand_number = self.hand_number + 1
        hand_id = f"{self.table_id}-{hand_number:06d}"
        try:
            hand = self.engine.start(self.setup, wagers, self.meter,
                                     {spot: player for spot in wagers
                                      if (player := self.seated_player(spot))})
        except WagerError as error:
            return [LockRefused((str(error),))]
        self.hand, self.hand_id, self.hand_number = hand, hand_id, hand_number
        self.hand_first_count, self.out_of_play, self.shoe_trouble = None, [], []
        self.last_void = None
        self.wagers = defaultdict(dict)
        self.players = {}
        events: list[AnyEvent] = [HandStarted(hand_id, self.game, self.setup.paytable_name,
                                              hand_number, self.dealer), *self._set_state(LOCKED, "locked")]
        events += hand.history
        for event in hand.history:
            if type(event) is MeterContributed:
                self.meter = event.after
                events.append(MeterChanged(self.meter, f"contributions of hand {hand_id}"))
        return events

    def lock_problems(self, wagers: dict[int, dict[str, int]]) -> list[str]:
        """Why these wagers cannot lock: the game's rules on each spot's wagers (the engine's,
        the very rules the hand applies), the table limits, the spots one player may hold."""
        if not wagers:
            return ["no wagers on the layout"]
        limits, problems = self.limits, []
        first, second = self.engine.REQUIRED_WAGERS
        for spot, amounts in sorted(wagers.items()):
            problems += self.engine.seat_problems(self.setup, spot, amounts)
            if first not in amounts:
                continue
            problems += [problem for wager, amount in amounts.items()
                         if wager != second
                         and (problem := self.wager_limit_problem(spot, wager, amount))]
        # Ids that look alike (case, another script's lookalike letters, capitals as
        # written) are one player, named as first given; the others are named beside it.
        for seated in one_player_each({spot: self.seated_player(spot) or f"spot {spot}"
                                       for spot in sorted(wagers)}):
            if len(seated) > limits.max_spots_per_player:
                spots = sorted(seated)
                player = seated[spots[0]]
                spellings: dict[str, list[str]] = defaultdict(list)
                for spot, other in seated.items():
                    spellings[other].append(str(spot))
                alike = "".join(f"; {other!r} (spot {', '.join(at)}) is the same player"
                                for other, at in spellings.items() if other != player)
                problems.append(f"spot {spots[-1]}: player {player!r} wagers on {len(spots)} "
                                f"spots ({', '.join(map(str, spots))}); at most "
                                f"{limits.max_spots_per_player}{alike}")
        return problems

    def wager_limit_problem(self, spot: int, wager: str, amount: int) -> str | None:
        """Why one wager's amount is outside the table's limits, or None. The ante and the
        wager that must equal it share the ante's limits."""
        limits = self.limits
        if wager in self.engine.REQUIRED_WAGERS:
            if not limits.min_ante <= amount <= limits.max_ante:
                return (f"spot {spot}: {wager} {format_cents(amount)} is outside the table "
                        f"limits {format_cents(limits.min_ante)} to "
                        f"{format_cents(limits.max_ante)}")
        elif wager == "lowdown_bonus":
            if amount > limits.max_lowdown_bonus:
                return (f"spot {spot}: lowdown_bonus {format_cents(amount)} is over the limit "
                        f"{format_cents(limits.max_lowdown_bonus)}")
        return None

    def _verify_decide(self, command: Decide) -> tuple[Hand, Decision]:
        """The hand and the decision, if the hand takes it now."""
        if self.hand is None or self.state not in (DECIDING, DEALING, LOCKED):
            raise CommandError(f"no decision is expected (the table is {self.state})")
        try:
            decision = Decision.parse(command.decision)
        except ValueError as error:
            raise CommandError(f"spot {command.spot}: {error}") from None
        self.hand.verify_decide(command.spot, decision)
        return self.hand, decision

    def _decide(self, command: Decide) -> list[AnyEvent]:
        hand, decision = self._verify_decide(command)
        events: list[AnyEvent] = list(hand.decide(command.spot, decision))
        made = next(event for event in events if type(event) is DecisionMade)
        return events + self._light(lamps.lamps_after(made, self.wagers)) + \
            self._after_hand_step()

    def _verify_continue(self) -> None:
        if self.state != PAUSED or self.fault is None:
            raise CommandError(f"nothing to continue: the table is {self.state}")
        if self.fault.burnable:
            raise CommandError("a card left the shoe and went to no one: only a supervisor "
                               "can burn it and go on, or void the hand")
        if not self.fault.recoverable:
            raise CommandError("this is a misdeal: only a supervisor can void the hand")
        self._verify_devices_back()

    def _continue(self, by: str) -> list[AnyEvent]:
        self._verify_continue()
        return [HandContinued(by), *self._resume(by, "continued")]

    def _verify_burn(self) -> None:
        fault = self.fault
        if self.state != PAUSED or fault is None:
            raise CommandError(f"nothing to burn: the table is {self.state}")
        if not fault.burnable:
            why = "in the starting deal a card out of play is a misdeal (Roberts' lowball " \
                  "rule 1)" if fault.code in BURNABLE else "this is a misdeal"
            raise CommandError(f"no card may be burned now: {why}; void the hand")
        self._verify_devices_back()

    def _verify_devices_back(self) -> None:
        down = sorted(self.devices_down & {"shoe", "spots"})
        if down:
            raise CommandError(f"{', '.join(down)} still lost: reconnect it before continuing")

    def _burn(self, command: Burn, by: str) -> list[AnyEvent]:
        self._verify_burn()
        cards, counts = (tuple(card for card, _ in self.out_of_play),
                         tuple(count for _, count in self.out_of_play))
        resumed = self._resume(by, "burned and continued")
        self.out_of_play = []
        return [CardsBurned(self.hand_id or "", cards, counts, by, command.reason),
                HandContinued(by), *resumed]

    def _resume(self, by: str, how: str) -> list[AnyEvent]:
        """Clear the fault and go on where the hand stands (cards may have been dealt during
        the pause)."""
        self.fault = None
        hand = self.hand
        assert hand is not None
        # Resume where the hand now stands (cards may have been dealt during the pause).
        step = hand.next_step()
        resumed = LOCKED if hand.cards_used == 0 else DEALING if step.kind == "card" \
            else DECIDING
        return [*self._set_state(resumed, f"{how} by {by}"),
                *self._light(lamps.to_act(step.seats))]

    def _verify_void(self) -> Hand:
        if self.hand is None or self.state not in IN_HAND:
            raise CommandError(f"no hand in play to void (the table is {self.state})")
        return self.hand

    def _void(self, command: Void, by: str) -> list[AnyEvent]:
        hand, hand_id = self._verify_void(), self.hand_id
        contributions = hand.contributions
        voided = HandVoided(hand_id or "", by, command.reason, hand.wagers_at_stake(),
                            contributions)
        self.last_void = (voided, hand.cards_used + len(self.out_of_play))
        events: list[AnyEvent] = [voided]
        if contributions:
            if self.pool is None:  # a linked table's meter is the pool's, which gives it back
                self.meter -= contributions
            events.append(MeterChanged(self.meter, f"hand {hand_id} voided"))
        self.hand, self.fault = None, None
        return events + self._lit(*self._set_state(OPEN, f"hand {hand_id} voided by {by}"))

    def _verify_adjust_meter(self, command: AdjustMeter) -> None:
        if not self.between_hands():
            waits = "" if self.jackpot is None else ", a jackpot awaits verification"
            raise CommandError(f"the meter is adjusted only between hands (the table is "
                               f"{self.state}{waits})")
        if self.pool is not None:
            raise CommandError(f"the meter shows linked pool {self.pool}'s: adjust the pool "
                               "(lowball-table floor adjust)")
        if command.amount == 0 and not self.meter_held:
            raise CommandError("amount: an adjustment of 0 changes nothing")
        if self.meter + command.amount < 0:
            raise CommandError(f"amount: {format_cents(command.amount)} would take the meter "
                               f"({format_cents(self.meter)}) below 0")

    def _adjust_meter(self, command: AdjustMeter, by: str) -> list[AnyEvent]:
        self._verify_adjust_meter(command)
        meter = self.meter + command.amount
        confirmed = " (confirms the meter carried over)" if self.meter_held else ""
        self.meter, self.meter_held = meter, False
        change = ("+" if command.amount >= 0 else "") + format_cents(command.amount)
        return [MeterChanged(meter, f"adjusted by {by} ({change}){confirmed}: "
                                    f"{command.reason}")]

    def _verify_verify_jackpot(self) -> PendingJackpot:
        if self.jackpot is None:
            raise CommandError("no jackpot awaits verification")
        if self.pool is not None and self.jackpot.claimed is None:
            raise CommandError(f"the jackpot of hand {self.jackpot.hand_id} is not claimed by "
                               f"pool {self.pool} yet: verify it once the floor has claimed it")
        return self.jackpot

    def _verify_jackpot(self, by: str) -> list[AnyEvent]:
        jackpot = self._verify_verify_jackpot()
        self.jackpot = None
        self.meter = jackpot.meter_after_reset if self.pool_shown is None \
            else self.pool_shown.meter
        return [JackpotVerified(jackpot.hand_id, by, self.meter),
                MeterChanged(self.meter, f"reset to seed after the jackpot of {jackpot.hand_id}")]

    # -- helpers --------------------------------------------------------------------------

    def _verify_betting(self) -> None:
        """A wager on a settled table starts the next round, which a pending jackpot holds."""
        if self.state == SETTLED and self.jackpot is not None:
            raise CommandError(f"jackpot of hand {self.jackpot.hand_id} awaits a "
                               f"supervisor's verification")

    def _opened_for_betting(self) -> list[AnyEvent]:
        """Betting on a settled table starts the next round: SETTLED -> OPEN."""
        if self.state == SETTLED:
            self._verify_betting()
            return self._lit(*self._set_state(OPEN, "next hand"))
        if self.state != OPEN:
            raise CommandError(f"wagers are taken only while the table is OPEN "
                               f"(it is {self.state})")
        return []

    def _after_hand_step(self) -> list[AnyEvent]:
        """State, lamps and meter after the hand moved on."""
        hand = self.hand
        assert hand is not None
        step = hand.next_step()
        if step.kind == "card":
            return self._set_state(DEALING, "dealing") if self.state != DEALING else []
        if step.kind == "decision":
            events = self._set_state(DECIDING, "decisions due") if self.state != DECIDING else []
            due = hand.history[-1]
            return events + (self._light(lamps.lamps_after(due, self.wagers))
                             if type(due) is DecisionsDue else [])
        return self._settled()

    def _settled(self) -> list[AnyEvent]:
        hand, hand_id = self.hand, self.hand_id
        assert hand is not None and hand_id is not None
        events: list[AnyEvent] = []
        jackpot_seats, jackpot_amount = [], 0
        awards: list[ProgressiveAwarded] = []
        for event in hand.history:
            if type(event) is ProgressiveAwarded:
                awards.append(event)
                if event.award == "jackpot":
                    jackpot_seats.append(event.seat)
                    jackpot_amount += event.amount
            elif type(event) is MeterSettled:
                self.meter = event.after - event.reseed
                if event.awards:
                    events.append(MeterChanged(self.meter, f"jackpot paid on hand {hand_id}"))
                if jackpot_seats:
                    self.jackpot = PendingJackpot(hand_id, tuple(jackpot_seats), jackpot_amount,
                                                  event.after)
                    events.append(JackpotPending(hand_id, tuple(jackpot_seats), jackpot_amount))
        self.last_settlement = hand.settlements()
        self.last_awards = awards
        self.last_settled_hand = hand_id
        events += self._light(lamps.settlement_lamps(hand.history))
        self.hand = None
        return events + self._set_state(SETTLED, f"hand {hand_id} settled")

    def _pause(self, code: FaultCode, detail: str, device: Device, recoverable: bool) -> list[AnyEvent]:
        burnable = not recoverable and code in BURNABLE and self.hand is not None \
            and self.hand.phase not in STARTING_DEAL
        fault = Fault(code, detail, device, recoverable, burnable)
        if self.state == PAUSED:
            # Already paused: record the new fault; the graver way out stands (a card out of
            # play makes a device fault a supervisor's; a misdeal leaves only the void).
            if self.fault is not None and _gravity(fault) > _gravity(self.fault):
                self.fault = fault
            return [fault]
        if self.state not in IN_HAND:
            return [fault]
        self.fault = fault
        return [fault, *self._set_state(PAUSED, code)]

    def _set_state(self, state: TableState, reason: str) -> list[AnyEvent]:
        """Go to ``state`` by the transition table (:mod:`controller.core.table_states`):
        any other move raises :class:`IllegalTransition` before anything changes."""
        check_transition(self.state, state)
        previous, self.state = self.state, state
        return [StateChanged(state, previous, reason)]

    def _lit(self, *events: AnyEvent) -> list[AnyEvent]:
        """``events``, each followed by the lamps it lights (:mod:`controller.core.lamps`)."""
        closed = self.progressive_closed()
        return [lit for event in events
                for lit in (event, *self._light(lamps.lamps_after(event, self.wagers, closed)))]

    def _light(self, lighting: lamps.Lighting) -> list[AnyEvent]:
        """Set each lamp a spot does not already show (spot 0: every spot, always)."""
        events: list[AnyEvent] = []
        for spot, lamp in lighting:
            if spot == lamps.ALL_SPOTS:
                self.lamps = {number: lamp for number in range(1, self.settings.spots + 1)}
            elif self.lamps.get(spot) == lamp:
                continue
            else:
                self.lamps[spot] = lamp
            events.append(LampSet(spot, lamp))
        return events

    # -- what the dealer and a late joiner see (controller.core.table_view) ----------------

    def expecting(self, *, table_side: bool = False) -> str:
        return table_view.expecting(self, table_side=table_side)

    def snapshot(self, *, table_side: bool = False) -> dict[str, Any]:
        """Every card (surveillance's), or with ``table_side`` only those the table shows
        (:mod:`controller.core.hidden_cards`)."""
        return table_view.snapshot(self, table_side=table_side)


def _spots(seats: tuple[int, ...] | list[int]) -> str:
    """``spot 2``, ``spots 2 and 5``, ``spots 1, 2 and 5``."""
    numbers = [str(seat) for seat in seats]
    if len(numbers) == 1:
        return f"spot {numbers[0]}"
    return f"spots {', '.join(numbers[:-1])} and {numbers[-1]}"


def _misdeal(error: IllegalAction) -> tuple[FaultCode, str]:
    """The fault of a card the hand refused, in the dealer's words."""
    if isinstance(error, DuplicateCard):
        holder = f"spot {error.holder}" if isinstance(error.holder, int) else \
            f"the {error.holder}"
        return FaultCode.DUPLICATE_CARD, (f"a card came out of the shoe a second time: card "
                                          f"{error.card}, already dealt to {holder}")
    return FaultCode.UNEXPECTED_CARD, str(error)


def _gravity(fault: Fault) -> int:
    """How far a fault is from the dealer's continue: 0 the dealer's, 1 a supervisor's burn
    or void, 2 a supervisor's void only."""
    return 0 if fault.recoverable else 1 if fault.burnable else 2

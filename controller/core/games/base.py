"""What every house-banked lowball hand shares: locked wagers, the deal order, decisions,
settlement arithmetic, and the history of typed events.

A hand is a state machine driven by two inputs, in the pokerkit manner:

- ``deal(card)``: the next card out of the shoe. The hand knows whose it is (the deal order),
  so the dealer never assigns cards by hand.
- ``decide(seat, decision)``: a player's decision keyed in by the dealer.

Each input has ``verify_x`` (raises :class:`IllegalAction` naming why), ``can_x`` (a bool) and
``x`` (applies it and returns the events it caused). A refused input changes nothing, so the
table can pause, fix the cause and carry on. :meth:`Hand.next_step` says what the hand expects.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Final, final

from controller.core.cards import Card, CardError, parse_cards
from controller.core.events import (
    DEALER,
    CardDealt,
    DecisionMade,
    DecisionsDue,
    Event,
    HandSettled,
    PhaseStarted,
    Recipient,
    Record,
    Wager,
    WagerSettled,
    WagersLocked,
)
from controller.core.money import Odds, format_cents
from controller.core.table_settings import MAX_SPOTS, GameSetup
from controller.errors import LowballError
from controller.core.vocabulary import WagerResult, text_of

#: Settlement results. ``Final`` (here and for the other names the engines compare and emit)
#: lets the compiled build (setup.py) use them as constants rather than look them up.
WIN: Final = WagerResult.WIN
LOSE: Final = WagerResult.LOSE
PUSH: Final = WagerResult.PUSH
FORFEIT: Final = WagerResult.FORFEIT

class IllegalAction(LowballError, ValueError):
    """A card or decision the hand cannot take now; the message says why. Nothing changed."""


class DuplicateCard(IllegalAction):
    """A card already dealt in this hand came again; ``holder`` is who has it (a seat, or
    ``dealer`` or ``community``)."""

    def __init__(self, message: str, card: Card, holder: Recipient) -> None:
        super().__init__(message)
        self.card = card
        self.holder = holder


class WagerError(LowballError, ValueError):
    """Wagers that cannot be locked; the message names the seat and the wager, ``seat`` the
    seat as keyed in (None when the problem is not one seat's)."""

    def __init__(self, message: str, seat: object = None) -> None:
        super().__init__(message)
        self.seat = seat


@final
class Decision(Record):
    """A player's decision: ``raise``, ``check``, ``bet``, ``fold`` (Cali LowBall), ``stand``
    or ``discard`` with the discarded cards (Three Card Lowball).

    A record (:class:`controller.core.events.Record`), like the events: the engines read its
    fields on every decision."""

    __slots__ = ("action", "cards")
    _fields = ("action", "cards")
    _hints = {"action": "str", "cards": "tuple[Card, ...]"}
    action: Any
    cards: Any

    def __init__(self, action: Any, cards: Any = ()) -> None:
        object.__setattr__(self, "action", action)
        object.__setattr__(self, "cards", cards)

    @classmethod
    def parse(cls, text: object) -> Decision:
        """``"raise"``, ``"stand"``, ``"discard:Kh,Qs"``; raises ValueError naming the problem."""
        if not isinstance(text, str):
            raise ValueError(f"a decision is text such as 'raise' or 'discard:Kh', "
                             f"not {type(text).__name__}")
        action, _, cards = text.strip().partition(":")
        action = action.strip().lower()
        if action == "discard":
            try:
                discarded = parse_cards(cards)
            except CardError as error:
                raise ValueError(f"decision {text!r}: {error}") from None
            if not discarded:
                raise ValueError(f"decision {text!r}: name the 1 or 2 cards discarded, "
                                 f"such as 'discard:Kh' or 'discard:Kh,Qs'")
            return cls("discard", discarded)
        if cards:
            raise ValueError(f"decision {text!r}: only 'discard' names cards")
        return cls(action)

    def __str__(self) -> str:
        if self.action == "discard":
            return "discard:" + ",".join(str(card) for card in self.cards)
        return str(self.action)


@final
class NextStep(Record):
    """What the hand expects next: a ``card`` for ``to``, a ``decision`` from ``seats``
    (one of ``options``), or nothing more because it is ``settled``. A record, like the
    events."""

    __slots__ = ("kind", "to", "seats", "options")
    _fields = ("kind", "to", "seats", "options")
    _hints = {"kind": "str", "to": "Recipient | None", "seats": "tuple[int, ...]",
              "options": "tuple[str, ...]"}
    kind: Any
    to: Any
    seats: Any
    options: Any

    def __init__(self, kind: Any, to: Any = None, seats: Any = (), options: Any = ()) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "to", to)
        object.__setattr__(self, "seats", seats)
        object.__setattr__(self, "options", options)


_SETTLED = NextStep("settled")


def seat_name(recipient: Recipient) -> str:
    return f"spot {recipient}" if isinstance(recipient, int) else f"the {recipient}"


class Hand:
    """One hand of a house-banked game, from locked wagers to settlement."""

    game: ClassVar[str]
    #: Wager keys in settlement order; the first ``len(REQUIRED_WAGERS)`` are required.
    WAGER_KEYS: ClassVar[tuple[str, ...]]
    REQUIRED_WAGERS: ClassVar[tuple[str, ...]]
    #: Names of the wagers for messages.
    WAGER_NAMES: ClassVar[dict[str, str]]
    #: The wagers with a rule of their own on the amount (:meth:`wager_problem`).
    RULED_WAGERS: ClassVar[tuple[str, ...]] = ()
    #: Whether the game has a progressive: a fixed wager read by the spots' sensors, and a
    #: jackpot meter that the hand's contributions feed.
    HAS_PROGRESSIVE: ClassVar[bool] = False
    #: The wager keys and the required ones as plain text (the vocabulary's values): a hand's
    #: wagers are keyed by text, as its settlements are, because a dict keyed by an enum is
    #: looked up through the generic path, several times the cost of a text-keyed one, and
    #: every hand looks its wagers up dozens of times. The keys compare and hash as the
    #: vocabulary's members, and are the same on the wire (:func:`text_of` says why interned).
    _KEY_TEXTS: ClassVar[tuple[str, ...]]
    _REQUIRED_TEXTS: ClassVar[tuple[str, ...]]
    _KNOWN_KEYS: ClassVar[frozenset[str]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._KEY_TEXTS = tuple([text_of(key) for key in cls.WAGER_KEYS])
        cls._REQUIRED_TEXTS = tuple([text_of(key) for key in cls.REQUIRED_WAGERS])
        cls._KNOWN_KEYS = frozenset(cls._KEY_TEXTS)

    def __init__(self, setup: GameSetup, wagers: Mapping[int, Mapping[str, int]],
                 players: Mapping[int, str] | None = None):
        if setup.game != self.game:
            raise ValueError(f"a {self.game} hand cannot use a {setup.game} setup")
        self.setup = setup
        self.rules = setup.rules
        self.wagers: dict[int, dict[str, int]] = self._validated(wagers)
        self.seats: tuple[int, ...] = tuple(sorted(self.wagers))
        self.history: list[Event] = []
        self.cards: dict[Recipient, list[Card]] = {seat: [] for seat in self.seats}
        self.cards[DEALER] = []
        self.phase = ""
        self.settled = False
        #: who holds each card of the deck (by Card.index), None if it is still in the shoe
        self._holder: list[Recipient | None] = [None] * 52
        self.cards_used = 0
        self._expected: deque[Recipient] = deque()
        self._due: list[int] = []
        self._options: tuple[str, ...] = ()
        #: cents this hand added to the jackpot meter (a void takes them off again)
        self.contributions = 0
        #: seat -> the id of who plays it, as the dealer gave it (a seat without one: "");
        #: every wager, settlement and award of the seat carries it
        self.players: dict[int, str] = dict(players) if players else {}
        self.history.append(WagersLocked(self.game, setup.paytable_name, self._locked_wagers()))

    @classmethod
    def start(cls, setup: GameSetup, wagers: Mapping[int, Mapping[str, int]],
              meter: int, players: Mapping[int, str] | None = None) -> Hand:
        """A new hand on these locked wagers; ``meter``: the jackpot meter before it (a game
        with a progressive feeds it); ``players``: seat -> player id, where one was given."""
        return cls(setup, wagers, players)

    # -- wagers ---------------------------------------------------------------------------

    def _validated(self, wagers: Mapping[Any, Mapping[Any, Any]]) -> dict[int, dict[str, int]]:
        # Typed Any: whatever the caller passed arrives here, and each refusal names it.
        if not wagers:
            raise WagerError("no wagers: at least one spot must play")
        keys, known = self._KEY_TEXTS, self._KNOWN_KEYS
        first, second = self._REQUIRED_TEXTS
        ruled = self.RULED_WAGERS
        validated = {}
        in_seat_order, previous = True, 0
        for seat, seat_wagers in wagers.items():
            if type(seat) is not int or not 1 <= seat <= MAX_SPOTS:
                raise WagerError(f"spot {seat!r}: spots are numbered 1 to {MAX_SPOTS}", seat)
            if not known.issuperset(seat_wagers):
                key = next(key for key in seat_wagers if key not in known)
                raise WagerError(f"spot {seat}: {key!r} is not a {self.game} wager "
                                 f"(wagers: {', '.join(keys)})", seat)
            # One pass over the wager keys (every key given is one of them) does every check
            # and builds the amounts in settlement order, zero amounts left out: this runs
            # for every seat of every hand. The refusals keep their precedence: a bad amount
            # (the first in the caller's order) before a missing required wager.
            amounts: dict[str, int] = {}
            for key in keys:
                amount = seat_wagers.get(key, 0)
                if type(amount) is not int or amount < 0:
                    raise self._bad_amount(seat, seat_wagers)
                if amount:
                    amounts[key] = amount
            # The rules are :meth:`seat_problems`; asked only when they could find one (a
            # required wager missing or unequal, a wager with a rule of its own), as the call
            # costs more than the rest of the seat's checks.
            first_amount = amounts.get(first)
            if not first_amount or first_amount != amounts.get(second) or ruled:
                problems = self.seat_problems(self.setup, seat, amounts)
                if problems:
                    raise WagerError(problems[0], seat)
            validated[seat] = amounts
            in_seat_order, previous = in_seat_order and seat > previous, seat
        # Wagers usually arrive in seat order, and sorting costs as much as checking a seat.
        return validated if in_seat_order else dict(sorted(validated.items()))

    @staticmethod
    def _bad_amount(seat: int, seat_wagers: Mapping[str, object]) -> WagerError:
        """The refusal of the first amount, in the caller's order, that is not a whole number
        of cents of 0 or more."""
        key, amount = next((key, amount) for key, amount in seat_wagers.items()
                           if type(amount) is not int or amount < 0)
        return WagerError(f"spot {seat}: {key} must be a whole number of cents "
                          f"of 0 or more, not {amount!r}", seat)

    @classmethod
    def seat_problems(cls, setup: GameSetup, seat: int,
                      amounts: Mapping[str, int]) -> list[str]:
        """The game's rules on one seat's wagers (whole cents, the game's own wagers), each
        rule it breaks in words: the required wagers are there and equal, and each wager of
        :attr:`RULED_WAGERS` keeps its own rule (:meth:`wager_problem`). The lock and the
        hand both ask this."""
        # Runs for every seat of every hand: the usual seat (both required wagers, equal, no
        # wager with a rule of its own) costs two look-ups and no call.
        first, second = cls._REQUIRED_TEXTS
        first_amount, second_amount = amounts.get(first), amounts.get(second)
        problems: list[str] = []
        if not first_amount or not second_amount:
            problems += [f"spot {seat}: the {cls.WAGER_NAMES[key]} wager is required"
                         for key, amount in ((first, first_amount), (second, second_amount))
                         if not amount]
        elif first_amount != second_amount:
            problems.append(f"spot {seat}: {cls.WAGER_NAMES[first]} "
                            f"{format_cents(first_amount)} and {cls.WAGER_NAMES[second]} "
                            f"{format_cents(second_amount)} must be equal")
        for key in cls.RULED_WAGERS:
            amount = amounts.get(key)
            if amount:
                problem = cls.wager_problem(setup, seat, key, amount)
                if problem is not None:
                    problems.append(problem)
        return problems

    @classmethod
    def wager_problem(cls, setup: GameSetup, seat: int, wager: str, amount: int) -> str | None:
        """The game's own rule on one wager's amount, broken, in words; None if kept (the
        table limits are the table's, see :meth:`controller.core.table.Table.lock_problems`)."""
        return None

    # -- what next ------------------------------------------------------------------------

    def next_step(self) -> NextStep:
        if self._expected:
            return NextStep("card", self._expected[0])
        if self.settled:
            return _SETTLED
        return NextStep("decision", None, tuple(self._due), self._options)

    def cards_expected(self) -> int:
        """How many more cards the current dealing step needs."""
        return len(self._expected)

    # -- cards ----------------------------------------------------------------------------

    # The inputs are typed ``object``: anything may be keyed in, and a wrong type is refused
    # with IllegalAction naming it, compiled or not (mypyc checks annotated types on entry).

    def verify_deal(self, card: object) -> None:
        if not isinstance(card, Card):
            raise IllegalAction(f"not a card: {card!r}")
        if not self._expected:
            raise IllegalAction(f"card {card} was not expected: {self._waiting_for()}")
        holder = self._holder[card.index]
        if holder is not None:
            raise DuplicateCard(f"duplicate card {card}: already dealt to {seat_name(holder)}",
                                card, holder)

    def can_deal(self, card: object) -> bool:
        try:
            self.verify_deal(card)
        except IllegalAction:
            return False
        return True

    def deal(self, card: object) -> tuple[Event, ...]:
        # A cheap guard for the common case; anything unusual gets the full check and reason.
        if type(card) is not Card or not self._expected or self._holder[card.index] is not None:
            self.verify_deal(card)
        # Verified above. An assert, not typing.cast, which would be a function call on every
        # card in pure Python; compiled, it tells mypyc the type.
        assert isinstance(card, Card)
        to = self._expected.popleft()
        self._holder[card.index] = to
        self.cards_used += 1
        self.cards[to].append(card)
        event = CardDealt(card, to, self.phase)
        self.history.append(event)
        if self._expected:
            return (event,)
        start = len(self.history) - 1
        self._cards_complete()
        return tuple(self.history[start:])

    def _waiting_for(self) -> str:
        if self.settled:
            return "the hand is settled"
        seats = ", ".join(str(seat) for seat in self._due)
        return f"waiting for {'the decision' if len(self._due) == 1 else 'decisions'} of " \
               f"spot{'s' if len(self._due) > 1 else ''} {seats} ({self.phase})"

    # -- decisions ------------------------------------------------------------------------

    def verify_decide(self, seat: object, decision: object) -> None:
        if not isinstance(decision, Decision):
            raise IllegalAction(f"not a decision: {decision!r}")
        if self.settled:
            raise IllegalAction(f"spot {seat}: the hand is settled")
        if self._expected:
            raise IllegalAction(f"spot {seat}: no decision now; waiting for a card for "
                                f"{seat_name(self._expected[0])} ({self.phase})")
        if seat not in self.wagers:
            raise IllegalAction(f"spot {seat} is not in this hand")
        if seat not in self._due:
            raise IllegalAction(f"spot {seat} has no decision to make now; {self._waiting_for()}")
        if decision.action not in self._options:
            raise IllegalAction(f"spot {seat}: {decision.action!r} is not allowed {self.phase}; "
                                f"choose {' or '.join(self._options)}")
        self._verify_game_decision(seat, decision)

    def can_decide(self, seat: object, decision: object) -> bool:
        try:
            self.verify_decide(seat, decision)
        except IllegalAction:
            return False
        return True

    def decide(self, seat: object, decision: object) -> tuple[Event, ...]:
        # A cheap guard for the common case; anything unusual gets the full check and reason.
        if type(decision) is not Decision or decision.cards or decision.action == "discard" \
                or self._expected or seat not in self._due or decision.action not in self._options:
            self.verify_decide(seat, decision)
        start = len(self.history)
        assert isinstance(seat, int) and isinstance(decision, Decision)  # verified, as in deal
        self._apply_decision(seat, decision)
        return tuple(self.history[start:])

    def _verify_game_decision(self, seat: int, decision: Decision) -> None:
        """Game-specific checks beyond the allowed options; raise :class:`IllegalAction`."""

    # -- the game's own steps (subclasses) ------------------------------------------------

    def _cards_complete(self) -> None:
        raise NotImplementedError

    def _apply_decision(self, seat: int, decision: Decision) -> None:
        raise NotImplementedError

    # -- helpers for subclasses -----------------------------------------------------------

    def _start_phase(self, phase: str) -> None:
        self.phase = phase
        self.history.append(PhaseStarted(phase))

    def _expect_cards(self, recipients: Iterable[Recipient]) -> None:
        self._expected.extend(recipients)

    def _ask(self, seats: tuple[int, ...], options: tuple[str, ...]) -> None:
        self._due, self._options = list(seats), options
        self.history.append(DecisionsDue(self.phase, seats, options))

    def _record_decision(self, seat: int, decision: Decision, raised: int = 0) -> None:
        self._due.remove(seat)
        self.history.append(DecisionMade(seat, decision.action, raised, decision.cards))

    def _settle(self, seat: int, player: str, wager: str, amount: int, result: WagerResult,
                odds: Odds | None = None) -> int:
        """Record one wager's settlement for the seat's ``player``; return its net."""
        # ``is``: a result is one of the vocabulary's members (typed so), and an identity test
        # is a pointer compare where ``==`` on an enum is a generic rich comparison.
        if result is WIN:
            net = amount * odds.pays // odds.per if odds is not None else amount
        elif result is PUSH:
            net = 0
        else:
            net = -amount
        self.history.append(WagerSettled(seat, wager, amount, result, net, player))
        return net

    def _finish(self, players_net: int) -> None:
        self.settled = True
        self._due, self._options = [], ()
        self.history.append(HandSettled(players_net, -players_net))

    # -- results --------------------------------------------------------------------------

    def wagers_at_stake(self) -> tuple[Wager, ...]:
        """Every wager of the hand so far, in seat order: the locked ones and those made
        during play (what a void returns)."""
        return self._locked_wagers()

    def _locked_wagers(self) -> tuple[Wager, ...]:
        """The wagers locked when the hand began, in seat order, each naming its player."""
        player_of = self.players
        wagers: list[Wager] = []
        for seat, amounts in self.wagers.items():
            player = player_of.get(seat, "")  # once a seat, not once a wager
            for key, amount in amounts.items():
                wagers.append(Wager(seat, key, amount, player))
        return tuple(wagers)

    def settlements(self) -> list[WagerSettled]:
        return [event for event in self.history if type(event) is WagerSettled]

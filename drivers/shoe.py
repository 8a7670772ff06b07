"""The card-shoe driver interface: the rules every shoe protocol shares, written once.

A protocol subclass (:mod:`drivers.shoe_serial`, :mod:`drivers.shoe_usb`) only turns bytes into
:class:`Message` / :class:`Garbled` items and knows how to send an acknowledgement. This module
owns what must be the same for every shoe, because a mistake here miscounts cards:

* every valid message is acknowledged, retransmissions included;
* a message whose sequence number and content equal the last accepted one's is a
  retransmission and never produces a second event (:class:`SequenceGate`); the same sequence
  number with other content is refused (``CONFLICT``) and reported once
  (:class:`~drivers.shoe_events.SequenceConflict`), never taken for a card;
* a garbled message is reported as :class:`FrameRejected` and NAKed where the protocol can;
* no valid message for ``lost_after_s`` (3 s) = :class:`ShoeLost`; the next one brings
  :class:`ShoeConnected`; port failures reconnect with backoff (:mod:`drivers.base`).

The driver thread does not poll: each read waits for input until the silence deadline
(``lost_after_s`` after the last valid message), so a live shoe wakes it only with its own
messages (a heartbeat a second when idle), and a silent one once, to be reported lost.

Events go to a listener callback, called from the driver thread, if one is given; else to a
queue (:meth:`~drivers.base.DeviceDriver.get_event`).
"""

from __future__ import annotations

import threading
import time
from abc import abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from drivers.base import DeviceDriver, DeviceUnavailable, RepeatedWarning, debug_enabled
from drivers.config import ShoeConfig
from drivers.shoe_events import (
    CardRead,
    FrameRejected,
    SequenceConflict,
    ShoeConnected,
    ShoeEvent,
    ShoeFault,
    ShoeLost,
)

#: The refusal of a message that reuses the last accepted sequence number with other content
#: (LBS1 ``N SEQ,CONFLICT``; on USB the refuse control request).
CONFLICT = "CONFLICT"


@dataclass(frozen=True, slots=True)
class Message:
    """A message that arrived intact: acknowledge ``seq``; ``event`` is what it said
    (a :class:`FrameRejected` if its content made no sense). ``content`` is what a
    retransmission must repeat exactly: the frame's TYPE and payload, the report's bytes."""

    seq: int
    event: ShoeEvent
    content: str


@dataclass(frozen=True, slots=True)
class Garbled:
    """Bytes that were not a message. NAK ``nak_seq`` with ``nak_code`` if both are known."""

    rejected: FrameRejected
    nak_seq: int | None = None
    nak_code: str | None = None


Inbound = Message | Garbled


class SequenceGate:
    """The duplicate-sequence rule. The same SEQ as the last accepted message with the same
    content is a retransmission; with other content it is a conflict, and the last accepted
    message stays the one the gate holds.

    Kept across reconnects on purpose: a shoe that retransmits after a replug must not have
    its card counted twice.
    """

    NEW, RETRANSMISSION, CONFLICT = "new", "retransmission", "conflict"

    def __init__(self) -> None:
        self._last: tuple[int, str] | None = None

    def admit(self, seq: int, content: str) -> str:
        """:attr:`NEW`, :attr:`RETRANSMISSION` or :attr:`CONFLICT`; only a new message
        becomes the last accepted one."""
        if self._last is not None and self._last[0] == seq:
            return self.RETRANSMISSION if self._last[1] == content else self.CONFLICT
        self._last = (seq, content)
        return self.NEW

    @property
    def last(self) -> tuple[int, str] | None:
        """(SEQ, content) of the last accepted message."""
        return self._last


@dataclass(slots=True)
class Verdict:
    """What the host does about one inbound item: events to deliver and the reply owed."""

    events: list[ShoeEvent] = field(default_factory=list)
    ack: int | None = None
    nak: tuple[int, str] | None = None
    retransmission: bool = False


class ShoeReceiver:
    """The host's side of the acknowledgement rules, as a pure object (used by every shoe
    driver and by the session recorder)."""

    def __init__(self) -> None:
        self.gate = SequenceGate()
        #: what the last accepted message said
        self._accepted: ShoeEvent | None = None
        #: (SEQ, content) of the last conflicting message, reported once however often sent
        self._refused: tuple[int, str] | None = None

    def receive(self, item: Inbound) -> Verdict:
        if isinstance(item, Garbled):
            nak = None
            if item.nak_seq is not None and item.nak_code is not None:
                nak = (item.nak_seq, item.nak_code)
            return Verdict([item.rejected], nak=nak)
        verdict = self.gate.admit(item.seq, item.content)
        if verdict == SequenceGate.NEW:
            self._accepted = item.event
            return Verdict([item.event], ack=item.seq)
        if verdict == SequenceGate.RETRANSMISSION:
            return Verdict([], ack=item.seq, retransmission=True)
        events: list[ShoeEvent] = []
        if self._refused != (item.seq, item.content):
            self._refused = (item.seq, item.content)
            accepted = self.gate.last[1] if self.gate.last is not None else ""
            events.append(SequenceConflict(
                item.seq, f"SEQ {item.seq:02X} was accepted as {accepted!r}, now sent as "
                          f"{item.content!r}: refused",
                about_cards=any(isinstance(event, (CardRead, ShoeFault))
                                for event in (self._accepted, item.event))))
        return Verdict(events, nak=(item.seq, CONFLICT))


class ShoeDriver(DeviceDriver[ShoeEvent]):
    """Base class of every shoe driver; see the module docstring for what it guarantees."""

    kind = "shoe"

    def __init__(self, config: ShoeConfig, *,
                 listener: Callable[[ShoeEvent], None] | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 ack_cards_on_commit: bool = False) -> None:
        """``ack_cards_on_commit``: hold each card's acknowledgement until the table has
        journaled it (:meth:`card_committed`), so a power cut can never lose a card the shoe
        believes was delivered: unacknowledged, the shoe sends it again."""
        super().__init__(config, port_label=self._port_label(config), listener=listener,
                         clock=clock)
        self.config = config
        self._receiver = ShoeReceiver()
        self._last_heard = 0.0
        self._silent = False
        self._write_lock = threading.Lock()
        self.retransmissions = 0
        self._rejected = RepeatedWarning("shoe input rejected")
        self.ack_cards_on_commit = ack_cards_on_commit
        #: cards reported to the table whose acknowledgement waits for the journal
        self._uncommitted: set[int] = set()
        self._commit_lock = threading.Lock()

    @staticmethod
    def _port_label(config: ShoeConfig) -> str:
        return config.port or f"usb:{config.vendor_id:04x}:{config.product_id:04x}"

    # -- for the table ------------------------------------------------------------------

    # -- the shared rules ---------------------------------------------------------------

    def _on_connected(self) -> None:
        self._last_heard = self.clock()
        self._silent = False
        self._emit(ShoeConnected(self.port_label))

    def _on_lost(self, reason: str) -> None:
        self._emit(ShoeLost(reason))

    def _silence_wait(self) -> float | None:
        """Seconds until the shoe counts as silent; None once it has been reported so (the
        next message brings it back, and nothing is due until then)."""
        if self._silent:
            return None
        return max(0.0, self._last_heard + self.config.lost_after_s - self.clock())

    def _serve_once(self) -> None:
        items = self._receive(self._silence_wait())
        for item in items:
            self._handle(item)
        now = self.clock()
        if not self._silent and now - self._last_heard >= self.config.lost_after_s:
            self._silent = True
            reason = f"no frame from the shoe for {self.config.lost_after_s:g} s"
            self.log.warning("shoe silent", lost_after_s=self.config.lost_after_s)
            self._emit(ShoeLost(reason))

    def _handle(self, item: Inbound) -> None:
        verdict = self._receiver.receive(item)
        if isinstance(item, Message):
            self._last_heard = self.clock()
            if self._silent:
                self._silent = False
                self.log.info("shoe heard again")
                self._emit(ShoeConnected(self.port_label))
        if verdict.ack is not None and not self._hold_ack(verdict.ack, verdict.events):
            self._send_ack(verdict.ack)
        if verdict.nak is not None:
            self._send_nak(*verdict.nak)
        if verdict.retransmission:
            self.retransmissions += 1
            self.log.info("retransmission acknowledged again, not counted", seq=verdict.ack)
        for event in verdict.events:
            if isinstance(event, FrameRejected):
                # (the frame's bytes may name a card: they are in the journal's
                # device_fault, surveillance's; the log says how long it was)
                self._rejected(self.log, reason=event.reason, length=len(event.raw))
            elif isinstance(event, SequenceConflict):
                # (both frames, cards and tags, are in the journal's device_fault)
                self.log.warning("shoe reused a sequence number: refused", seq=event.seq)
            elif debug_enabled(self.log):  # the repr is the cost, not the call: skip both
                self.log.debug("shoe event", detail=repr(event))
            self._emit(event)

    def _hold_ack(self, ack: int, events: list[ShoeEvent]) -> bool:
        """Whether the acknowledgement of ``ack`` waits for the table's journal (a new card,
        or a retransmission of a card not yet committed)."""
        if not self.ack_cards_on_commit:
            return False
        with self._commit_lock:
            if ack in self._uncommitted:
                return True
            if any(isinstance(event, CardRead) for event in events):
                self._uncommitted.add(ack)
                return True
        return False

    def card_committed(self, seq: int) -> None:
        """The table journaled card ``seq``: acknowledge it now (from the table's thread)."""
        with self._commit_lock:
            if seq not in self._uncommitted:
                return
            self._uncommitted.discard(seq)
        try:
            self._send_ack(seq)
        except DeviceUnavailable as exc:
            # Unacknowledged, the shoe resends the card; the table refuses nothing twice
            # (the duplicate-sequence rule), and it is acknowledged when heard again.
            self.log.warning("card acknowledgement not sent", seq=seq, reason=str(exc))

    # -- what a protocol supplies ---------------------------------------------------------

    @abstractmethod
    def _receive(self, timeout: float | None) -> Sequence[Inbound]:
        """Wait for input at most ``timeout`` seconds (None: no deadline), returning early
        when :meth:`stop` is called; decoded items, possibly none."""

    @abstractmethod
    def _send_ack(self, seq: int) -> None:
        """Acknowledge message ``seq``."""

    @abstractmethod
    def _send_nak(self, seq: int, code: str) -> None:
        """Refuse message ``seq`` (``code``: why); the shoe sends it again."""

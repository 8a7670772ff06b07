"""Simulated card shoes as pure byte machines: bytes in, bytes out, time passed in.

:class:`ShoeModel` is the shoe itself (card order, RFID tags, door, faults, its card count,
and the send / acknowledge / retransmit / heartbeat rules: one message in flight, never given
up); :class:`Lbs1ShoeModel` and :class:`UsbShoeModel` put its messages on the wire as LBS1
frames or USB reports.
Nothing here does I/O or reads a clock: a transport (pty, TCP, pyusb backend) or a test calls
``receive(data, now)`` and ``poll(now)``, so every fault path can be stepped exactly.

Fault injection, all of it available to tests and to ``lowball-table sim shoe``: bad CRC,
noise, over-long frame, dropped ACK (forces a retransmission), jam, misread, door open,
unknown tag, going silent, cards lost inside the shoe (the count skips), a SEQ reused for
other content; disconnect is the transport's (pull the cable, not the shoe).
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from controller.core.cards import DECK, Card, parse_card, parse_cards
from drivers.lbs1 import (
    NAK_CONFLICT,
    FrameError,
    FrameParser,
    card_payload,
    encode_frame,
    encode_overlong,
)
from drivers.shoe_events import FaultCode, ShoeState
from drivers.tags import deck_tag
from drivers.usb_report import (
    ACK_REQUEST,
    ACK_REQUEST_TYPE,
    REFUSE_CONFLICT,
    REFUSE_REQUEST,
    encode_card,
    encode_fault,
    encode_heartbeat,
    encode_status,
)

#: Timers compare with this slack, so stepping a float clock by 0.01 s hits them exactly.
_EPS = 1e-9

#: The tag the simulator reports for a card that is not in the deck's registry.
UNKNOWN_TAG = "0BADBEEF"


@dataclass(frozen=True, slots=True)
class ShoeMessage:
    """One thing the shoe has to say, before a protocol puts it on the wire."""

    kind: str  # "card" | "fault" | "status" | "heartbeat"
    card: Card | None = None
    tag: str | None = None
    fault: FaultCode | None = None
    detail: str = ""
    state: ShoeState | None = None
    uptime_s: int = 0
    count: int = 0  # a card's count since the last shuffle or reset


@dataclass(slots=True)
class _Outstanding:
    seq: int
    message: ShoeMessage
    sent_at: float
    retransmits: int = 0
    resend_now: bool = False


def card_order(cards: Sequence[Card | str] | str | None = None,
               seed: int | None = None) -> list[Card]:
    """The order to deal: the given cards (a scenario's ``shoe``), else a deck shuffled with
    ``seed`` (fresh deck order if both are None)."""
    if cards is not None:
        if isinstance(cards, str):
            return list(parse_cards(cards))
        return [card if isinstance(card, Card) else parse_card(card) for card in cards]
    order = list(DECK)
    if seed is not None:
        random.Random(seed).shuffle(order)
    return order


class ShoeModel:
    """The shoe's behaviour, protocol-free. Subclasses encode; see the module docstring.

    An unacknowledged message is sent again ``retransmit_after_s`` (200 ms) after each
    sending, ``quick_retransmits`` (3) times, then every ``slow_retransmit_s`` (1 s) until it
    is acknowledged: the shoe never gives a message up, and while it waits that slowly it is
    :attr:`halted` (a real shoe shows it on its display)."""

    def __init__(self, cards: Sequence[Card | str] | str | None = None, *,
                 seed: int | None = None, retransmit_after_s: float = 0.2,
                 quick_retransmits: int = 3, slow_retransmit_s: float = 1.0,
                 heartbeat_every_s: float = 1.0, first_seq: int = 0,
                 tags: bool = True) -> None:
        self._cards: deque[Card] = deque(card_order(cards, seed))
        self.retransmit_after_s = retransmit_after_s
        self.quick_retransmits = quick_retransmits
        self.slow_retransmit_s = slow_retransmit_s
        self.heartbeat_every_s = heartbeat_every_s
        self.with_tags = tags
        self._next_seq = first_seq & 0xFF
        self._queue: deque[ShoeMessage] = deque()
        self._outstanding: _Outstanding | None = None
        self._started_at: float | None = None
        self._last_sent_at = 0.0
        self._last_acked: int | None = None
        self._reuse_seq = False
        self._drop_acks = 0
        self._door_open = False
        self._unknown_tags = 0
        self.silent = False
        self.state = ShoeState.READY
        #: cards out of the shoe since the last shuffle (load) or reset
        self.count = 0
        #: Everything that happened, for tests: ("sent", seq), ("retransmit", seq), ...
        self.history: list[tuple[str, int]] = []
        self.dealt: list[Card] = []
        self.host_errors: list[str] = []

    # -- the dealer's side ------------------------------------------------------------

    @property
    def remaining(self) -> int:
        return len(self._cards)

    @property
    def halted(self) -> bool:
        """Whether the shoe waits on a message past its quick retransmissions (the host is
        away): it offers the message once a second and deals nothing else until it is
        acknowledged."""
        out = self._outstanding
        return out is not None and out.retransmits >= self.quick_retransmits

    def load(self, cards: Sequence[Card | str] | str | None = None, *,
             seed: int | None = None) -> None:
        """Put a new deck in the shoe (the given order, or shuffled with ``seed``): the card
        count starts again at 1."""
        self._cards = deque(card_order(cards, seed))
        self.count = 0

    def deal(self, count: int = 1) -> None:
        """Deal ``count`` cards: each leaves the shoe and is reported (or a fault is)."""
        for _ in range(count):
            if self._door_open:
                self._say(ShoeMessage("fault", fault=FaultCode.DOOR, detail="door is open"))
                return
            if not self._cards:
                self._say(ShoeMessage("fault", fault=FaultCode.EMPTY))
                return
            card = self._cards.popleft()
            self.dealt.append(card)
            self.count += 1
            if self._unknown_tags:
                self._unknown_tags -= 1
                self._say(ShoeMessage("fault", fault=FaultCode.TAGUNKNOWN, tag=UNKNOWN_TAG,
                                      detail=UNKNOWN_TAG))
                continue
            self._say(ShoeMessage("card", card=card,
                                  tag=deck_tag(card) if self.with_tags else None,
                                  count=self.count))

    def jam(self) -> None:
        """A card sticks in the exit: JAM, nothing dealt."""
        self._say(ShoeMessage("fault", fault=FaultCode.JAM))

    def misread(self) -> None:
        """The next card leaves the shoe but cannot be read: it is gone, MISREAD reported."""
        if self._cards:
            self.dealt.append(self._cards.popleft())
            self.count += 1
        self._say(ShoeMessage("fault", fault=FaultCode.MISREAD))

    def lose_cards(self, count: int = 1) -> None:
        """The next ``count`` cards leave the shoe and are never reported (a faulty shoe):
        the next card's count skips theirs."""
        for _ in range(min(count, len(self._cards))):
            self.dealt.append(self._cards.popleft())
            self.count += 1

    def reuse_seq(self) -> None:
        """Send the next message under the SEQ of the last acknowledged one (a faulty shoe):
        the host must refuse it (``CONFLICT``), and the shoe sends it again under a new SEQ."""
        self._reuse_seq = True

    def report_duplicate(self, card: Card | str) -> None:
        card = card if isinstance(card, Card) else parse_card(card)
        self._say(ShoeMessage("fault", fault=FaultCode.DUPLICATE, detail=str(card).upper()))

    def unknown_tag(self, count: int = 1) -> None:
        """The next ``count`` cards carry a tag the shoe does not know: TAGUNKNOWN each."""
        self._unknown_tags += count

    def open_door(self) -> None:
        self._door_open = True
        self._say(ShoeMessage("fault", fault=FaultCode.DOOR))
        self._set_state(ShoeState.DOOROPEN)

    def close_door(self) -> None:
        self._door_open = False
        self._set_state(ShoeState.READY)

    def drop_acks(self, count: int = 1) -> None:
        """Ignore the next ``count`` acknowledgements, so the shoe retransmits."""
        self._drop_acks += count

    def go_silent(self) -> None:
        """Stop sending anything at all (the host should call the shoe lost after 3 s)."""
        self.silent = True

    def resume(self) -> None:
        self.silent = False

    # -- the wire side ----------------------------------------------------------------

    def acknowledge(self, seq: int) -> None:
        out = self._outstanding
        if out is None or out.seq != seq:
            self.history.append(("stray-ack", seq))
            return
        if self._drop_acks:
            self._drop_acks -= 1
            self.history.append(("ack-dropped", seq))
            return
        self.history.append(("acked", seq))
        self._last_acked = seq
        self._outstanding = None

    def negative_ack(self, seq: int, code: str = "") -> None:
        """The host refused message ``seq``: send it again at once. Refused as a conflict
        (the host holds another message under that SEQ), it goes again under the next SEQ."""
        out = self._outstanding
        if out is None or out.seq != seq:
            self.history.append(("stray-nak", seq))
            return
        out.resend_now = True
        if code == NAK_CONFLICT:
            self.history.append(("conflict", seq))
            out.seq = self._take_seq()
            out.retransmits = 0
        else:
            self.history.append(("nak", seq))

    def host_reset(self) -> None:
        """``R``: clear the fault state; the card count starts again at 1. Messages not yet
        acknowledged are kept (the shoe never drops a card)."""
        self._door_open = False
        self.count = 0
        self._set_state(ShoeState.READY, force=True)

    def status_query(self) -> None:
        self._say(ShoeMessage("status", state=self.state))

    def _silent_now(self, now: float) -> bool:
        """Whether the shoe sends nothing now; a silent shoe's power-on time still counts from
        the first time it was asked (its heartbeats' uptime, once it speaks)."""
        if self.silent and self._started_at is None:
            self._started_at = now
        return self.silent

    def poll_messages(self, now: float) -> list[tuple[int, ShoeMessage, bool]]:
        """What goes on the wire now: (seq, message, is_retransmission) in order."""
        if self._started_at is None:
            self._started_at = now
            self._last_sent_at = now
        if self.silent:
            return []
        pending = self._outstanding
        if pending is not None:
            wait = self.retransmit_after_s if pending.retransmits < self.quick_retransmits \
                else self.slow_retransmit_s
            if not pending.resend_now and now - pending.sent_at < wait - _EPS:
                return []
            pending.retransmits += 1
            pending.resend_now = False
            pending.sent_at = now
            self._last_sent_at = now
            self.history.append(("retransmit", pending.seq))
            if pending.retransmits == self.quick_retransmits + 1:
                self.history.append(("halted", pending.seq))
            return [(pending.seq, pending.message, True)]
        if not self._queue and now - self._last_sent_at >= self.heartbeat_every_s - _EPS:
            self._queue.append(ShoeMessage("heartbeat", uptime_s=int(now - self._started_at)))
        if not self._queue:
            return []
        message = self._queue.popleft()
        seq = self._take_seq()
        self._outstanding = _Outstanding(seq, message, now)
        self._last_sent_at = now
        self.history.append(("sent", seq))
        return [(seq, message, False)]

    def _take_seq(self) -> int:
        """The SEQ of a new frame (the last acknowledged one if :meth:`reuse_seq` asked)."""
        if self._reuse_seq and self._last_acked is not None:
            self._reuse_seq = False
            return self._last_acked
        seq = self._next_seq
        self._next_seq = (seq + 1) & 0xFF
        return seq

    def _say(self, message: ShoeMessage) -> None:
        self._queue.append(message)

    def _set_state(self, state: ShoeState, force: bool = False) -> None:
        if force or state != self.state:
            self.state = state
            self._say(ShoeMessage("status", state=state))


class Lbs1ShoeModel(ShoeModel):
    """A shoe speaking LBS1 frames (docs/protocols.md section 1)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # ShoeModel's
        super().__init__(*args, **kwargs)
        self._parser = FrameParser()
        self._pending_noise: list[bytes] = []
        self._bad_crcs = 0
        self._overlong = 0

    # -- LBS1-only faults ---------------------------------------------------------------

    def inject_noise(self, data: bytes = b"\x00\xff\x7fNOISE\r\n") -> None:
        """Send ``data`` raw before the next frame (line noise, a glitch, a half frame)."""
        self._pending_noise.append(bytes(data))

    def corrupt_next_crc(self, count: int = 1) -> None:
        """Send the next ``count`` transmissions with a wrong CRC (the host NAKs them)."""
        self._bad_crcs += count

    def send_overlong(self) -> None:
        """Send one frame whose payload is longer than 64 bytes (the host must NAK it)."""
        self._overlong += 1

    # -- bytes ------------------------------------------------------------------------

    def receive(self, data: bytes, now: float) -> None:
        for item in self._parser.feed(data):
            if isinstance(item, FrameError):
                self.host_errors.append(item.reason)
                continue
            if item.type == "A":
                self._on_seq_payload(item.payload, self.acknowledge)
            elif item.type == "N":
                seq_text, _, code = item.payload.partition(",")
                self._on_seq_payload(seq_text, lambda seq: self.negative_ack(seq, code))
            elif item.type == "Q":
                self.status_query()
            elif item.type == "R":
                self.host_reset()
            else:
                self.host_errors.append(f"unexpected host frame type {item.type!r}")

    def _on_seq_payload(self, text: str, action: Callable[[int], object]) -> None:
        try:
            seq = int(text, 16)
        except ValueError:
            self.host_errors.append(f"bad SEQ in host frame: {text!r}")
            return
        action(seq)

    def transmissions(self, now: float) -> list[bytes]:
        """Separate wire writes due now (noise and frames), for transports and the recorder."""
        if self._silent_now(now):
            return []
        out = list(self._pending_noise)
        self._pending_noise.clear()
        while self._overlong:
            self._overlong -= 1
            out.append(encode_overlong(self._take_seq()))
        for seq, message, _ in self.poll_messages(now):
            out.append(self._encode(seq, message))
        return out

    def poll(self, now: float) -> bytes:
        return b"".join(self.transmissions(now))

    def _encode(self, seq: int, message: ShoeMessage) -> bytes:
        if message.kind == "card":
            assert message.card is not None
            kind, payload = "C", card_payload(str(message.card), message.tag, message.count)
        elif message.kind == "fault":
            assert message.fault is not None
            kind = "E"
            payload = message.fault.value + (f",{message.detail}" if message.detail else "")
        elif message.kind == "status":
            assert message.state is not None
            kind, payload = "S", message.state.value
        else:
            kind, payload = "H", str(message.uptime_s)
        frame = encode_frame(seq, kind, payload)
        if self._bad_crcs:
            self._bad_crcs -= 1
            good = int(frame[-4:], 16)
            frame = encode_frame(seq, kind, payload, crc=good ^ 0x5A5A)
        return frame


class UsbShoeModel(ShoeModel):
    """A shoe speaking USB reports (docs/protocols.md section 2)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # ShoeModel's
        super().__init__(*args, **kwargs)
        self._raw_reports: list[bytes] = []

    def inject_report(self, report: bytes) -> None:
        """Send ``report`` as is before the next one (malformed-report injection)."""
        self._raw_reports.append(bytes(report))

    def control(self, request_type: int, request: int, value: int, index: int = 0) -> bool:
        """A control transfer from the host; False = stall (not a request the shoe knows)."""
        if request_type == ACK_REQUEST_TYPE and request == ACK_REQUEST:
            self.acknowledge(value & 0xFF)
            return True
        if request_type == ACK_REQUEST_TYPE and request == REFUSE_REQUEST:
            self.negative_ack(value & 0xFF, NAK_CONFLICT if index == REFUSE_CONFLICT else "")
            return True
        self.host_errors.append(f"unknown control request {request_type:#04x}/{request:#04x}")
        return False

    def reports(self, now: float) -> list[bytes]:
        if self._silent_now(now):
            return []
        out = list(self._raw_reports)
        self._raw_reports.clear()
        for seq, message, _ in self.poll_messages(now):
            out.append(self._encode(seq, message))
        return out

    @staticmethod
    def _encode(seq: int, message: ShoeMessage) -> bytes:
        if message.kind == "card":
            assert message.card is not None
            return encode_card(seq, message.card, message.tag, message.count)
        if message.kind == "fault":
            assert message.fault is not None
            return encode_fault(seq, message.fault, message.tag)
        if message.kind == "status":
            assert message.state is not None
            return encode_status(seq, message.state)
        return encode_heartbeat(seq, message.uptime_s)

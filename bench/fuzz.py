"""Hypothesis fuzzing of every parser that reads untrusted input, with counted inputs.

Targets (each a function ``target(examples) -> inputs tried``):

* ``lbs1_stream``: LBS1 shoe bytes built from valid frames, random garbage, bit-flipped,
  truncated and over-long frames, fed to :class:`drivers.lbs1.FrameParser` in random chunks.
  The parser never raises; every frame it accepts re-encodes to bytes found verbatim in the
  input (so it was framed with a good CRC); every valid frame is accepted, in order, whatever
  garbage came before it; the chunking changes nothing; a card reaches the shoe rules only
  from an accepted frame.
* ``lbs1_bitflip``: one valid frame with one bit flipped: never accepted (CRC-16 catches every
  single-bit error) unless the flip made a new frame whose bytes are in the input; a valid
  frame after it is never lost.
* ``lbs1_random``: raw random bytes: never raises, nothing accepted that is not in the input.
* ``usb_reports``: random byte strings of any length through the USB report decoder.
* ``spot_lines``: random bytes and valid lines among garbage through the spot-controller
  line splitter and line decoder.
* ``commands_json``, ``commands_bytes``: random JSON values (biased towards almost-valid
  commands) and random byte strings through :meth:`controller.daemon.loop.TableDaemon.command` of
  a started daemon without devices: never raises, every refusal is ``{"ok": False, "error":
  <non-empty>}``, a refused command leaves the table's snapshot unchanged, and the journal
  rebuilds the same table at the end.

``python -m bench.fuzz [EXAMPLES]`` runs them all; :func:`run` returns the counts.
"""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.core.cards import DECK
from drivers.lbs1 import (
    ETX,
    MAX_PAYLOAD,
    STX,
    Frame,
    FrameError,
    FrameParser,
    card_payload,
    encode_frame,
    encode_overlong,
)
from drivers.lines import LineError, LineSplitter
from drivers.shoe import Message, ShoeReceiver
from drivers.shoe_events import CardRead, FaultCode, FrameRejected, ShoeFault
from drivers.shoe_serial import frame_to_inbound
from drivers.spots import Reply, WagerSensor
from drivers.spots_ascii import decode_line
from drivers.usb_report import (
    CARD_REPORT_SIZE,
    REPORT_CARD,
    REPORT_SIZE,
    ReportError,
    decode_report,
    decode_to_event,
    encode_card,
    expected_size,
    report_sequence,
)

Target = Callable[[int], int]


def _settings(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, database=None, derandomize=False,
                    suppress_health_check=list(HealthCheck), print_blob=True)


# --- LBS1 -----------------------------------------------------------------------------------

_TYPES = st.sampled_from("ABCEHNQRSabcz")
_PRINTABLE = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=MAX_PAYLOAD)
_TAGS = st.none() | st.text("0123456789ABCDEF", min_size=2, max_size=20)


@st.composite
def card_frames(draw: st.DrawFn) -> bytes:
    card = draw(st.sampled_from(DECK))
    return encode_frame(draw(st.integers(0, 255)), "C",
                        card_payload(str(card), draw(_TAGS), draw(st.integers(1, 0xFFFF))))


@st.composite
def any_frames(draw: st.DrawFn) -> bytes:
    return encode_frame(draw(st.integers(0, 255)), draw(_TYPES), draw(_PRINTABLE))


VALID_FRAMES = card_frames() | any_frames()


@st.composite
def bad_segments(draw: st.DrawFn) -> bytes:
    """Garbage, a bit-flipped frame, a truncated frame, or an over-long frame."""
    kind = draw(st.sampled_from(("garbage", "flip", "truncate", "overlong", "badcrc")))
    if kind == "garbage":
        return draw(st.binary(max_size=120))
    if kind == "overlong":
        return encode_overlong(draw(st.integers(0, 255)),
                               draw(st.integers(MAX_PAYLOAD + 1, MAX_PAYLOAD + 200)))
    frame = draw(VALID_FRAMES)
    if kind == "flip":
        position = draw(st.integers(0, len(frame) - 1))
        bit = draw(st.integers(0, 7))
        return frame[:position] + bytes([frame[position] ^ (1 << bit)]) + frame[position + 1:]
    if kind == "badcrc":
        crc = int(frame[-4:], 16) ^ draw(st.integers(1, 0xFFFF))
        return frame[:-4] + f"{crc:04X}".encode()
    return frame[:draw(st.integers(0, len(frame) - 1))]


def _chunks(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(cut, len(data)) for cut in cuts})
    pieces, start = [], 0
    for point in points:
        pieces.append(data[start:point])
        start = point
    pieces.append(data[start:])
    return pieces


def _parse(data: bytes, cuts: list[int] | None = None) -> list[Frame | FrameError]:
    parser = FrameParser()
    out: list[Frame | FrameError] = []
    for piece in (_chunks(data, cuts) if cuts else [data]):
        out += parser.feed(piece)
    out += parser.flush()
    return out


def _check_accepted(items: list[Frame | FrameError], data: bytes) -> list[Frame]:
    """Every accepted frame re-encodes to bytes that are in the input, with a good CRC."""
    frames = [item for item in items if isinstance(item, Frame)]
    for frame in frames:
        wire = frame.encode()
        assert wire in data, f"accepted {frame} whose bytes {wire!r} are not in the input"
        assert _parse(wire) == [frame], f"{frame} does not re-parse from its own encoding"
    for item in items:
        assert isinstance(item, (Frame, FrameError)), item
        if isinstance(item, FrameError):
            assert item.reason
    return frames


def _shoe_rules(items: list[Frame | FrameError]) -> list[CardRead]:
    """What the serial shoe driver turns parser output into: only accepted frames carry cards."""
    receiver, cards = ShoeReceiver(), []
    for item in items:
        inbound = frame_to_inbound(item)
        if isinstance(item, FrameError):
            assert not isinstance(inbound, Message)
        verdict = receiver.receive(inbound)
        for event in verdict.events:
            if isinstance(event, CardRead):
                assert isinstance(item, Frame) and item.type == "C", (item, event)
                cards.append(event)
    return cards


def lbs1_stream(examples: int) -> int:
    tried = 0

    @_settings(examples)
    @given(st.lists(st.tuples(st.booleans(), VALID_FRAMES, bad_segments()), max_size=12),
           st.lists(st.integers(0, 2000), max_size=20))
    def check(segments: list[tuple[bool, bytes, bytes]], cuts: list[int]) -> None:
        nonlocal tried
        tried += 1
        data, good = b"", []
        for good_first, frame, bad in segments:
            if good_first:
                data += frame + bad
            else:
                data += bad + frame
            good.append(frame)
        whole = _parse(data)
        assert _parse(data, cuts) == whole, "the chunking changed what was parsed"
        frames = _check_accepted(whole, data)
        # Every valid frame is accepted, in order, whatever garbage surrounds it.
        encoded = iter([frame.encode() for frame in frames])
        for frame in good:
            assert any(wire == frame for wire in encoded), f"valid frame {frame!r} was lost"
        cards = _shoe_rules(whole)
        assert len(cards) <= sum(1 for f in frames if f.type == "C")

    check()
    return tried


def lbs1_bitflip(examples: int) -> int:
    tried = 0

    @_settings(examples)
    @given(VALID_FRAMES, st.data(), VALID_FRAMES)
    def check(frame: bytes, data: st.DataObject, after: bytes) -> None:
        nonlocal tried
        tried += 1
        position = data.draw(st.integers(0, len(frame) - 1))
        bit = data.draw(st.integers(0, 7))
        flipped = bytes([frame[position] ^ (1 << bit)])
        mutated = frame[:position] + flipped + frame[position + 1:]
        items = _parse(mutated + after)
        frames = _check_accepted(items, mutated + after)
        if frame[position] not in (STX, ETX) and flipped[0] not in (STX, ETX):
            # Same framing, one bit wrong: CRC-16/CCITT detects every single-bit error.
            assert frames == _parse(after)[:1], f"accepted a bit-flipped frame: {items}"
        assert frames and frames[-1].encode() == after, f"the valid frame after was lost: {items}"
        _shoe_rules(items)

    check()
    return tried


def lbs1_random(examples: int) -> int:
    tried = 0

    @_settings(examples)
    @given(st.binary(max_size=600), st.lists(st.integers(0, 600), max_size=10))
    def check(data: bytes, cuts: list[int]) -> None:
        nonlocal tried
        tried += 1
        items = _parse(data, cuts)
        _check_accepted(items, data)
        _shoe_rules(items)

    check()
    return tried


# --- USB reports -----------------------------------------------------------------------------

def usb_reports(examples: int) -> int:
    tried = 0
    lengths = st.integers(0, 24)

    @_settings(examples)
    @given(st.one_of(lengths.flatmap(lambda n: st.binary(min_size=n, max_size=n)),
                     st.binary(min_size=REPORT_SIZE, max_size=REPORT_SIZE),
                     st.tuples(st.sampled_from(range(2, 5)), st.binary(min_size=7, max_size=7))
                     .map(lambda t: bytes([t[0]]) + t[1]),
                     st.binary(min_size=CARD_REPORT_SIZE - 1, max_size=CARD_REPORT_SIZE - 1)
                     .map(lambda rest: bytes([REPORT_CARD]) + rest)))
    def check(report: bytes) -> None:
        nonlocal tried
        tried += 1
        event = decode_to_event(report)             # never raises
        if len(report) != expected_size(report):
            assert isinstance(event, FrameRejected) and event.reason
            try:
                report_sequence(report)
            except ReportError:
                pass
            else:
                raise AssertionError("a report of the wrong size had a sequence")
            return
        try:
            decoded = decode_report(report)
        except ReportError as error:
            if report[0] == REPORT_CARD:
                # An unreadable card report is a misread: the hand pauses, nothing is lost.
                assert isinstance(event, ShoeFault) and event.code is FaultCode.MISREAD
            else:
                assert str(error) and isinstance(event, FrameRejected)
            return
        if isinstance(decoded, CardRead):
            assert report[0] == REPORT_CARD
            assert encode_card(decoded.seq, decoded.card, decoded.tag, decoded.count) == report

    check()
    return tried


# --- spot-controller lines ---------------------------------------------------------------------

_VALID_LINES = st.one_of(
    st.just("OK"), st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1,
                           max_size=16).map(lambda code: f"ERR {code}"),
    st.tuples(st.integers(1, 7), st.booleans()).map(lambda t: f"S {t[0]} {int(t[1])}"))


def spot_lines(examples: int) -> int:
    tried = 0

    @_settings(examples)
    @given(st.lists(st.tuples(st.binary(max_size=200), _VALID_LINES,
                              st.sampled_from((b"\r\n", b"\n"))), max_size=10),
           st.binary(max_size=300), st.lists(st.integers(0, 3000), max_size=10))
    def check(segments: list[tuple[bytes, str, bytes]], tail: bytes,
              cuts: list[int]) -> None:
        nonlocal tried
        tried += 1
        data, valid = b"", []
        for junk, line, end in segments:
            data += junk + b"\n" + line.encode() + end
            valid.append(line)
        data += tail
        outputs = []
        for chunking in (None, cuts):
            splitter = LineSplitter()
            out = []
            for piece in (_chunks(data, chunking) if chunking else [data]):
                out += splitter.feed(piece)
            outputs.append(out)
        assert outputs[0] == outputs[1], "the chunking changed the lines"
        lines = [item for item in outputs[0] if isinstance(item, str)]
        for item in outputs[0]:
            if isinstance(item, LineError):
                assert item.reason
                continue
            assert item and len(item) <= 80 and all(0x20 <= ord(c) <= 0x7E for c in item)
            try:
                decoded = decode_line(item)
            except ValueError as error:
                assert str(error)
                continue
            assert isinstance(decoded, (Reply, WagerSensor))
            if isinstance(decoded, WagerSensor):
                assert 1 <= decoded.spot <= 7
        remaining = iter(lines)
        for line in valid:                      # a valid line after garbage is never lost
            assert any(seen == line for seen in remaining), f"line {line!r} was lost"

    check()
    return tried


# --- the command channel ---------------------------------------------------------------------

CREDENTIAL = "fuzz-supervisor-credential"


@contextlib.contextmanager
def command_daemon(game: str = "cali_lowball") -> Iterator[Any]:
    """A started daemon without devices (sockets on ipc:// in a temporary directory), its
    journal batched: :meth:`TableDaemon.command` is called directly, never its loop."""
    import zmq

    from controller.cli.demo import demo_config
    from controller.daemon.loop import TableDaemon
    from controller.daemon.systemd_notify import Notifier
    from controller.settings.table_config import Devices, Limits, Stream

    with tempfile.TemporaryDirectory(prefix="lowball-fuzz-") as tmp:
        stream = Stream(events=f"ipc://{tmp}/events", replay=f"ipc://{tmp}/replay",
                        commands=f"ipc://{tmp}/commands")
        loaded = demo_config(game, shoe="unused", spots="unused", meter="unused",
                             credential=CREDENTIAL, stream=stream)
        loaded = loaded.model_copy(update={"config": loaded.config.model_copy(update={
            "devices": Devices(), "limits": Limits(min_ante=1, max_ante=10_000)})})
        context = zmq.Context()
        daemon = TableDaemon(loaded, state_dir=Path(tmp) / "state", context=context,
                             notifier=Notifier.from_environment({}), durability="batched")
        try:
            daemon.start()
            yield daemon
        finally:
            daemon.close()
            context.term()


def _json_values() -> st.SearchStrategy:
    scalars = (st.none() | st.booleans() | st.integers(-2**70, 2**70)
               | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=40)
               | st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1,
                         max_size=2))  # lone surrogates: JSON's \ud800 escapes
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                        | st.dictionaries(st.text(max_size=12), inner, max_size=4),
                        max_leaves=12)


_NAMES = st.sampled_from(("open", "close", "place", "cancel", "lock", "decide", "continue",
                          "void", "verify_jackpot", "status", "fly", ""))
_FIELDS = st.fixed_dictionaries({}, optional={
    "spot": st.integers(-1, 9) | _json_values(),
    "wager": st.sampled_from(("ante", "xtra_bonus", "lowdown_bonus", "bonus", "progressive",
                              "")) | st.text(max_size=40),
    "amount": st.integers(-5, 20_000) | _json_values(),
    "player": st.text(max_size=70),
    "decision": st.sampled_from(("raise", "check", "bet", "fold", "stand", "discard:As"))
    | st.text(max_size=40),
    "reason": st.text(max_size=220),
    "by": _json_values(),
    "credential": st.sampled_from((CREDENTIAL, "wrong")) | _json_values(),
    "extra": _json_values(),
})
#: Commands a dealer could well send, so that hands lock, deal decisions and settle states.
_PLAUSIBLE = st.one_of(
    st.builds(lambda spot, wager, amount: {"command": "place", "spot": spot, "wager": wager,
                                           "amount": amount},
              st.integers(1, 7), st.sampled_from(("ante", "xtra_bonus", "lowdown_bonus",
                                                  "bonus", "progressive")),
              st.sampled_from((100, 500, 1000))),
    st.sampled_from(({"command": "lock"}, {"command": "open"}, {"command": "continue"},
                     {"command": "void", "reason": "fuzz", "credential": CREDENTIAL},
                     {"command": "verify_jackpot", "credential": CREDENTIAL})),
    st.builds(lambda spot, decision: {"command": "decide", "spot": spot, "decision": decision},
              st.integers(1, 7), st.sampled_from(("raise", "check", "bet", "fold", "stand"))))
COMMANDS = st.one_of(
    _PLAUSIBLE,
    st.builds(lambda name, fields: {"command": name, **fields}, _NAMES, _FIELDS),
    _json_values())


def _raw_json(value: Any) -> bytes:
    return json.dumps(value).encode()


class CommandChecker:
    """The command channel's contract for one request (see the module docstring)."""

    def __init__(self, daemon: Any):
        self.daemon = daemon
        self.tried = self.accepted = self.refused = self.counted = 0

    def __call__(self, payload: bytes) -> dict[str, Any]:
        daemon = self.daemon
        before, seq = daemon.table.snapshot(), daemon.journal.last_seq
        reply = daemon.command(payload)                     # must never raise
        self.tried += 1
        json.dumps(reply).encode()                          # the reply can always be sent
        assert isinstance(reply, dict) and isinstance(reply.get("ok"), bool), reply
        if reply["ok"]:
            self.accepted += 1
            return reply
        self.refused += 1
        assert isinstance(reply.get("error"), str) and reply["error"].strip(), reply
        assert daemon.table.snapshot() == before, f"refused {payload!r} but the table changed"
        new = [record.type for record in daemon.journal.records(after_seq=seq)]
        assert set(new) <= {"command_refused", "command_accepted", "lock_refused",
                            "refusals_counted", "alarm"}, new
        if reply.get("counted"):  # the client's refusals in this window are being counted
            assert "command_refused" not in new and "seq" not in reply, (new, reply)
            self.counted += 1
            return reply
        assert new and new[-1] != "refusals_counted", new
        assert reply["seq"] == daemon.journal.last_seq
        return reply

    def check_rebuild(self) -> None:
        """The journal rebuilds exactly the table the daemon holds."""
        from controller.stream import wire
        from controller.settings.table_config import build_table

        table = build_table(self.daemon.loaded)
        table.replay([wire.to_event(wire.decode_event(record.message))
                      for record in self.daemon.journal.records()])
        assert table.snapshot() == self.daemon.table.snapshot()
        assert self.daemon.journal.verify().ok


#: Per command target, what the last run saw: {"accepted": n, "refused": n}.
COMMAND_OUTCOMES: dict[str, dict[str, int]] = {}


def _command_target(strategy: st.SearchStrategy[Any], encode: Callable[[Any], bytes],
                    examples: int, games: tuple[str, ...], name: str) -> int:
    tried = 0
    outcomes = COMMAND_OUTCOMES[name] = {"accepted": 0, "refused": 0}
    for game in games:
        with command_daemon(game) as daemon:
            checker = CommandChecker(daemon)
            checker(b'{"command": "open"}')

            @_settings(max(1, examples // len(games)))
            @given(strategy)
            def check(value: Any) -> None:
                checker(encode(value))

            check()
            checker.check_rebuild()
            tried += checker.tried
            outcomes["accepted"] += checker.accepted
            outcomes["refused"] += checker.refused
    return tried


def commands_json(examples: int, games: tuple[str, ...] = ("cali_lowball",
                                                            "three_card_lowball")) -> int:
    return _command_target(COMMANDS, _raw_json, examples, games, "commands_json")


#: Byte strings: random, JSON text with mutations, and the nasty corners JSON allows.
_NASTY = st.sampled_from((
    b"[" * 4000, b"{\"a\":" * 1300, b'{"command":"open","by":"\\ud800"}',
    b'{"command":"\\udfff"}', b'{"command":"open","credential":"\\ud800"}',
    b'{"command":"place","spot":1,"wager":"ante","amount":NaN}', b"Infinity", b"-0",
    b"\xff\xfe{}", b'{"command":"open"}\x00', "{\"command\":\"open\",\"by\":\"\u00e9\"}".encode(),
    b'{"command":"open","command":"lock"}', b"1" * 4000, b""))


def _mutated_json(value_and_cut: tuple[Any, int, int]) -> bytes:
    value, position, byte = value_and_cut
    data = _raw_json(value)
    position %= len(data) + 1
    return data[:position] + bytes([byte]) + data[position + 1:]


COMMAND_BYTES = st.one_of(
    st.binary(max_size=300), _NASTY,
    st.tuples(COMMANDS, st.integers(0, 400), st.integers(0, 255)).map(_mutated_json))


def commands_bytes(examples: int, games: tuple[str, ...] = ("cali_lowball",)) -> int:
    return _command_target(COMMAND_BYTES, lambda data: data, examples, games,
                           "commands_bytes")


TARGETS: dict[str, Target] = {
    "lbs1_stream": lbs1_stream,
    "lbs1_bitflip": lbs1_bitflip,
    "lbs1_random": lbs1_random,
    "usb_reports": usb_reports,
    "spot_lines": spot_lines,
    "commands_json": commands_json,
    "commands_bytes": commands_bytes,
}


def run(examples: int = 20_000, targets: tuple[str, ...] | None = None) -> dict[str, int]:
    """Fuzz every target (or the named ones) with up to ``examples`` inputs each; returns the
    inputs tried per target. A failed property raises (hypothesis prints the minimal input)."""
    import logging

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))
    counts = {}
    for name in targets or tuple(TARGETS):
        counts[name] = TARGETS[name](examples)
    return counts


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    examples = int(argv[0]) if argv else 20_000
    start = time.monotonic()
    total = 0
    for name in TARGETS:
        began = time.monotonic()
        count = run(examples, (name,))[name]
        total += count
        extra = COMMAND_OUTCOMES.get(name)
        note = f"  ({extra['accepted']:,} accepted, {extra['refused']:,} refused)" if extra else ""
        print(f"  {name:<16} {count:>9,} inputs  {time.monotonic() - began:7.1f} s{note}",
              flush=True)
    print(f"  {'total':<16} {total:>9,} inputs  {time.monotonic() - start:7.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

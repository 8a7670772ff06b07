"""Record the reference shoe sessions in ``tests/data`` from the simulator, reproducibly.

The shoe model and the host's acknowledgement rules run against a simulated clock in 10 ms
ticks, so the same script always gives the same bytes; the provenance header says which
script and which cards. Regenerate with ``python -m simulators.recorder tests/data``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drivers.lbs1 import FrameParser
from drivers.shoe import ShoeReceiver
from drivers.shoe_events import ShoeEvent, event_record
from drivers.shoe_serial import HostFrames, frame_to_inbound
from simulators.sessions import (
    HOST_TO_SHOE,
    SHOE_TO_HOST,
    SessionLog,
    Transmission,
    dump_expected,
)
from simulators.shoe import Lbs1ShoeModel

TICK_S = 0.01
Step = tuple[Any, ...]  # ("wait", seconds) or (model method name, *arguments)


@dataclass(frozen=True)
class SessionScript:
    name: str
    description: str
    steps: tuple[Step, ...]
    cards: str | None = None
    seed: int | None = None

    @property
    def provenance(self) -> str:
        deck = f"cards '{self.cards}'" if self.cards else f"deck shuffled with seed {self.seed}"
        return f"simulators/recorder.py session {self.name}, {deck}"


SESSIONS: dict[str, SessionScript] = {s.name: s for s in (
    SessionScript(
        "clean-deal", "eight cards dealt in three bursts between heartbeats, no faults",
        (("wait", 1.05), ("deal", 3), ("wait", 0.3), ("deal", 3), ("wait", 0.3), ("deal", 2),
         ("wait", 1.2)),
        seed=7),
    SessionScript(
        "faults-noise", "noise, a bad CRC (NAKed, resent), a dropped ACK (retransmission "
        "acknowledged again, counted once), an over-long frame, a frame cut short",
        (("deal", 1), ("wait", 0.05), ("inject_noise", b"\x00\xff\x7fNOISE\r\n"), ("deal", 1),
         ("wait", 0.05), ("corrupt_next_crc",), ("deal", 1), ("wait", 0.1), ("drop_acks", 1),
         ("deal", 1), ("wait", 0.5), ("send_overlong",), ("deal", 1), ("wait", 0.1),
         ("inject_noise", b"\x0205CAS,04A1"), ("deal", 1), ("wait", 0.1),
         ("inject_noise", b"\x0299H\xff\x0312AB"), ("deal", 1), ("wait", 1.2)),
        cards="As 2d 3c 4h 5s 6d 7c"),
    SessionScript(
        "jam-door", "a jam, the door opened mid-deal and closed, a misread, an unknown tag, "
        "the shoe run empty",
        (("deal", 2), ("wait", 0.05), ("jam",), ("wait", 0.5), ("deal", 1), ("wait", 0.05),
         ("open_door",), ("wait", 0.1), ("deal", 1), ("wait", 0.3), ("close_door",),
         ("wait", 0.1), ("misread",), ("wait", 0.1), ("unknown_tag", 1), ("deal", 1),
         ("wait", 0.1), ("deal", 3), ("wait", 0.3), ("deal", 1), ("wait", 1.2)),
        cards="Kh Qs 9d 8c Ts 3h 2s"),
    SessionScript(
        "halt-conflict", "a card whose acknowledgements are lost past the three quick "
        "retransmissions (offered once a second until acknowledged, counted once), a frame "
        "reusing the last SEQ with another card (refused N SEQ,CONFLICT, sent again under a "
        "new SEQ), two cards lost inside the shoe (the next count skips 4 and 5)",
        (("deal", 1), ("wait", 0.1), ("drop_acks", 5), ("deal", 1), ("wait", 3.0),
         ("reuse_seq",), ("deal", 1), ("wait", 0.3), ("lose_cards", 2), ("deal", 1),
         ("wait", 1.2)),
        cards="Jc 4d 7h 2c 9s 5h"),
)}


def record(script: SessionScript) -> tuple[SessionLog, list[ShoeEvent]]:
    """Run ``script``; the wire log and the events the host decoded."""
    model = Lbs1ShoeModel(script.cards, seed=script.seed)
    parser, receiver, host = FrameParser(), ShoeReceiver(), HostFrames()
    log = SessionLog(header=[
        f"LBS1 card shoe session: {script.name}",
        "Serial: 115200 8N1",
        "Protocol: LBS1 with card counts; unacknowledged frames offered until acknowledged",
        f"Source: {script.provenance}",
        f"Description: {script.description}",
        "Captured: simulated clock, 10 ms ticks; both directions as they crossed the wire",
        "Format: <seconds> <S|H> <hex bytes>   S = shoe to host, H = host to shoe",
    ])
    events: list[ShoeEvent] = []
    tick = 0

    def run_for(seconds: float) -> None:
        nonlocal tick
        for _ in range(round(seconds / TICK_S)):
            now = tick * TICK_S
            for chunk in model.transmissions(now):
                log.records.append(Transmission(now, SHOE_TO_HOST, chunk))
                reply = b""
                for item in parser.feed(chunk):
                    verdict = receiver.receive(frame_to_inbound(item))
                    events.extend(verdict.events)
                    if verdict.ack is not None:
                        reply += host.ack(verdict.ack)
                    if verdict.nak is not None:
                        reply += host.nak(*verdict.nak)
                if reply:
                    log.records.append(Transmission(now, HOST_TO_SHOE, reply))
                    model.receive(reply, now)
            tick += 1

    for step in script.steps:
        if step[0] == "wait":
            run_for(step[1])
        else:
            action: Callable[..., None] = getattr(model, step[0])
            action(*step[1:])
    return log, events


def write_session(script: SessionScript, directory: Path) -> tuple[Path, Path]:
    log, events = record(script)
    log_path = directory / f"shoe-{script.name}.lbs1.log"
    chk_path = directory / f"shoe-{script.name}.lbs1.chk"
    log_path.write_text(log.dumps(), encoding="ascii")
    chk_path.write_text(dump_expected([event_record(e) for e in events]), encoding="utf-8")
    return log_path, chk_path


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m simulators.recorder OUTPUT_DIRECTORY", file=sys.stderr)
        return 2
    directory = Path(args[0])
    directory.mkdir(parents=True, exist_ok=True)
    for script in SESSIONS.values():
        for path in write_session(script, directory):
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())

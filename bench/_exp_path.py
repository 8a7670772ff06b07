"""The daemon's per-input path alone: commands and cards handed to the table daemon in this
process, on this thread, with no main loop, no sockets between, no heartbeat.

``python -m bench.daemon_path [--hands N]`` starts a :class:`TableDaemon` over the simulated
devices (``--durability batched``), opens the table and deals N one-spot Cali LowBall hands
(after 20 to warm up): each command through ``daemon.command`` (parsed, checked, carried out,
journaled, published, answered), each card through ``daemon.handle_report`` (as the shoe's
thread reports it: journaled, published, acknowledged, lamps). It prints the thread's CPU per
input, and apart a command's and a card's. Set against ``bench/daemon_cpu.py`` (the whole process as systemd runs it), the
difference is the loop, the sockets' transport and the running chain check.

It runs in an older tree too, with that tree on ``PYTHONPATH`` and its own venv (``python
/path/to/this/file``): the module layout of the tree before the layer split is tried second.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.pipeline import _decision
from bench.power_loss import write_config
from simulators.meter import AlphaSignModel
from simulators.pty_transport import PtyTransport
from simulators.shoe import Lbs1ShoeModel
from simulators.spots import SpotControllerModel

#: Where the modules this needs live: this tree, then the tree before the layer split.
_LAYOUTS = (
    {"logs": "controller.cli.logs", "cards": "controller.core.cards",
     "games": "controller.core.games", "hub": "controller.daemon.device_hub",
     "loop": "controller.daemon.loop", "config": "controller.settings.table_config"},
    {"logs": "controller.logs", "cards": "controller.cards", "games": "controller.games",
     "hub": "controller.devices", "loop": "controller.daemon", "config": "controller.table_config"},
)


def _modules() -> dict[str, Any]:
    for layout in _LAYOUTS:
        try:
            return {name: importlib.import_module(module) for name, module in layout.items()}
        except ImportError:
            continue
    raise ImportError("neither this tree's modules nor the tree before the layer split's")


M = _modules()
import os as _os
if _os.environ.get("KEPT") and M["loop"].__name__.startswith("controller.daemon"):
    import controller.stream.journal as _j; _j.WRITTEN_KEPT = int(_os.environ["KEPT"])


class DealtInProcess:
    """One daemon in this process and the hands it is dealt."""

    def __init__(self, directory: Path) -> None:
        self.simulators = [PtyTransport(model, name=name) for model, name in (
            (Lbs1ShoeModel(), "shoe"), (SpotControllerModel(), "spots"),
            (AlphaSignModel(), "meter"))]
        for simulator in self.simulators:
            simulator.start()
        shoe, spots, meter = (simulator.url for simulator in self.simulators)
        config = write_config(directory / "table.toml", "cali_lowball", shoe=shoe, spots=spots,
                              meter=meter, stream_dir=directory)
        loaded = M["config"].load_config(config)
        self.setup = loaded.setup()
        self.daemon = M["loop"].TableDaemon(loaded, state_dir=directory / "state",
                                            durability="batched")
        self.daemon.start()
        self.rng, self.inputs, self.cards = random.Random(7), 0, 0
        #: this thread's CPU (ns) and count of commands, and of cards, since the last reset
        self.spent = {"command": [0, 0], "card": [0, 0]}
        self.ask({"command": "open"})

    def ask(self, request: dict[str, Any]) -> None:
        payload = json.dumps(request).encode()
        started = time.thread_time_ns()
        reply = self.daemon.command(payload)
        self._spent("command", started)
        if not reply["ok"]:
            raise RuntimeError(f"refused: {request}: {reply}")

    def _spent(self, kind: str, started: int) -> None:
        spent = self.spent[kind]
        spent[0] += time.thread_time_ns() - started
        spent[1] += 1
        self.inputs += 1

    def hand(self) -> None:
        wagers = {1: {"ante": 1000, "xtra_bonus": 1000}}
        for wager, amount in wagers[1].items():
            self.ask({"command": "place", "spot": 1, "wager": wager, "amount": amount})
        self.ask({"command": "lock"})
        deck = list(M["cards"].DECK)
        self.rng.shuffle(deck)
        hand = M["games"].CaliLowballHand(self.setup, wagers)
        while True:
            if expected := hand.cards_expected():
                for _ in range(expected):
                    card = deck.pop()
                    self.cards += 1  # the shoe's frame seq and its count of cards dealt
                    report = M["hub"].Report("card",
                                             (card, self.cards % 65_535 + 1, "", self.cards))
                    started = time.thread_time_ns()
                    self.daemon.handle_report(report)
                    self._spent("card", started)
                    hand.deal(card)
                continue
            step = hand.next_step()
            if step.kind == "settled":
                return
            decision = _decision("cali_lowball", hand, step, step.seats[0])
            self.ask({"command": "decide", "spot": step.seats[0], "decision": decision})
            hand.decide(step.seats[0], M["games"].Decision.parse(decision))

    def close(self) -> None:
        self.daemon.close()
        for simulator in self.simulators:
            simulator.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--hands", type=int, default=300, choices=range(50, 100_001),
                        metavar="50-100000")
    args = parser.parse_args(argv)
    M["logs"].configure(json_lines=True, stream=open("/dev/null", "w"))
    with tempfile.TemporaryDirectory(prefix="lowball-bench-path-") as directory:
        table = DealtInProcess(Path(directory))
        try:
            for _ in range(20):
                table.hand()
            gc.collect()
            gc.freeze()  # as `lowball-table run` does once started
            table.inputs, table.spent = 0, {"command": [0, 0], "card": [0, 0]}
            _gs = [x["collections"] for x in gc.get_stats()]
            _gt = []
            def _cb(phase, info, _gt=_gt):
                if phase == "start": _gt.append(time.thread_time_ns())
                else: _gt[-1] = (time.thread_time_ns() - _gt[-1], info["collected"], info["generation"])
            gc.callbacks.append(_cb)
            started = time.thread_time()
            for _ in range(args.hands):
                table.hand()
            cpu = time.thread_time() - started
            print("gc collections", [x["collections"] - y for x, y in zip(gc.get_stats(), _gs)], _gt)
        finally:
            table.close()
    print(f"{args.hands:,} one-spot Cali LowBall hands, {table.inputs:,} inputs: "
          f"{cpu / table.inputs * 1e6:.0f} µs of this thread's CPU an input")
    for kind, (spent, count) in table.spent.items():
        print(f"  a {kind}: {spent / count / 1000:.0f} µs ({count:,})")


if __name__ == "__main__":
    main()

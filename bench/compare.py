"""Two trees measured in one run: this one and another checkout (say, the commit before a
restructuring), alternately, so both see the same machine.

    git worktree add /tmp/before <commit>        # and `make .venv/.core-built` there
    python -m bench.compare --before /tmp/before [--rounds 3]

Each round runs every measurement once in each tree, each in a fresh process of that tree's
own ``.venv`` (compiled core and all), the order of the trees alternating from round to
round. Measured: hand evaluations per second (five-card ace-to-five, three-card low), engine
hands per second (seven seats, both games), the card frame -> subscriber latency through the
daemon process (synced journal), and the daemon's CPU per hand and per input (one-spot Cali
LowBall hands, journal not synced, so the CPU is the software's own). Both trees' daemons are
sent the same requests, bare JSON as the older bench sent them (:mod:`bench.plain_requests`:
this tree's client adds a ``request_id`` to every command, which an older daemon would refuse).
``--pin`` puts each daemon on one CPU and its bench on another (:mod:`bench.pinning`).
The best of the rounds is printed for rates, the median of the rounds for latencies and CPU,
and beside each the range of the rounds' own changes (each round's two trees side by side):
on this machine a single figure moves by 5 to 15 % from run to run, so a change inside that
range is no change. A daemon left running from an earlier run or experiment takes the CPU the
measured ones need: the comparison refuses to start while one runs (``--allow-others`` to
measure anyway).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

#: Runs inside the measured tree: prints one JSON object.
PROBE = """
import json, random, runpy, sys
from bench import core, pipeline
for installed in sys.argv[3:]:  # bench/plain_requests.py (and pinning.py) of the comparing tree
    runpy.run_path(installed)["install"](pipeline)
rng = random.Random(2026)
rates = core.rankings(rng)
engines = core.engines(rng)
latency = pipeline.latency(cards=int(sys.argv[1]), durability="full", verbose=False)
hands = pipeline.hands_per_second(hands=int(sys.argv[2]), game="cali_lowball",
                                  durability="batched", verbose=False)
print(json.dumps({
    "ace-to-five evaluations/s": rates["ace-to-five (ours)"],
    "three-card evaluations/s": rates["three-card (ours)"],
    **{f"{name} hands/s": rate for name, rate in engines.items()},
    "card -> subscriber median ms": latency["card_ms"]["median"],
    "card -> subscriber p99 ms": latency["card_ms"]["p99"],
    "daemon CPU per hand ms": hands["daemon_cpu_ms_per_hand"],
    "daemon CPU per input us": hands["daemon_cpu_ms_per_hand"] * 1000 / hands["inputs_per_hand"],
}))
"""

HIGHER_IS_BETTER = ("/s",)


def measure(tree: Path, cards: int, hands: int, pin: bool) -> dict[str, float]:
    installs = ["plain_requests.py", "pinning.py"] if pin else ["plain_requests.py"]
    done = subprocess.run([str(tree / ".venv/bin/python"), "-c", PROBE, str(cards), str(hands),
                           *(str(HERE / "bench" / name) for name in installs)],
                          cwd=tree, capture_output=True, text=True, timeout=1800, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{tree}: the probe failed:\n{done.stderr[-2000:]}")
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def running_daemons() -> list[int]:
    """The process ids of table daemons running on this machine (of any tree: ``python -m
    controller.cli run`` or ``python -m controller.cli.main run``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # ended meanwhile, or not ours to read
            continue
        if b"run" in words and any(word in (b"controller.cli", b"controller.cli.main")
                                   for word in words):
            found.append(int(entry.name))
    return sorted(found)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="the other tree (checkout)")
    parser.add_argument("--rounds", type=int, default=3, choices=range(1, 11), metavar="1-10")
    parser.add_argument("--cards", type=int, default=300, choices=range(50, 5001),
                        metavar="50-5000")
    parser.add_argument("--hands", type=int, default=300, choices=range(50, 5001),
                        metavar="50-5000")
    parser.add_argument("--pin", action="store_true",
                        help="each daemon on the last CPU, its bench on the first "
                             "(bench/pinning.py): runs move by some 5 %% instead of 15 %%")
    parser.add_argument("--allow-others", action="store_true",
                        help="measure although other table daemons run on this machine")
    args = parser.parse_args(argv)
    if (others := running_daemons()) and not args.allow_others:
        raise SystemExit(f"table daemons already run on this machine (pid "
                         f"{', '.join(map(str, others))}): they take the CPU the measured ones "
                         f"need. Stop them, or measure anyway with --allow-others")
    trees = {"before": args.before.resolve(), "after": HERE}
    runs: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    for round_number in range(args.rounds):
        order = ("before", "after") if round_number % 2 == 0 else ("after", "before")
        for name in order:
            runs[name].append(measure(trees[name], args.cards, args.hands, args.pin))
            print(f"round {round_number + 1}, {name}: done", flush=True)
    print(f"\n{'':<38} {'before':>14} {'after':>14} {'change':>8}   rounds' changes")
    for key in runs["before"][0]:
        rate = key.endswith(HIGHER_IS_BETTER)
        pick = max if rate else statistics.median
        before = pick(run[key] for run in runs["before"])
        after = pick(run[key] for run in runs["after"])
        change = (after - before) / before * 100
        rounds = [(a[key] - b[key]) / b[key] * 100
                  for b, a in zip(runs["before"], runs["after"])]
        print(f"{key:<38} {before:>14,.2f} {after:>14,.2f} {change:>+7.1f}%   "
              f"{min(rounds):+.1f} to {max(rounds):+.1f}%")


if __name__ == "__main__":
    main()

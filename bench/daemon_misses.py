"""The daemon's per-input path counted, not timed: instructions and cache misses an input.

``python -m bench.daemon_misses [--before TREE]`` runs ``bench/daemon_path.py`` (commands and
cards handed to a :class:`TableDaemon` in one thread) under callgrind, for 50 and for 150
one-spot Cali LowBall hands, and prints the difference an input on the daemon's thread:
instructions, and misses of a simulated 1 MiB 8-way last-level cache (this machine's L2 per
core). Start-up, imports and the warm-up hands cancel out in the difference; the bench's own
model of the hand (the same engine in both trees, a few per cent) does not.

Why: on a VM's shared cores a timing moves 5 to 15 % from run to run, more than the change
being judged. A count does not. Instructions alone are not the cost either: an input that
executes fewer instructions but reaches memory more often (a larger working set of code or
data) costs more CPU time, and callgrind's own cache model only simulates the first level and
the last (the host's 32 MiB L3, where nothing misses). With ``--before``, the same for an
older tree (its venv, its ``PYTHONPATH``; ``daemon_path.py`` finds its modules in either
layout). Needs valgrind (``apt-get install valgrind``); about a minute a tree on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The simulated last level: size, associativity, line (bytes).
LAST_LEVEL = "--LL=1048576,8,64"
#: The two runs whose difference is reported.
SHORT, LONG = 50, 150
#: callgrind's events, in the order of its ``summary:`` line.
EVENTS = ("Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw")


def _summary(tree: Path, hands: int, out: Path) -> tuple[int, dict[str, int]]:
    """The inputs ``daemon_path`` timed, and callgrind's totals for the daemon's (the main)
    thread of the run."""
    python = tree / ".venv" / "bin" / "python"
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--separate-threads=yes", "--cache-sim=yes",
         LAST_LEVEL, f"--callgrind-out-file={out}/{hands}.%p", str(python),
         str(ROOT / "bench" / "daemon_path.py"), "--hands", str(hands)],
        cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, check=True,
        capture_output=True, text=True)
    said = re.search(r"hands, ([\d,]+) inputs", done.stdout)
    if said is None:
        raise RuntimeError(f"daemon_path said no count of inputs: {done.stdout[-400:]}")
    main_thread = next(out.glob(f"{hands}.*-01"))
    for line in main_thread.read_text().splitlines():
        if line.startswith("summary:"):
            return int(said[1].replace(",", "")), dict(
                zip(EVENTS, map(int, line.split()[1:]), strict=True))
    raise RuntimeError(f"{main_thread}: no summary line")


def measure(tree: Path) -> dict[str, float]:
    """Each event an input of the daemon's thread: the long run less the short one."""
    with tempfile.TemporaryDirectory(prefix="lowball-misses-") as directory:
        with ThreadPoolExecutor(2) as pool:
            (short_inputs, short), (long_inputs, long) = pool.map(
                lambda hands: _summary(tree, hands, Path(directory)), (SHORT, LONG))
    inputs = long_inputs - short_inputs
    return {event: (long[event] - short[event]) / inputs for event in EVENTS}


def _row(name: str, counts: dict[str, float]) -> str:
    code, data = counts["ILmr"], counts["DLmr"] + counts["DLmw"]
    first_level = counts["I1mr"] + counts["D1mr"] + counts["D1mw"]
    return (f"{name:8s} {counts['Ir'] / 1000:9.0f}k instructions  {code + data:6.0f} misses "
            f"(code {code:4.0f}, data {data:4.0f})  first-level misses {first_level:6.0f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--before", type=Path, help="an older tree with its own .venv")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed: apt-get install valgrind")
    print(f"an input of the daemon's thread ({LONG - SHORT} hands' worth; "
          f"last level {LAST_LEVEL[5:]}):")
    if args.before is not None:
        print(_row("before", measure(args.before.resolve())))
    print(_row("this", measure(ROOT)))


if __name__ == "__main__":
    main()

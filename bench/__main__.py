"""``make bench``: run every benchmark and print the figures docs/performance.md quotes."""

import random

from bench import core, daemon_cpu, daemon_path, floor, par_check, pipeline, pool_link
from bench.machine import describe


def main() -> None:
    print(f"machine: {describe()}\n")
    rng = random.Random(2026)
    print("hand evaluations per second (same random hands, one run)")
    rates = core.rankings(rng)
    for name, rate in rates.items():
        print(f"  {name:<40} {rate:>12,.0f} /s")
    theirs = rates.get("ace-to-five (pokerkit RegularLowHand)")
    if theirs:
        print(f"  ace-to-five speed-up over pokerkit: {rates['ace-to-five (ours)'] / theirs:.1f}x")
    print("\nengine-only complete hands per second")
    for name, rate in core.engines(rng).items():
        print(f"  {name:<40} {rate:>12,.0f} /s")
    print("\npar sheets against simulations through the engines (bench/par_check.py)")
    par_check.main()
    # The whole pipeline: latency, hands/s, memory, idle CPU, soak (bench/pipeline.py).
    pipeline.run_all()
    print("\nthe daemon's CPU per input, thread by thread (bench/daemon_cpu.py)")
    daemon_cpu.main([])
    print("\nthe per-input path alone, in one thread: no loop, sockets or heartbeat "
          "(bench/daemon_path.py)")
    daemon_path.main([])
    # Many tables into one PostgreSQL (bench/floor.py).
    floor.run_all()
    # The linked pool's reach: one table's contribution or hit on the other signs.
    print()
    pool_link.report()
    from bench import console
    print("\nthe dealer's screen: the console process and a real browser")
    console.run()


if __name__ == "__main__":
    main()

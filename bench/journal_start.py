"""What checking the journal's hash chain at every start costs.

``python -m bench.journal_start [--hands N] [--game G]`` journals N hands as the daemon
would (the soak's table and journal, commits not synced), keeps that journal, and times:

* ``journal verify`` (:meth:`controller.stream.journal.Journal.verify`): read, hash and parse every
  record;
* reading and parsing every record without the check: what rebuilding the table needs anyway;
* the daemon's start (:meth:`controller.daemon.loop.TableDaemon.start`, no devices): the chain
  checked as it reads the journal, then the table rebuilt by replaying every input; the
  check's own cost is the hashing (the start reads and parses every record to rebuild the
  table in any case).

A live table journals some 9,000 records an hour at 200 hands an hour; the soak's segments
hold 10,000 hands (about 1.1 million records for Cali LowBall): one is a table's busy month.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import structlog

from bench import pipeline


def build(hands: int, game: str, folder: Path) -> Path:
    """The journal of ``hands`` soak hands, copied to ``folder`` before the soak deletes it."""
    kept = folder / "state"

    class KeptJournal(pipeline.SegmentedJournal):
        def _finish(self, last: bool) -> None:
            self.journal.close()
            if last:
                shutil.copytree(self.folder, kept)
            super()._finish(last)

    pipeline.soak(hands=hands, game=game, segment_hands=hands + 1, verbose=False,
                  journal=KeptJournal)
    return kept


def measure(hands: int, game: str) -> dict[str, float]:
    import zmq

    from controller.stream import wire
    from controller.daemon.loop import TableDaemon
    from controller.stream.journal import Journal, journal_path
    from controller.settings.table_config import Stream, default_config_path, load_config

    with tempfile.TemporaryDirectory(prefix="lowball-journal-start-") as tmp:
        state = build(hands, game, Path(tmp))
        path = journal_path(state)
        size = sum(file.stat().st_size for file in state.iterdir())
        started = time.perf_counter()
        with Journal.open_readonly(path) as journal:
            report = journal.verify()
        verify_s = time.perf_counter() - started
        assert report.ok, report
        started = time.perf_counter()
        with Journal.open_readonly(path) as journal:  # what a rebuild reads, unchecked
            events = [wire.to_event(wire.decode_event(record.message))
                      for record in journal.records()]
        del events
        read_s = time.perf_counter() - started

        loaded = load_config(default_config_path(game))
        loaded = loaded.model_copy(update={"config": loaded.config.model_copy(update={
            "limits": loaded.config.limits.model_copy(update={"max_ante": 10**7,
                                                              "max_lowdown_bonus": 10**7}),
            "stream": Stream(events=f"ipc://{tmp}/e", replay=f"ipc://{tmp}/r",
                             commands=f"ipc://{tmp}/c")})})
        context = zmq.Context()
        with structlog.testing.capture_logs() as logs:
            started = time.perf_counter()
            daemon = TableDaemon(loaded, state_dir=state, context=context)
            daemon.start()
            start_s = time.perf_counter() - started
            daemon.close()
        context.term()
        checked = next(line for line in logs if line["event"] == "journal verified")
        return {"records": report.records_checked, "bytes": size, "verify_s": verify_s,
                "start_s": start_s, "check_and_read_s": checked["seconds"], "read_s": read_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=10_000)
    parser.add_argument("--game", default="cali_lowball",
                        choices=("cali_lowball", "three_card_lowball"))
    args = parser.parse_args()
    result = measure(args.hands, args.game)
    print(f"{args.game}, {args.hands:,} hands: {result['records']:,} records, "
          f"{result['bytes'] / 2**20:,.0f} MiB")
    print(f"  journal verify: {result['verify_s']:.1f} s "
          f"({result['records'] / result['verify_s']:,.0f} records/s)")
    print(f"  daemon start: {result['start_s']:.1f} s, of which reading and checking the "
          f"chain {result['check_and_read_s']:.1f} s, the rest rebuilding the table")
    print(f"  reading and parsing every record without the check (a rebuild's floor): "
          f"{result['read_s']:.1f} s; the check adds "
          f"{result['check_and_read_s'] - result['read_s']:.1f} s")


if __name__ == "__main__":
    main()

"""What checking the journal's hash chain at every start costs.

``python -m bench.journal_start [--hands N] [--game G]`` journals N hands as the daemon
would (the soak's table and journal, commits not synced), keeps that journal, and times:

* ``journal verify`` (:meth:`controller.stream.journal.Journal.verify`): read, hash and parse every
  record;
* reading and parsing every record without the check: what rebuilding the table needs anyway;
* the start's checks of the file itself: its write-ahead log read as bytes
  (:func:`controller.stream.write_ahead_log.frames_lost`) and SQLite's ``quick_check``
  (:meth:`controller.stream.journal.Journal.file_problems`);
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
from typing import Any

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


def _log_read_s(path: Path, frames_lost: Any) -> float:
    """Seconds :func:`frames_lost` takes on a copy of the journal whose log holds a full
    checkpoint's worth of frames (1,000 pages, SQLite's default: what a power cut can leave;
    a clean stop leaves none). The frames are a scratch table's: the read is the same."""
    import sqlite3

    copy = path.with_name("log-copy.sqlite3")
    shutil.copyfile(path, copy)
    connection = sqlite3.connect(copy, isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA wal_autocheckpoint=0")
        connection.execute("CREATE TABLE scratch (page BLOB)")
        for _ in range(1000):
            connection.execute("INSERT INTO scratch VALUES (zeroblob(3900))")
        started = time.perf_counter()
        assert frames_lost(copy) is None
        return time.perf_counter() - started
    finally:
        connection.close()


def measure(hands: int, game: str) -> dict[str, float]:
    import zmq

    from controller.stream import wire
    from controller.daemon.loop import TableDaemon
    from controller.stream.journal import Journal, journal_path
    from controller.stream.write_ahead_log import frames_lost
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
        # the start's two checks of the file itself, before the chain: the log read as
        # bytes, and SQLite's quick_check
        log_s = _log_read_s(path, frames_lost)
        started = time.perf_counter()
        with Journal.open_readonly(path) as journal:
            assert journal.file_problems() == []
        quick_check_s = time.perf_counter() - started

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
                "start_s": start_s, "check_and_read_s": checked["seconds"], "read_s": read_s,
                "log_s": log_s, "quick_check_s": quick_check_s}


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
    print(f"  the file's own checks at start: its write-ahead log read as bytes "
          f"{result['log_s'] * 1000:.0f} ms (a log of 1,000 frames, as a power cut may leave it), "
          f"SQLite's quick_check "
          f"{result['quick_check_s'] * 1000:.0f} ms")


if __name__ == "__main__":
    main()

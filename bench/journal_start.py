"""A table's start at any age: the real daemon to READY=1, and its memory, on long journals.

``python -m bench.journal_start [--hands 1000 10000 100000] [--game G] [--runs N]`` writes a
journal of each size as the daemon writes it (each input and its effects in one transaction,
the hand id as the daemon gives it, a checkpoint at every hand's end, through the daemon's own
:mod:`controller.daemon.checkpoints`), random hands as the soak deals them (1 to 7 seats). To
write gigabytes in minutes, a hand's inputs share a transaction and nothing is synced while it
is written: the rows are the daemon's, byte for byte. The journals are kept
under ``$TMPDIR/lowball-journal-start/`` and reused by the next run (a 100,000-hand journal is
gigabytes and takes a long while to write).

Then, for a fresh (empty) journal and for each size, side by side (each run starts each
journal once), it runs the real ``lowball-table run`` (the command systemd runs, no devices
configured) ``--runs`` times, and reports the seconds
from the process's spawn to its ``READY=1`` (read from a ``NOTIFY_SOCKET`` this process binds,
as systemd's) and its resident memory then (``VmRSS``, and its peak ``VmHWM``), median and
range. The daemon is stopped with SIGTERM after each run; it journals nothing on a start
between hands, so the journal stays as written.

A live table journals some 45 (Three Card LowBall) to 115 (Cali LowBall) records a hand:
100,000 hands are one to two years of a busy table.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: What the journals are cached under (per game and size); a journal being written is in a
#: ``.partial`` folder until it is complete.
CACHE = Path(tempfile.gettempdir()) / "lowball-journal-start"
#: Written into a cached journal's folder once it is complete (with what wrote it).
COMPLETE = "complete"
#: The builder's version: a journal cached by another is written again.
BUILD_VERSION = "1"
READY_TIMEOUT_S = 600.0
CREDENTIAL = "bench-journal-start"


def write_config(path: Path, game: str, stream_dir: Path) -> Path:
    """The table config the journals are written under and the daemon runs: the shipped
    game, no devices, the stream on ipc:// endpoints in ``stream_dir``."""
    from controller.settings.table_config import default_config_path, load_config, shipped_config_dir

    shipped = load_config(default_config_path(game)).config
    text = (f'[table]\nid = "{shipped.table.id}"\ngame = "{game}"\n'
            f'paytable = "{shipped.table.paytable}"\n'
            f'paytables_file = "{shipped_config_dir() / "paytables.toml"}"\nspots = 7\n\n'
            f"[limits]\nmin_ante = 1\nmax_ante = {10**7}\nmax_lowdown_bonus = {10**7}\n\n"
            f'[stream]\nevents = "ipc://{stream_dir}/events"\n'
            f'replay = "ipc://{stream_dir}/replay"\ncommands = "ipc://{stream_dir}/commands"\n\n'
            f'[security]\nsupervisor_credential_sha256 = '
            f'"{hashlib.sha256(CREDENTIAL.encode()).hexdigest()}"\n')
    path.write_text(text, encoding="utf-8")
    load_config(path)  # fail here, not in the daemon, if it is wrong
    return path


def build(hands: int, game: str, state: Path, config: Path, seats: int = 7,
          seed: int = 2026) -> int:
    """Journal ``hands`` random hands in ``state`` as the daemon would under ``config``
    (:meth:`controller.daemon.loop.TableDaemon.apply`: one transaction an input, the hand id
    its rule gives, a checkpoint whenever :func:`controller.daemon.checkpoints.due` says),
    each hand with 1 to ``seats`` seats; the records written."""
    from controller.core.cards import DECK
    from controller.daemon import checkpoints
    from controller.daemon.alarm_book import NOTED, AlarmBook
    from controller.daemon.loop import HAND_EVENTS
    from controller.settings.table_config import build_table, load_config
    from controller.stream.journal import Journal, journal_path
    from controller.stream.table_commands import DEALER_ROLE, SUPERVISOR_ROLE, parse_command

    class Batched(Journal):
        """The daemon's journal writer, its records and bytes, with many inputs a
        transaction (the daemon commits each input alone: the file holds the same rows)."""

        def _insert(self, records: list[Any]) -> None:
            connection = self._connection
            if not connection.in_transaction:
                connection.execute("BEGIN IMMEDIATE")
            connection.executemany("INSERT INTO journal (seq, ts, type, hand_id, message, "
                                   "prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?)", records)

        def write_checkpoint(self, state: bytes) -> Any:
            connection = self._connection
            if connection.in_transaction:
                connection.execute("COMMIT")
            return super().write_checkpoint(state)

        def close(self) -> None:
            if self._connection.in_transaction:
                self._connection.execute("COMMIT")
            super().close()

    loaded = load_config(config)
    table, book = build_table(loaded), AlarmBook()
    journal = Batched(journal_path(state), durability="batched")
    journal._connection.execute("PRAGMA synchronous=OFF")
    rng = random.Random(seed)
    second = "xtra_bonus" if game == "cali_lowball" else "bonus"
    progressive = loaded.config.progressive.wager
    checkpointed: tuple[str | None, int] = (None, 0)

    def apply(events: list[Any]) -> None:
        nonlocal checkpointed
        in_hand = table.hand is not None or not HAND_EVENTS.isdisjoint(map(type, events))
        records = journal.append_all(events, table_id=table.table_id,
                                     hand_id=table.hand_id if in_hand else None)
        for record, event in zip(records, events):
            if record.type in NOTED:
                book.note(record.seq, record.type, event._asdict())
        if checkpoints.due(table, checkpointed[0], journal.last_seq - checkpointed[1]):
            journal.write_checkpoint(checkpoints.capture(table, book))
            checkpointed = (table.hand_id, journal.last_seq)

    def command(data: dict[str, Any], role: str = DEALER_ROLE) -> None:
        apply(table.command(parse_command(data), "bench", role))

    started = time.monotonic()
    command({"command": "open"})
    shoe_seq = shoe_count = 0
    for number in range(1, hands + 1):
        for spot in rng.sample(range(1, 8), rng.randint(1, seats)):
            ante = rng.choice((500, 1000, 2500))
            command({"command": "place", "spot": spot, "wager": "ante", "amount": ante,
                     "player": f"p{spot}"})
            command({"command": "place", "spot": spot, "wager": second, "amount": ante})
            if game == "cali_lowball" and rng.random() < 0.5:
                command({"command": "place", "spot": spot, "wager": "lowdown_bonus",
                         "amount": 500})
            if game == "three_card_lowball" and rng.random() < 0.7:
                command({"command": "place", "spot": spot, "wager": "progressive",
                         "amount": progressive})
        command({"command": "lock"})
        if table.hand is None:
            raise RuntimeError(f"hand {number}: the lock was refused")
        deck = iter(rng.sample(DECK, 52))
        while (hand := table.hand) is not None:
            if hand.cards_expected():
                shoe_count += 1
                apply(table.shoe_card(next(deck), shoe_seq & 0xFF, "", shoe_count))
                shoe_seq += 1
                continue
            step = hand.next_step()
            seat = step.seats[0]
            command({"command": "decide", "spot": seat,
                     "decision": _decision(game, hand, step, seat)})
        if table.jackpot is not None:
            command({"command": "verify_jackpot"}, SUPERVISOR_ROLE)
        if number % 10_000 == 0:
            print(f"    {game}: {number:,} hands written in "
                  f"{time.monotonic() - started:,.0f} s", flush=True)
    records = journal.last_seq
    journal.close()
    return records


def _decision(game: str, hand: Any, step: Any, seat: int) -> str:
    if game == "three_card_lowball":
        high = [card for card in hand.dealt[seat] if card.rank > 7][:2]
        return "discard:" + ",".join(str(card) for card in high) if high else "stand"
    for preferred in (("raise", "bet") if seat % 2 else ("check", "bet")):
        if preferred in step.options:
            return str(preferred)
    return str(step.options[0])


def cached(hands: int, game: str, seats: int = 7) -> tuple[Path, Path, int]:
    """(state dir, config, records) of the cached journal of ``hands`` hands of 1 to ``seats``
    seats, written first if it is not there."""
    folder = CACHE / f"{game}-{seats}-seats-{hands}"
    marker = folder / COMPLETE
    if marker.is_file() and marker.read_text().split()[0] == BUILD_VERSION:
        return folder / "state", folder / "table.toml", int(marker.read_text().split()[1])
    shutil.rmtree(folder, ignore_errors=True)
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    (partial / "state").mkdir(parents=True)
    config = write_config(partial / "table.toml", game, folder)
    started = time.monotonic()
    records = build(hands, game, partial / "state", config, seats)
    print(f"  wrote {hands:,} hands ({records:,} records) in {time.monotonic() - started:,.0f} s",
          flush=True)
    (partial / COMPLETE).write_text(f"{BUILD_VERSION} {records}\n")
    partial.rename(folder)
    return folder / "state", folder / "table.toml", records


def _status_kib(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {key} for process {pid}")


def start_once(config: Path, state: Path) -> dict[str, float]:
    """The real daemon started on ``state``: seconds to READY=1, the CPU seconds it used to
    get there, and its memory then."""
    with tempfile.TemporaryDirectory(prefix="lowball-notify-") as tmp:
        address = str(Path(tmp) / "notify")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        listener.bind(address)
        listener.settimeout(1.0)
        log = open(Path(tmp) / "daemon.log", "wb")
        started = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-m", "controller.cli.main", "run", "--config", str(config),
             "--state-dir", str(state), "--log-format", "json"],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
            env={**os.environ, "NOTIFY_SOCKET": address})
        try:
            while True:
                try:
                    datagram = listener.recv(4096)
                except TimeoutError:
                    if process.poll() is not None or \
                            time.perf_counter() - started > READY_TIMEOUT_S:
                        log.flush()
                        tail = (Path(tmp) / "daemon.log").read_bytes()[-2000:]
                        raise RuntimeError("the daemon did not become ready; its log ends:\n"
                                           + tail.decode("utf-8", "replace")) from None
                    continue
                if b"READY=1" in datagram.split(b"\n"):
                    ready_s = time.perf_counter() - started
                    break
            rss, peak = _status_kib(process.pid, "VmRSS"), _status_kib(process.pid, "VmHWM")
            cpu = _cpu_s(process.pid)
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            listener.close()
            log.close()
    return {"ready_s": ready_s, "cpu_s": cpu, "rss_mib": rss / 1024, "peak_mib": peak / 1024}


def _cpu_s(pid: int) -> float:
    """The CPU seconds (user and system) process ``pid`` has used: on a shared machine, what
    the start cost, whatever else ran."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _shown(values: list[float], unit: str, digits: int) -> str:
    return (f"{statistics.median(values):.{digits}f} {unit} "
            f"({min(values):.{digits}f}-{max(values):.{digits}f})")


def main() -> None:
    from controller.stream.journal import Journal, journal_path

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--game", default="three_card_lowball",
                        choices=("cali_lowball", "three_card_lowball"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seats", type=int, default=7, choices=range(1, 8),
                        help="each hand has 1 to this many seats (default 7)")
    parser.add_argument("--also", type=Path, nargs="*", default=[],
                        help="folders that hold a table.toml and its state/ (a journal written "
                             "elsewhere) to start beside the others")
    args = parser.parse_args()
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="lowball-fresh-") as tmp:
        starts: list[tuple[str, Path, Path]] = [
            ("fresh journal", write_config(Path(tmp) / "table.toml", args.game, Path(tmp)),
             Path(tmp) / "state")]
        for hands in args.hands:
            state, config, records = cached(hands, args.game, args.seats)
            size = sum(file.stat().st_size for file in state.iterdir() if file.is_file())
            starts.append((f"{hands:,} hands ({records:,} records, {size / 2**20:,.0f} MiB)",
                           config, state))
        for folder in args.also:
            state = folder / "state"
            with Journal.open_readonly(journal_path(state)) as journal:
                records = journal.last_seq
            size = sum(file.stat().st_size for file in state.iterdir() if file.is_file())
            starts.append((f"{folder.name} ({records:,} records, {size / 2**20:,.0f} MiB)",
                           folder / "table.toml", state))
        # side by side: each run starts every journal once, so a change of load on a shared
        # machine falls on every size alike
        results: dict[str, list[dict[str, float]]] = {name: [] for name, _, _ in starts}
        for run in range(args.runs):
            for name, config, state in starts:
                results[name].append(start_once(config, state))
                print(f"run {run + 1}, {name}: {results[name][-1]}", flush=True)
    rows = [(name, {key: [result[key] for result in done] for key in done[0]})
            for name, done in results.items()]
    fresh = statistics.median(rows[0][1]["rss_mib"])
    first = statistics.median(rows[min(1, len(rows) - 1)][1]["ready_s"])
    print(f"\n{args.game}, 1 to {args.seats} seats a hand, {args.runs} runs each, median "
          f"(range):")
    for name, result in rows:
        ready = statistics.median(result["ready_s"])
        print(f"  {name}: READY {_shown(result['ready_s'], 's', 2)} "
              f"({ready / first:.2f}x the first size's), CPU "
              f"{_shown(result['cpu_s'], 's', 2)}, RSS "
              f"{_shown(result['rss_mib'], 'MiB', 1)} "
              f"({statistics.median(result['rss_mib']) - fresh:+.1f} MiB on a fresh journal's)")


if __name__ == "__main__":
    main()

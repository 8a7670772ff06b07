"""Red team 16: this session's speed changes (commits dc33458, 3527ea9, 4e0bab9, 4d3e021)
attacked as a hostile process with write access to the journal's file, a full disk and a kill
between statements would: ``Journal._insert`` (a lone INSERT, or BEGIN IMMEDIATE, single-row
INSERTs, COMMIT), the written links the running chain check trusts without hashing
(``Journal.written_after``, ``chain_watch._Follow.read``), and the command channel's
lone-surrogate check and frame-by-frame replies.

No hole was found: these tests pin the behaviour the attacks found sound, so that a later speed
change that breaks it fails here. Each states the promise it checks."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from controller.core.table_events import TableClosed
from controller.daemon.chain_watch import ChainWatch
from controller.stream.journal import (
    WRITTEN_KEPT,
    Journal,
    JournalBroken,
    JournalError,
    WrittenLinks,
    chain_hash,
    journal_path,
)


ROOT = Path(__file__).resolve().parents[2]


TABLE = "CALI-01"


#: The seq a journal continuing a quarantined one starts at, in these tests.
CONTINUED_AT = 12_345


def _append(journal: Journal, count: int, batch: int, tag: str) -> None:
    """``count`` records in inputs of at most ``batch`` records (a lone record is one INSERT,
    more a transaction)."""
    done = 0
    while done < count:
        size = min(batch, count - done)
        journal.append_all([TableClosed(f"{tag} {done + number}") for number in range(size)],
                           table_id=TABLE, hand_id=None)
        done += size


def _as_another_process(state_dir: Path, statement: str, values: tuple[object, ...],
                        trigger_name: str) -> None:
    """Another process changes the journal's file, one append-only trigger dropped and put back
    (the check finds every trigger in place)."""
    with closing(sqlite3.connect(journal_path(state_dir), isolation_level=None)) as other:
        (trigger,) = other.execute("SELECT sql FROM sqlite_master WHERE name = ?",
                                   (trigger_name,)).fetchone()
        other.execute(f"DROP TRIGGER {trigger_name}")
        other.execute(statement, values)
        other.execute(trigger)


def _refused_append(state_dir: Path, journal: Journal, count: int) -> None:
    """An input of ``count`` records refused by a row another process put at its first seq;
    the row then taken out again, so the daemon's next input fits."""
    with closing(sqlite3.connect(journal_path(state_dir), isolation_level=None)) as other:
        other.execute("INSERT INTO journal VALUES (?, 't', 'x', NULL, x'00', 'p', 'h')",
                      (journal.last_seq + 1,))
    with pytest.raises(JournalError, match="cannot append"):
        _append(journal, count, count, "refused")
    _as_another_process(state_dir, "DELETE FROM journal WHERE seq = ?", (journal.last_seq + 1,),
                        "journal_no_delete")


def _first_break(journal: Journal, seq: int, hash_: str) -> tuple[int, str] | None:
    """The first break the running check finds in what the daemon wrote after (seq, hash_)."""
    watch = ChainWatch(journal, seq, hash_)
    for _ in range(2 + journal.last_seq // 1000):
        broken: JournalBroken | None = watch.check(sweep=0)
        if broken is not None:
            return broken.seq, broken.reason
    return None


_Setup = Callable[[Path], Journal]


def _fresh(state_dir: Path) -> Journal:
    journal = Journal(journal_path(state_dir), durability="batched")
    _append(journal, 40, 3, "fresh")
    return journal


def _reopened(state_dir: Path) -> Journal:
    with Journal(journal_path(state_dir), durability="batched") as before:
        _append(before, 30, 7, "before")
    journal = Journal(journal_path(state_dir), durability="batched")
    _append(journal, 12, 1, "after")
    return journal


def _continued(state_dir: Path) -> Journal:
    journal = Journal(journal_path(state_dir), durability="batched", first_seq=CONTINUED_AT)
    _append(journal, 25, 4, "continued")
    return journal


def _rolled_over(state_dir: Path) -> Journal:
    journal = Journal(journal_path(state_dir), durability="batched")
    _append(journal, WRITTEN_KEPT + 3, 500, "rolled")
    _append(journal, 4, 1, "rolled")
    return journal


def _after_refusals(state_dir: Path) -> Journal:
    journal = Journal(journal_path(state_dir), durability="batched")
    _append(journal, 9, 2, "early")
    _refused_append(state_dir, journal, 1)
    _append(journal, 5, 5, "middle")
    _refused_append(state_dir, journal, 6)
    _append(journal, 7, 1, "late")
    return journal


SETUPS: dict[str, _Setup] = {"fresh": _fresh, "reopened": _reopened, "continued": _continued,
                             "rolled_over": _rolled_over, "after_refusals": _after_refusals}


def _rewrite(state_dir: Path, journal: Journal, seq: int, how: str) -> None:
    """Another process rewrites record ``seq`` of the file."""
    with closing(sqlite3.connect(journal_path(state_dir))) as reader:
        prev_hash, hash_, message = reader.execute(
            "SELECT prev_hash, hash, message FROM journal WHERE seq = ?", (seq,)).fetchone()
        neighbour = reader.execute("SELECT prev_hash, hash, message FROM journal WHERE seq = ?",
                                   (seq + 1 if seq < journal.last_seq else seq - 1,)).fetchone()
    statement, values = {
        "message": ("UPDATE journal SET message = ? WHERE seq = ?", (message + b" ", seq)),
        "message_rehashed": ("UPDATE journal SET message = ?, hash = ? WHERE seq = ?",
                             (message + b" ", chain_hash(prev_hash, message + b" "), seq)),
        "prev_hash": ("UPDATE journal SET prev_hash = ? WHERE seq = ?", ("1" * 64, seq)),
        "hash": ("UPDATE journal SET hash = ? WHERE seq = ?", ("2" * 64, seq)),
        "neighbour": ("UPDATE journal SET prev_hash = ?, hash = ?, message = ? WHERE seq = ?",
                      (*neighbour, seq)),
        "as_text": ("UPDATE journal SET message = CAST(? AS TEXT) WHERE seq = ?",
                    (message, seq)),
    }[how]
    assert hash_  # the record is there to rewrite
    _as_another_process(state_dir, statement, values, "journal_no_update")


@pytest.mark.parametrize("setup", sorted(SETUPS))
@pytest.mark.parametrize("how", ["message", "message_rehashed", "prev_hash", "hash",
                                 "neighbour", "as_text"])
@pytest.mark.parametrize("where", ["first", "second", "middle", "last"])
def test_the_written_links_find_every_rewrite_where_hashing_every_record_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setup: str, how: str, where: str
        ) -> None:
    """A record rewritten on disk (the first and second the journal keeps as written: after
    5,000 appends, the deques' start; one in the middle; the last) is found by the running
    check at the seq and for the reason hashing every record again finds (a message stored as
    text, its bytes the written ones, too)."""
    with SETUPS[setup](tmp_path) as journal:
        written = journal.written_after(0)
        assert len(written.hashes) == len(written.messages) + 1
        first, last = written.first_seq, journal.last_seq
        target = {"first": first, "second": first + 1, "middle": (first + last) // 2,
                  "last": last}[where]
        _rewrite(tmp_path, journal, target, how)
        trusted = _first_break(journal, first - 1, written.hashes[0])
        with monkeypatch.context() as patched:
            patched.setattr(journal, "written_after", lambda seq: WrittenLinks(seq + 1, [], []))
            hashed = _first_break(journal, first - 1, written.hashes[0])
        assert trusted == hashed, (target, trusted, hashed)
        assert trusted is not None and trusted[0] in (target, target + 1), (target, trusted)


_KILLED_BEFORE_COMMIT = r'''
import os, signal, sys
from controller.core.table_events import TableClosed
from controller.stream.journal import Journal

class KilledBeforeCommit:
    """The journal's connection, the power cut between the last INSERT and the COMMIT."""
    def __init__(self, connection):
        self.connection = connection
    def execute(self, sql, *parameters):
        if sql == "COMMIT":
            os.kill(os.getpid(), signal.SIGKILL)
        return self.connection.execute(sql, *parameters)
    def __getattr__(self, name):
        return getattr(self.connection, name)

journal = Journal(sys.argv[1])
journal.append_all([TableClosed(f"kept {n}") for n in range(3)], table_id="CALI-01",
                   hand_id=None)
print(journal.last_seq, journal.last_hash, flush=True)
journal._connection = KilledBeforeCommit(journal._connection)
journal.append_all([TableClosed(f"lost {n}") for n in range(5)], table_id="CALI-01",
                   hand_id=None)
print("committed", flush=True)
'''


def test_a_kill_before_the_commit_of_an_input_leaves_none_of_its_records(tmp_path: Path
                                                                          ) -> None:
    """An input of several records killed after its INSERTs, before its COMMIT: on restart the
    journal ends at the input before, verifies, and takes the next input at that seq + 1."""
    path = journal_path(tmp_path)
    done = subprocess.run([sys.executable, "-c", _KILLED_BEFORE_COMMIT, str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == -9, done.stderr[-600:]
    seq, hash_ = done.stdout.split()[:2]
    assert "committed" not in done.stdout
    with Journal(path) as journal:
        assert (journal.last_seq, journal.last_hash) == (int(seq), hash_)
        assert journal.verify().ok
        records = journal.append_all([TableClosed("next")] * 2, table_id=TABLE, hand_id=None)
        assert [record.seq for record in records] == [int(seq) + 1, int(seq) + 2]
        assert journal.verify().ok


_FULL_DISK = r'''
import json, os, resource, signal, sys
from controller.core.table_events import TableClosed
from controller.stream.journal import Journal, JournalError

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG)
path, count = sys.argv[1], int(sys.argv[2])
journal = Journal(path)
journal.append_all([TableClosed("before")] * 3, table_id="CALI-01", hand_id=None)
_, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(path + "-wal") + 20_000, hard))
failed = 0
for attempt in range(200):
    try:
        journal.append_all([TableClosed("filling " + "x" * 300)] * count, table_id="CALI-01",
                           hand_id=None)
    except JournalError:
        failed += 1
        break
kept = journal.written_after(0)
report = {"failed": failed, "last_seq": journal.last_seq, "last_hash": journal.last_hash,
          "stored": journal.stored_end(), "in_transaction": journal._connection.in_transaction,
          "written_last": kept.hashes[-1], "written_first": kept.first_seq,
          "written_count": len(kept.messages)}
resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
records = journal.append_all([TableClosed("after")] * count, table_id="CALI-01", hand_id=None)
report["next_seq"] = records[0].seq
report["verifies"] = journal.verify().ok
print(json.dumps(report))
'''


@pytest.mark.parametrize("count", [1, 3, 40])
def test_a_full_disk_refuses_a_whole_input_and_the_journal_goes_on_from_its_file(
        tmp_path: Path, count: int) -> None:
    """The disk fills in the middle of an input (a file size limit, as ``ulimit -f``): none of
    its records is in the file, no transaction is left open, the journal's head and its
    written links are the file's last record, and the next input takes the next seq."""
    path = journal_path(tmp_path)
    done = subprocess.run([sys.executable, "-c", _FULL_DISK, str(path), str(count)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-800:]
    report = json.loads(done.stdout)
    assert report["failed"] == 1, report
    assert report["stored"] == report["last_seq"] and not report["in_transaction"], report
    assert (report["last_seq"] - 3) % count == 0, report  # whole inputs only
    assert report["written_last"] == report["last_hash"], report
    assert report["written_first"] + report["written_count"] - 1 == report["last_seq"], report
    assert report["next_seq"] == report["last_seq"] + 1 and report["verifies"], report

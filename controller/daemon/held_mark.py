"""The mark a daemon leaves beside a journal it found broken while it ran.

The running check (:mod:`controller.daemon.chain_watch`) finds breaks the start-up check
cannot: records past the daemon's last write (another process's, chained as well as any: the
chain has no key) and a file renamed over the journal's name (a sound chain of someone else's
making). Read again at a restart, such a journal verifies, so the daemon writes down what it
found, synced, before it says so: ``<state dir>/journal.sqlite3.held``. A daemon that starts
with the mark there runs held, as on a broken chain, until a supervisor quarantines the journal
(:mod:`controller.daemon.journal_quarantine` reads the records from the mark's seq on as found,
not verified, and archives the mark with the journal).

The mark is a lock for the honest path, not a seal: whoever can rewrite the journal file can
remove the mark too. What a restart cannot know without a keyed chain is written in
docs/event-stream.md, section 5 ("What the chain proves").
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import stat
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from controller.daemon.chain_watch import JournalReplaced
from controller.errors import LowballError
from controller.stream.journal import JOURNAL_FILE, Journal, JournalBroken, fsync_path

MARK_FILE = f"{JOURNAL_FILE}.held"
#: A mark is a few hundred bytes; one larger is not read (the table is held all the same).
MAX_MARK_BYTES = 16_384
MAX_SEQ = 2**63 - 1
MAX_REASON = 2000
#: Where the evidence of a replaced file goes: the quarantine's folder, where the archived
#: journals are (:data:`controller.daemon.journal_quarantine.QUARANTINE_DIR`).
EVIDENCE_DIR = "quarantine"


def mark_path(state_dir: str | Path) -> Path:
    return Path(state_dir) / MARK_FILE


class EvidenceNotKept(LowballError):
    """The mark is written, but the evidence of a replaced file could not be kept (a full
    disk, a hard link refused): the table is held all the same."""


def hold(state_dir: str | Path, journal: Journal, broken: JournalBroken) -> Path:
    """Write the mark for ``broken``, found while the daemon ran on ``journal``. The mark comes
    first (a restart must hold the table whatever happens next); then, when the file at the
    journal's name was replaced (:class:`JournalReplaced`), both sides are kept in
    ``quarantine/``: a synced copy of the journal as the daemon wrote it, and a hard link to
    each file found at the names (whatever happens to the names next), and the mark is written
    again naming the copy. :class:`EvidenceNotKept` if that fails: the mark stands. OSError
    if the mark itself could not be written (nothing else was tried)."""
    path = write(state_dir, broken, daemon_seq=journal.last_seq, daemon_hash=journal.last_hash)
    if not isinstance(broken, JournalReplaced):
        return path
    try:
        folder = Path(state_dir) / EVIDENCE_DIR
        folder.mkdir(exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        target = folder / f"journal-{stamp}-as-the-daemon-wrote-it.sqlite3"
        journal.backup(target)
        copy = str(target.relative_to(state_dir))
        for name in journal.replaced_files():
            found = journal.path.parent / name
            if found.exists():
                os.link(found, folder / f"journal-{stamp}-found-at-the-name.sqlite3"
                                        f"{name.removeprefix(journal.path.name)}")
    except (OSError, sqlite3.Error) as error:
        raise EvidenceNotKept(f"the evidence of the replaced journal file was not kept: "
                              f"{error}") from None
    try:
        return write(state_dir, broken, daemon_seq=journal.last_seq,
                     daemon_hash=journal.last_hash, daemon_copy=copy)
    except OSError as error:
        raise EvidenceNotKept(f"the evidence is kept ({copy}), but the mark does not name it: "
                              f"{error}") from None


def write(state_dir: str | Path, broken: JournalBroken, *, daemon_seq: int, daemon_hash: str,
          daemon_copy: str | None = None) -> Path:
    """Write the mark for ``broken`` (where the daemon's own journal ended, and where it kept
    its copy of a journal whose file was replaced), synced, its directory too.

    The bytes go to a file made new for them (exclusive create, a name no one can guess, a
    regular file: whatever sits at any name beside the mark, a folder, a FIFO, a link, is
    never opened), then renamed over the mark's name, which replaces whatever is there but a
    folder. OSError if the mark could not be written: the caller keeps the table held and
    tries again."""
    path = mark_path(state_dir)
    document = {"first_bad_seq": broken.seq, "reason": broken.reason[:MAX_REASON],
                "found": datetime.now(UTC).isoformat(), "daemon_seq": daemon_seq,
                "daemon_hash": daemon_hash, "daemon_copy": daemon_copy}
    data = (json.dumps(document, sort_keys=True) + "\n").encode("utf-8")
    descriptor, partial = tempfile.mkstemp(prefix=f"{MARK_FILE}.", suffix=".partial",
                                           dir=path.parent)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(descriptor, view):]
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        os.rename(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise
    fsync_path(path.parent)
    return path


def read(state_dir: str | Path) -> JournalBroken | None:
    """The break a mark in ``state_dir`` records, or None if there is no mark. A mark that
    cannot be read holds the table from seq 1: the file is there, and only a quarantine
    clears it."""
    path = mark_path(state_dir)
    try:
        # Never blocks (a FIFO at the name would hang the start) nor follows a link.
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as error:
        return JournalBroken(1, f"{path} holds the table; it cannot be read: "
                                f"{error.strerror or error}")
    try:
        with os.fdopen(descriptor, "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                return JournalBroken(1, f"{path} holds the table; it is not a regular file")
            data = file.read(MAX_MARK_BYTES + 1)
    except OSError as error:
        return JournalBroken(1, f"{path} holds the table; it cannot be read: "
                                f"{error.strerror or error}")
    problem = _problem(data)
    if problem is not None:
        return JournalBroken(1, f"{path} holds the table; it does not parse: {problem}")
    document = json.loads(data)
    return JournalBroken(document["first_bad_seq"],
                         f"{document['reason']} (found while the daemon ran, "
                         f"{document['found'][:19]}Z; the daemon had written to seq "
                         f"{document['daemon_seq']}"
                         + (f", its copy of its journal is {document['daemon_copy']}"
                            if document.get("daemon_copy") else "") + ")")


def _problem(data: bytes) -> str | None:
    """What is wrong with a mark's bytes, or None."""
    if len(data) > MAX_MARK_BYTES:
        return f"more than {MAX_MARK_BYTES} bytes"
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        return f"not JSON: {error}"
    if not isinstance(document, dict):
        return "not a JSON object"
    for name in ("first_bad_seq", "daemon_seq"):
        value = document.get(name)
        if type(value) is not int or not 0 <= value <= MAX_SEQ:
            return f"{name} is not a seq (an integer from 0 to {MAX_SEQ})"
    if document["first_bad_seq"] < 1:
        return "first_bad_seq is 0"
    for name in ("reason", "found", "daemon_hash"):
        if not isinstance(document.get(name), str) or len(document[name]) > MAX_REASON:
            return f"{name} is not text of at most {MAX_REASON} characters"
    copy = document.get("daemon_copy")
    if copy is not None and (not isinstance(copy, str) or len(copy) > MAX_REASON):
        return f"daemon_copy is not a file name of at most {MAX_REASON} characters"
    return None

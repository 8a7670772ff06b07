"""``lowball-table journal verify|show|quarantine``: audit the journal; set a broken one aside.

``verify`` recomputes the hash chain and prints ``journal OK: N records, last seq N, last hash
H`` (exit 0) or ``journal BROKEN at seq N: reason`` (exit 1); keep the printed last seq and
hash elsewhere, since they are what shows a journal cut short at its end. ``show`` prints the
records (``--json``: the messages exactly as journaled and published, one per line). A missing
or unreadable journal exits 2. The journal is opened read-only, so both are safe to run
beside a live daemon.

``quarantine --state-dir DIR --reason TEXT`` is a supervisor's way out of a broken journal
(the daemon runs held on one): with the daemon stopped, it moves the journal aside, whole,
into ``DIR/quarantine/`` and starts a new one whose first record names the archived file, its
last record, the first bad seq and the jackpot meter carried over (the last one journaled,
read past the break; a supervisor confirms it before the table opens), and which voids a hand
left in play (:mod:`controller.daemon.journal_quarantine`); it goes on with the table's seqs
and hand numbers, so none is used twice. Then start the daemon again. It
refuses a sound journal, and a state directory a daemon holds (exit 2); run again after a power
cut, it finishes what it started.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from controller.cli import Subcommands
from controller.core.money import format_cents
from controller.stream.journal import (
    JOURNAL_FILE,
    Journal,
    JournalError,
    JournalRecord,
    journal_path,
)
from controller.stream.wire import canonical_json


def register(subparsers: Subcommands, name: str, help_text: str) -> None:
    parser = subparsers.add_parser(name, help=help_text, description=__doc__.splitlines()[0])
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    verify = actions.add_parser("verify", help="check the hash chain; exit 1 if broken")
    show = actions.add_parser("show", help="print the journaled events")
    show.add_argument("--after", type=_count, default=0, metavar="N",
                      help="only records with seq > N")
    show.add_argument("--limit", type=_positive, metavar="N", help="at most N records")
    show.add_argument("--json", action="store_true",
                      help="print each message as journaled (JSON lines)")
    for sub in (verify, show):
        where = sub.add_mutually_exclusive_group(required=True)
        where.add_argument("--journal", metavar="PATH", help="the journal database file")
        where.add_argument("--state-dir", metavar="DIR",
                           help="the daemon's state directory (holds journal.sqlite3)")
        sub.set_defaults(func=run)
    aside = actions.add_parser("quarantine", help="move a broken journal aside and start a new "
                                                  "one (daemon stopped)")
    aside.add_argument("--state-dir", metavar="DIR", required=True,
                       help="the daemon's state directory (holds journal.sqlite3)")
    aside.add_argument("--reason", required=True, help="why (journaled in the new journal)")
    aside.add_argument("--by", help="who (journaled; default: the login name)")
    aside.set_defaults(func=run_quarantine)


def _count(text: str) -> int:
    value = int(text) if text.isdigit() else -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, not {text!r}")
    return value


def _positive(text: str) -> int:
    value = _count(text)
    if value == 0:
        raise argparse.ArgumentTypeError("expected a whole number >= 1, not 0")
    return value


def run(args: argparse.Namespace) -> int:
    path = args.journal or journal_path(args.state_dir)
    try:
        with Journal.open_readonly(path) as journal:
            if args.action == "verify":
                return _verify(journal)
            for record in journal.records(after_seq=args.after, limit=args.limit):
                print(_printable(record.message.decode("utf-8", "backslashreplace"))
                      if args.json else render(record))
            return 0
    except JournalError as error:
        print(f"lowball-table journal: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `journal show | head`: the reader has seen enough
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - no flush error at exit
        return 0


def run_quarantine(args: argparse.Namespace) -> int:
    from controller.daemon.journal_quarantine import (
        BYTE_COPY_NOTE,
        QuarantineRefused,
        quarantine,
    )
    from controller.daemon.journal_salvage import described

    try:
        done = quarantine(args.state_dir, args.reason, args.by)
    except (QuarantineRefused, JournalError) as error:
        print(f"lowball-table journal quarantine: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"lowball-table journal quarantine: {error.strerror or error}"
              f"{f': {error.filename}' if error.filename else ''}", file=sys.stderr)
        return 2
    record, voided = done.record, done.voided
    meter = "none journaled (the table starts at its seed)" if record.meter is None else \
        f"{record.meter} (from {record.meter_from}; last verified: " \
        f"{record.verified_meter} from {record.verified_meter_from})"
    hand = "" if voided is None else \
        f"; hand {voided.hand_id} was in play: voided, {len(voided.returned)} wager(s) " \
        f"returned, {voided.contributions_reversed} taken off the meter"
    jackpot = "".join(
        f"; the jackpot of hand {carried.hand_id} ({format_cents(carried.amount)} to seat(s) "
        f"{', '.join(map(str, carried.seats))}) awaited verification: carried, still pending "
        f"(verify_jackpot, once, before the table opens)"
        + (f", claimed by pool {done.claimed.pool_id}" if done.claimed is not None else "")
        for carried in record.pending_jackpots)
    held = " A supervisor confirms the meter (adjust_meter; 0 confirms it as it stands) " \
        "before the table opens." if record.meter_held else ""
    last = f"; last record seq {record.archived_seq} hash {record.archived_hash}" \
        if record.archived_hash else ""
    print(f"journal quarantined: {done.archived} (broken at seq {record.first_bad_seq}: "
          f"{record.broken}{last}); a new journal starts at seq {record.archived_seq + 1} "
          f"with journal_continued (its hands numbered after hand {record.hand_number}), meter "
          f"{meter}{hand}{jackpot}. Start the daemon again.{held}")
    if done.unreadable or done.byte_copy:
        print(f"salvaged from damaged pages: {done.records_read} record(s) read (verified up "
              f"to seq {record.first_bad_seq - 1}, the rest found, not verified); not read: "
              f"{described(done.unreadable, record.archived_seq, not record.archived_hash)}; "
              f"hand numbers skip "
              f"{done.hands_skipped} (hands the records not read may have used); the "
              f"archived file keeps every page as found"
              + (f"; {BYTE_COPY_NOTE}" if done.byte_copy else ""))
    return 0


def _verify(journal: Journal) -> int:
    from controller.daemon import held_mark

    report = journal.verify()
    if report.ok:
        print(f"journal OK: {report.records_checked} records, last seq {report.last_seq}, "
              f"last hash {report.last_hash}")
        if journal.path.name == JOURNAL_FILE and \
                (held := held_mark.read(journal.path.parent)) is not None:
            # the chain is sound, but the daemon found it broken while it ran
            print(f"journal HELD at seq {held.seq}: {held.reason}")
            return 1
        return 0
    where = f"at seq {report.first_bad_seq}" if report.first_bad_seq is not None else "(schema)"
    print(f"journal BROKEN {where}: {report.reason}")
    return 1


def render(record: JournalRecord) -> str:
    """One line per record: seq, time, hand, type, the event's data, and the hash's start."""
    try:
        payload = canonical_json(json.loads(record.message)["data"]).decode()
    except (ValueError, KeyError, TypeError):  # a damaged record: its bytes as they are
        payload = repr(record.message)
    # str(): another process may have stored any column as a BLOB or a number
    return _printable(f"{str(record.seq):>8}  {record.ts}  {str(record.hand_id or '-'):<16} "
                      f"{str(record.type):<20} {payload}  #{str(record.hash)[:12]}")


def _printable(line: str) -> str:
    """``line`` with every character a terminal would act on, or a strict output could not
    write (a control, a byte that was not UTF-8), escaped: what another process stored is
    shown, never obeyed."""
    if line.isprintable():
        return line
    return "".join(char if char.isprintable() else
                   char.encode("unicode_escape", "backslashreplace").decode("ascii")
                   for char in line)

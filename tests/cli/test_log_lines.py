"""A log line keeps its traceback and text not UTF-8; a reader gone raises.

Red team 20: session 14's commit 831ff24 attacked as another process with write access to the
journal's file, its state directory and its log stream would: the running check's batch taken
as sound in one list comparison (``_Follow.read``), the written copy extended from lists
(``Journal.append_all``), the shorter log chain (``controller.cli.logs``).

One hole, mended in session 14 (both tests pass now): Python's ``==`` takes a REAL seq for the
INTEGER the daemon wrote, so a journal table rebuilt with ``seq REAL`` (the triggers put back)
was followed as the daemon's records; the break the schema check then found was at a float
seq, and the held table's heartbeat could not be encoded (``WireError`` out of the loop's
turn). Before 831ff24 the same rebuild raised ``TypeError`` out of the check (a float index
into the written copy) or, after a reopen (no copy kept), gave the same floats. A seq that is
no int now breaks the chain where it is read, in the running check and at start (where a TEXT
seq raised ``TypeError`` too).

Tried and held (a differential run of the old and new ``chain_watch`` over 1,344 tamperings:
messages as TEXT, REAL, with a NUL; hashes in upper case, as BLOB or INTEGER; a deleted
record; at seqs 1, 2, 499-502, 999-1001, the last, the edge of the kept copy after 5,300
appends; limits 499/500/501/5000; with and without a reopen: same break, seq and reason every
time); a continued journal's first seq; the follower's place after a read that fails between
batches; the written copy after a refused append; a log line with a traceback, a value not
UTF-8, a reader gone. Seen and left alone (as before 831ff24): with the daemon's stdout closed
at start (``sys.stdout`` None) a log call raises, with ``PrintLoggerFactory`` too."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import structlog

from controller.cli import logs


def test_a_log_line_keeps_its_traceback_and_text_not_utf8() -> None:
    stream, kept = io.StringIO(), structlog.get_config()
    logs.configure(json_lines=True, stream=stream)
    try:
        log = structlog.get_logger("lowball.test")
        try:
            raise ValueError("the shoe jammed")
        except ValueError:
            log.exception("device failed", value="\udcff" + "x" * 100_000)
    finally:
        structlog.configure(**kept)
    line = stream.getvalue()
    assert line.count("\n") == 1 and '"level": "error"' in line
    assert "Traceback" in line and "the shoe jammed" in line and "\\udcff" in line


def test_a_log_line_to_a_reader_gone_raises_as_before() -> None:
    # The daemon's stdout a pipe whose reader has exited: as with print(), BrokenPipeError.
    code = ("import structlog; from controller.cli import logs; logs.configure(json_lines=True)\n"
            "try:\n    structlog.get_logger('x').info('hello')\n"
            "except BrokenPipeError:\n    import os; os._exit(3)\n")
    reader, writer = os.pipe()
    os.close(reader)  # gone before the daemon writes its first line
    try:
        done = subprocess.run([sys.executable, "-c", code], stdout=writer, timeout=60,
                              env={"PYTHONPATH": str(Path(__file__).parents[2])}, check=False)
    finally:
        os.close(writer)
    assert done.returncode == 3

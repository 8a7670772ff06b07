"""The tools under test run as real subprocesses (the watch command, the example CMS consumer):
a test waits for a line a tool prints (read by a thread into a queue), with a deadline."""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest

from controller.stream.journal import Journal, JournalRecord, journal_path

from tests.support.waits import DEADLINE_S


ROOT = Path(__file__).resolve().parents[2]




class Tool:
    """A subprocess whose stdout and stderr lines are read by threads into queues."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv
        self.process = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, bufsize=1)
        self.out: list[str] = []
        self.err: list[str] = []
        self._queues: dict[str, queue.Queue[str | None]] = {"out": queue.Queue(), "err": queue.Queue()}
        self.ended = {"out": False, "err": False}
        for name, stream in (("out", self.process.stdout), ("err", self.process.stderr)):
            threading.Thread(target=self._pump, args=(stream, self._queues[name]),
                             daemon=True).start()

    @staticmethod
    def _pump(stream: IO[str], lines: queue.Queue[str | None]) -> None:
        for line in stream:
            lines.put(line.rstrip("\n"))
        lines.put(None)  # end of stream

    def next_line(self, stream: str = "out", timeout: float = DEADLINE_S) -> str | None:
        """The next line of ``stream``; None at its end or if none came within ``timeout``."""
        try:
            line = self._queues[stream].get(timeout=timeout)
        except queue.Empty:
            return None
        if line is None:
            self._queues[stream].put(None)  # stays at the end
            self.ended[stream] = True
            return None
        (self.out if stream == "out" else self.err).append(line)
        return line

    def wait_for(self, predicate: Callable[[str], bool], stream: str = "out",
                 timeout: float = DEADLINE_S, between: Callable[[], None] | None = None) -> str:
        """Read lines until one satisfies ``predicate``; ``between`` is called before each
        short wait (e.g. to send heartbeats until the tool says it is live)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if between is not None:
                between()
            line = self.next_line(stream, timeout=0.05 if between else
                                  max(0.0, deadline - time.monotonic()))
            if line is not None and predicate(line):
                return line
            if line is None and self.ended[stream]:
                break
        raise AssertionError(f"{self.argv[2:]}: no such line on std{stream} within "
                             f"{timeout} s; stdout so far {self.out[-20:]}, stderr "
                             f"{self.err[-20:]}")

    def finish(self, timeout: float = DEADLINE_S) -> int:
        """Wait for the exit status, then collect the rest of both streams."""
        status = self.process.wait(timeout)
        for stream in ("out", "err"):
            while self.next_line(stream, timeout=DEADLINE_S) is not None:
                pass
        return status

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(DEADLINE_S)


#: The ``tools`` fixture: start(*argv) -> a tool's process, stopped after the test.
ToolFactory = Callable[..., Tool]


@pytest.fixture
def tools() -> Iterator[ToolFactory]:
    started: list[Tool] = []

    def start(*argv: str) -> Tool:
        tool = Tool([sys.executable, *argv])
        started.append(tool)
        return tool

    yield start
    for tool in started:
        tool.stop()


def watch_argv(*args: str) -> list[str]:
    return ["-m", "controller.cli.main", "watch", *args]


def run_tool(*argv: str, timeout: float = DEADLINE_S) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def journal_records(state_dir: Path) -> list[JournalRecord]:
    """Everything journaled so far (read-only, beside the running daemon)."""
    with Journal.open_readonly(journal_path(state_dir)) as journal:
        return list(journal.records())

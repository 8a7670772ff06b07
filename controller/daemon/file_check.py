"""SQLite's check of a long journal's file, in the background, after the start.

SQLite's ``quick_check`` finds pages no b-tree reaches (a lost write that put an older page
back hides the records under the newer one from every query, while the chain of the rest
still checks), pages in two places and damaged pages. It reads the whole file: some 36 ms for
50 MiB, seconds for the gigabytes a table journals in a year. A start runs it itself on a
journal of up to :data:`START_CHECK_BYTES`; on a longer one it starts a :class:`FileCheck`,
which runs it on a read-only connection of its own in a thread, while the table runs. SQLite
leaves Python's lock while it reads, so the table's loop is not held. The daemon asks for the
result at every chain check (:meth:`FileCheck.found`); a problem holds the table as one found
at start would (docs/journal.md, "What a start checks").
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from controller.stream.journal import READ_ERRORS, file_problems

#: A journal file up to this size is checked by the start itself (some 0.2 s).
START_CHECK_BYTES = 128 * 2**20


class FileCheck:
    """``quick_check`` of the journal at ``path`` in a thread of its own."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._problems: list[str] | None = None
        self._connection: sqlite3.Connection | None = None
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="journal-file-check",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            connection = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True,
                                         check_same_thread=False)
        except READ_ERRORS as error:
            self._problems = [f"the file cannot be opened to be checked: "
                              f"{type(error).__name__}"]
            return
        self._connection = connection
        try:
            if not self._stopping:
                problems = file_problems(connection)
                # an interrupted check (the daemon stopping) found nothing
                self._problems = [] if self._stopping else problems
        finally:
            self._connection = None
            connection.close()

    def found(self) -> list[str] | None:
        """What the check found (empty when the file is sound); None while it runs."""
        return self._problems

    def stop(self) -> None:
        """End the check (the daemon stops): SQLite is interrupted where it reads."""
        self._stopping = True
        connection = self._connection
        if connection is not None:
            try:
                connection.interrupt()
            except sqlite3.ProgrammingError:  # closed meanwhile: the check has ended
                pass
        self._thread.join(5)

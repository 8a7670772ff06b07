"""The floor stores the verified archived records once their check is done.

Red team 11: what landed in the last two sessions (the quarantine's salvage of a damaged
journal, the archives' kept hashes, the supervisor-name lookalikes) attacked as a faulty disk,
a power cut and a guesser at the console.

Each test states the behaviour the project promises and is marked xfail (strict) while the
hole is open: a fix turns it into a pass, and strict makes the suite say so."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
import zmq

from controller.daemon.journal_quarantine import quarantine
from controller.stream.journal import journal_path

from tests.support.daemon import play_a_voided_hand, run_config
from tests.support.stream import serve


TABLE_ID = "TCL-01"


class CmsTable:
    """A daemon on ``root``'s state directory with a CMS stream, whose replay sockets one
    thread serves; its heartbeat (and the slice of an archive search that goes with it) comes
    only when the test asks (:meth:`tick`), so what a request finds is the test's choice."""

    def __init__(self, root: Path, config: Path, context: zmq.Context[Any]) -> None:
        import threading

        self.cms_events, self.cms_replay = f"ipc://{root}/cms-e", f"ipc://{root}/cms-r"
        self._root, self._config, self._context = root, config, context
        self._pipe = context.socket(zmq.PAIR)
        self._pipe.bind(f"inproc://cms-table-{id(self)}")
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self.first_seq: int = self._reply()

    def call(self, command: str, *args: Any) -> Any:
        self._pipe.send_pyobj((command, *args))
        return self._reply()

    def tick(self) -> None:
        self.call("tick")

    def _reply(self) -> Any:
        if not self._pipe.poll(20_000, zmq.POLLIN):
            raise AssertionError(f"the table's thread did not answer ({self.error!r})")
        return self._pipe.recv_pyobj()

    def _daemon(self) -> Any:
        import hashlib

        from controller.daemon.loop import TableDaemon
        from controller.settings.table_config import Security, Stream, load_config
        from tests.support.daemon import CREDENTIAL

        loaded = load_config(self._config)
        root = self._root
        stream = Stream(events=f"ipc://{root}/e", replay=f"ipc://{root}/r",
                        commands=f"ipc://{root}/c", cms_events=self.cms_events,
                        cms_replay=self.cms_replay)
        security = Security(supervisor_credential_sha256=hashlib.sha256(
            CREDENTIAL.encode()).hexdigest())
        devices = loaded.config.devices.model_copy(update={"shoe": None, "spots": None,
                                                            "meter": None})
        config = loaded.config.model_copy(update={"stream": stream, "security": security,
                                                  "devices": devices})
        return TableDaemon(loaded.model_copy(update={"config": config}),
                           state_dir=root / "state", context=self._context)

    def _run(self) -> None:
        pipe = self._context.socket(zmq.PAIR)
        pipe.connect(f"inproc://cms-table-{id(self)}")
        daemon = self._daemon()
        try:
            daemon.start()
            publisher = daemon.publisher
            pipe.send_pyobj(daemon.journal.first_seq)

            def handle(command: str, args: list[Any]) -> Any:
                if command == "tick":
                    daemon._next_heartbeat = 0.0
                    daemon._tick()
                    return None
                if command == "serves":  # (through,): the kinds served from 0
                    return [type(piece).__name__ for piece in
                            publisher._archives.serve(0, args[0])]
                raise AssertionError(f"no command {command!r} for the table's thread")

            serve(pipe, publisher, handle)
        except BaseException as error:  # reported by the next call()
            self.error = error
            raise
        finally:
            daemon.close()
            pipe.close(linger=0)

    def stop(self) -> None:
        if self._thread.is_alive() and self.error is None:
            self.call("stop")
        self._thread.join(20)
        self._pipe.close(linger=0)


def test_the_floor_stores_the_verified_archived_records_once_their_check_is_done(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import time

    import controller.stream.archive as archive
    from controller.floor.config import FloorTable
    from controller.floor.feed import TableFeed
    from controller.stream.client import StreamError
    from controller.stream.archive import COPY_SUFFIX
    from tests.support.archives import alter
    from tests.support.daemon import started

    # An archive checked again a record per heartbeat, and due again at once: what a longer
    # one (SLICE records a heartbeat) is for the first heartbeats of its check.
    monkeypatch.setattr(archive, "RETRY_SECONDS", 0.0)
    monkeypatch.setattr(archive, "SLICE", 1)
    monkeypatch.setattr(archive, "_CHUNK", 1)
    state, config = tmp_path / "state", run_config(tmp_path)
    with zmq.Context() as context:
        with started(tmp_path, config, context) as table:
            for _ in range(3):
                play_a_voided_hand(table.ask)
            last = table.daemon.journal.last_seq
        alter(journal_path(state), last)                   # the break: the last record
        archived = quarantine(state, "disk damage", by="sam").archived
        aside = tmp_path / "aside.sqlite3"
        os.replace(archived, aside)                        # missing when the table starts
        Path(f"{archived.with_suffix('')}{COPY_SUFFIX}").unlink()
        cms = CmsTable(tmp_path, config, context)
        feed = None
        try:
            os.replace(aside, archived)                    # put back: checked again
            feed = TableFeed(context, FloorTable(id=TABLE_ID, cms_events=cms.cms_events,
                                                 cms_replay=cms.cms_replay),
                             None, resume_after=0, timeout_s=10)
            feed.open()
            stored: set[int] = set()

            def take(wait_s: float) -> None:
                """A turn of the floor service's feed: an error resets it (the service's
                rule), the next turn resumes from what was stored."""
                try:
                    rows = feed.take(1000, wait_s)
                except StreamError:
                    feed.reset()
                    feed.resume_after = max(stored, default=0)
                    return
                stored.update(row.seq for row in rows)
            deadline = time.monotonic() + 20
            while not feed.synced:                         # heartbeats until it hears one
                assert time.monotonic() < deadline, "the feed never heard the table"
                cms.tick()
                take(0.2)
            # (while the archive is checked the table answers "ask again", and the feed,
            # reset as the service resets it, asks again at its next turn)
            while "Run" not in cms.call("serves", last - 1):   # the check goes on
                assert time.monotonic() < deadline, "the archive put back is never served"
                cms.tick()
                take(0.05)
            for _ in range(5):                             # the floor's next turns
                cms.tick()
                take(0.2)
            missing = sorted(set(range(1, last)) - stored)
            assert not missing, (f"the table serves seqs 1 to {last - 1} from the archive "
                                 f"now, yet the floor never stored {len(missing)} of them "
                                 f"(seqs {missing[0]} to {missing[-1]})")
        finally:
            if feed is not None:
                feed.close()
            cms.stop()

"""A linked table whose journal breaks while it runs goes on writing into it (red team 5).

When the running chain check finds the journal broken, the daemon holds the table: "no hand can
go on, every command but status is refused, no device input is journaled; the journal is kept
as evidence, untouched from now on" (controller/daemon/loop.py, ``check_chain``). Commands,
device reports and counted refusals check ``journal_broken``; the pool channel does not:
``handle_pool_messages`` and the stale link in ``_tick`` still ``apply`` (journal, publish)
``pool_meter``, ``pool_link`` and ``jackpot_claimed`` records onto the evidence, chained to the
daemon's idea of the last record."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import zmq

from controller.core.table import Table
from controller.stream import pool_channel
from controller.stream.journal import journal_path
from controller.stream.pool_channel import MeterMessage, PoolSettings

from tests.support.daemon import run_config
from tests.support.daemon import Daemon

POOL = "LINK-1"


def settings(table: Table) -> PoolSettings:
    progressive = table.setup.progressive
    awards = progressive.awards
    return PoolSettings(wager=progressive.wager, seed=progressive.seed,
                        contribution=progressive.contribution,
                        awards={"pat-4-2-A-one-color": awards.pat_one_color,
                                "pat-4-2-A-two-color": awards.pat_two_color,
                                "4-high": awards.four_high, "5-high": awards.five_high})


def damage(state_dir: Path, seq: int) -> None:
    connection = sqlite3.connect(journal_path(state_dir), isolation_level=None)
    message = connection.execute("SELECT message FROM journal WHERE seq = ?",
                                 (seq,)).fetchone()[0]
    connection.execute("DROP TRIGGER journal_no_update")
    connection.execute("UPDATE journal SET message = ? WHERE seq = ?", (message + b" ", seq))
    connection.execute("CREATE TRIGGER journal_no_update BEFORE UPDATE ON journal BEGIN "
                       "SELECT RAISE(ABORT, 'the journal is append-only: UPDATE refused'); END")
    connection.close()


def test_a_held_linked_table_writes_nothing_more_to_its_broken_journal(tmp_path: Path) -> None:
    path = run_config(tmp_path)
    endpoint = f"ipc://{tmp_path}/pool"
    path.write_text(path.read_text() + f'\n[progressive.link]\npool = "{POOL}"\n'
                                       f'endpoint = "{endpoint}"\n')
    context = zmq.Context()
    floor = context.socket(zmq.PUB)
    floor.setsockopt(zmq.LINGER, 0)
    floor.bind(endpoint)
    table = Daemon(tmp_path, path, context)
    table.daemon.start()
    daemon = table.daemon
    link = daemon.pool_link
    assert link is not None

    def deliver(meter: int) -> None:
        """Publish until the daemon's SUB socket has it, then let the daemon read it."""
        message = MeterMessage(pool_id=POOL, meter=meter, entry=1, state="open", hits=(),
                               settings=settings(daemon.table))
        for _ in range(1000):
            floor.send_multipart(pool_channel.frames(message))
            if link.socket.poll(20):
                daemon.handle_pool_messages()
                return
        raise AssertionError("the pool message never reached the daemon")

    try:
        assert table.ask(command="open")["ok"]
        deliver(600_000)
        assert daemon.table.pool_link == "connected"
        damage(tmp_path / "state", 2)
        for _ in range(5):
            daemon.check_chain()
        assert daemon.journal_broken is not None and daemon.held_reason() is not None
        evidence = daemon.journal.last_seq
        deliver(612_345)                              # the floor's next meter
        link.heard = float("-inf")        # then the floor goes silent
        daemon._tick()
        assert daemon.journal.last_seq == evidence, (
            f"the held table journaled seq {evidence + 1} to {daemon.journal.last_seq} onto "
            f"the journal it keeps as evidence")
    finally:
        daemon.close()
        floor.close(0)
        context.term()

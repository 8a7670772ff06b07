"""A start from a checkpoint gives the table a replay from seq 1 gives, whatever the hands,
the kills and the restarts (hypothesis).

Origin: every start re-read, re-hashed and replayed the whole journal, holding every event in
a list (a busy month's journal: minutes to start, hundreds of MiB kept). Now the daemon
writes a checkpoint between hands and a start replays only what follows the newest sound one;
these tests hold that the table it rebuilds is the one the whole journal gives, and that a
checkpoint that is not sound is refused, naming it, and an older one (or the whole journal)
used instead.

The real daemon runs in this process without devices (tests/journal/table_play.py). A kill is the daemon
closed at any input, mid-hand included: it writes nothing on the way out, so the journal is as
a power cut leaves it at a transaction's boundary (the power-loss campaign kills the real
process, tests/reliability/test_power_loss.py).
"""

from __future__ import annotations

import random
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.core.table import Table
from controller.daemon import checkpoints, loop
from controller.daemon.alarm_book import AlarmBook
from controller.settings.table_config import (
    LoadedConfig,
    build_table,
    default_config_path,
    load_config,
)
from controller.stream.journal import Journal, JournalError, chain_hash, journal_path
from tests.support.table_play import GAMES, Dealer, replayed_from_seq_1, start, state_of, \
    table_config

#: A run: per session (a daemon from its start to its kill), the hands it plays and the input
#: of the last one it is killed after (None: the hands finish), and whether its checkpoints are
#: lost (a power cut between an input's commit and its checkpoint's, every time).
SESSIONS = st.lists(st.tuples(st.integers(0, 2), st.none() | st.integers(0, 40), st.booleans()),
                    min_size=2, max_size=3)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(game=st.sampled_from(GAMES), sessions=SESSIONS, seed=st.integers(0, 2**32 - 1),
       check_all=st.booleans())
def test_a_start_from_a_checkpoint_rebuilds_the_table_a_replay_from_seq_1_gives(
        game: str, sessions: list[tuple[int, int | None, bool]], seed: int, check_all: bool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # with check_all, the start checks the chain from seq 1 (a short journal); without it,
    # only from the checkpoint on
    monkeypatch.setattr(loop, "START_CHECKS_ALL", 10**9 if check_all else 0)
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="lowball-checkpoints-") as folder:
        loaded, state = table_config(game, Path(folder)), Path(folder) / "state"
        context: zmq.Context[Any] = zmq.Context()
        try:
            for hands, cut, lose_checkpoints in sessions:
                daemon, logs = start(loaded, state, context)
                try:
                    assert daemon.journal_broken is None
                    assert state_of(daemon.table) == state_of(replayed_from_seq_1(loaded, state))
                    written = daemon.journal.checkpoints(1)
                    verified = next(line for line in logs if line["event"] == "journal verified")
                    # the start restored the newest checkpoint the journal then had
                    assert verified["from_checkpoint"] == (written[0].seq if written else None)
                    if lose_checkpoints:
                        def lost(state: bytes) -> Any:
                            raise JournalError("a power cut before the checkpoint's commit")
                        daemon.journal.write_checkpoint = lost  # type: ignore[method-assign]
                    dealer = Dealer(daemon, game, rng)
                    for _ in range(hands):
                        for _ in dealer.inputs():
                            pass
                    if cut is not None:  # killed mid-hand, after `cut` inputs of the next
                        for done, _ in enumerate(dealer.inputs()):
                            if done >= cut:
                                break
                finally:
                    daemon.close()
            daemon, _ = start(loaded, state, context)
            try:
                assert state_of(daemon.table) == state_of(replayed_from_seq_1(loaded, state))
            finally:
                daemon.close()
        finally:
            context.term()


@pytest.fixture
def played(tmp_path: Path) -> Iterator[tuple[LoadedConfig, Path, zmq.Context[Any]]]:
    """Three hands played, a wager placed for the next, and the daemon stopped: a journal
    with three checkpoints and a record after the last."""
    loaded, state = table_config("three_card_lowball", tmp_path), tmp_path / "state"
    context: zmq.Context[Any] = zmq.Context()
    daemon, _ = start(loaded, state, context)
    dealer = Dealer(daemon, "three_card_lowball", random.Random(5))
    for _ in range(3):
        for _ in dealer.inputs():
            pass
    dealer.command({"command": "place", "spot": 1, "wager": "ante", "amount": 500,
                    "player": "p1"})
    daemon.close()
    yield loaded, state, context
    context.term()


def add_checkpoint(state: Path, seq: int, body: bytes, hash_of: str | None = None) -> None:
    """A checkpoint row written by another process, bound to the record at ``seq`` (or to
    ``hash_of``) and hashed right."""
    path = journal_path(state)
    with Journal.open_readonly(path) as journal:
        record_hash = hash_of or journal.hash_at(seq)
    assert record_hash is not None
    connection = sqlite3.connect(path)
    with connection:
        connection.execute("INSERT INTO checkpoint VALUES (?, ?, ?, ?)",
                           (seq, body, record_hash, chain_hash(record_hash, body)))
    connection.close()


def test_a_corrupt_checkpoint_is_refused_naming_it_and_the_one_before_it_is_used(
        played: tuple[LoadedConfig, Path, zmq.Context[Any]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Origin: a checkpoint is read from a file others can write. One whose state is not what
    it was hashed with, or is not a table's state, must not be restored."""
    monkeypatch.setattr(loop, "START_CHECKS_ALL", 0)
    loaded, state, context = played
    expected = state_of(replayed_from_seq_1(loaded, state))
    with Journal.open_readonly(journal_path(state)) as journal:
        sound = journal.checkpoints(1)[0]
        last = journal.last_seq
    assert sound.seq < last
    # a newer checkpoint, hashed right but holding nonsense, at the journal's last record
    add_checkpoint(state, last, b'{"format": 1, "meter": "lots"}')
    daemon, logs = start(loaded, state, context)
    try:
        refused = [line for line in logs if line["event"].startswith("checkpoint refused")]
        assert [line["checkpoint_seq"] for line in refused] == [last]
        assert refused[0]["reason"] == "checkpoint: schema_version missing"
        verified = next(line for line in logs if line["event"] == "journal verified")
        assert verified["from_checkpoint"] == sound.seq
        assert state_of(daemon.table) == expected
    finally:
        daemon.close()


def test_another_tables_checkpoint_is_refused_naming_the_table(
        played: tuple[LoadedConfig, Path, zmq.Context[Any]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Origin: a checkpoint copied from another table's journal (same game, its own meter) and
    chained onto this one's records would give this table that table's money."""
    monkeypatch.setattr(loop, "START_CHECKS_ALL", 0)
    loaded, state, context = played
    expected = state_of(replayed_from_seq_1(loaded, state))
    with Journal.open_readonly(journal_path(state)) as journal:
        sound = journal.checkpoints(1)[0]
        last = journal.last_seq
    other = Table("another-table", build_table(loaded).settings)
    other.meter = 99_999_999
    body = checkpoints.capture(other, AlarmBook())
    assert sound.seq < last
    add_checkpoint(state, last, body)
    daemon, logs = start(loaded, state, context)
    try:
        refused = [line for line in logs if line["event"].startswith("checkpoint refused")]
        assert len(refused) == 1 and "'another-table'" in refused[0]["reason"]
        assert state_of(daemon.table) == expected
        assert daemon.table.meter != 99_999_999
    finally:
        daemon.close()


def test_a_checkpoint_whose_state_was_altered_is_refused(
        played: tuple[LoadedConfig, Path, zmq.Context[Any]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Origin: the meter in a checkpoint is the players' money; a checkpoint altered in place
    (its trigger dropped, the state rewritten, the hash left) must not set it."""
    monkeypatch.setattr(loop, "START_CHECKS_ALL", 0)
    loaded, state, context = played
    expected = state_of(replayed_from_seq_1(loaded, state))
    path = journal_path(state)
    with Journal.open_readonly(path) as journal:
        newest, older = journal.checkpoints(2)
    connection = sqlite3.connect(path)
    with connection:
        connection.execute("DROP TRIGGER checkpoint_no_update")
        connection.execute("UPDATE checkpoint SET state = CAST(replace(CAST(state AS TEXT), "
                           "'\"meter\":', '\"meter\":1') AS BLOB) WHERE seq = ?", (newest.seq,))
    connection.close()
    daemon, logs = start(loaded, state, context)
    try:
        refused = [line for line in logs if line["event"].startswith("checkpoint refused")]
        assert [line["checkpoint_seq"] for line in refused] == [newest.seq]
        assert "the state was altered" in refused[0]["reason"]
        # and the dropped trigger holds the table, as a journal trigger's does
        assert daemon.journal_broken is not None
        assert "checkpoint_no_update" in daemon.journal_broken.reason
    finally:
        daemon.close()
    assert expected  # the journal itself is untouched


def test_an_old_journal_without_checkpoints_starts_and_gains_them(
        tmp_path: Path) -> None:
    """Origin: journals written before checkpoints have no checkpoint table; they must start
    as before (replayed from seq 1) and be checkpointed from then on."""
    loaded, state = table_config("cali_lowball", tmp_path), tmp_path / "state"
    context: zmq.Context[Any] = zmq.Context()
    try:
        daemon, _ = start(loaded, state, context)
        dealer = Dealer(daemon, "cali_lowball", random.Random(3))
        for _ in range(2):
            for _ in dealer.inputs():
                pass
        daemon.close()
        connection = sqlite3.connect(journal_path(state))
        with connection:  # as a journal made before checkpoints is
            connection.executescript("DROP TABLE checkpoint;")
        connection.close()
        expected = state_of(replayed_from_seq_1(loaded, state))
        daemon, logs = start(loaded, state, context)
        try:
            verified = next(line for line in logs if line["event"] == "journal verified")
            assert verified["from_checkpoint"] is None
            assert state_of(daemon.table) == expected
            assert daemon.journal.checkpoints(1) == []
            dealer = Dealer(daemon, "cali_lowball", random.Random(4))
            for _ in dealer.inputs():
                pass
            assert len(daemon.journal.checkpoints(5)) == 1
        finally:
            daemon.close()
    finally:
        context.term()


def test_every_field_of_the_table_is_in_a_checkpoint() -> None:
    """A field added to the table and not to the checkpoint would be lost at every start from
    a checkpoint: the checkpoint names every one."""
    table = build_table(load_config(default_config_path("cali_lowball")))
    assert set(vars(table)) == checkpoints.TABLE_FIELDS

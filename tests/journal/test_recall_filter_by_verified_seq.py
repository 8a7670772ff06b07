"""Red team 25: commit 02d4197 removed the recall's filter (request ids were recalled only from
records with seq <= the start-up check's verified seq), on the claim that ``_uncertain`` (a
held table whose journal holds unverified records answers no withdrawal) makes it moot.

Hole (mended at once: the filter is back, this test passes): ``_uncertain`` asks only whether the table is held *now*. The recall is read once, at
the command socket's bind, after the start-up check: a record another process appends between
the check and the bind (a ``command_accepted`` naming a request id, its hash chained) is
recalled, yet the table is not held until the running check's next turn. A ``withdraw`` in
that window answers the request carried out (seq 11, which the daemon never wrote); before
02d4197 the filter left that record out and the request was answered withdrawn, as it was:
never carried out here.

Tried and held: a table held at start (withdrawals refused by ``_uncertain``, commands by the
held reason); a command giving the forged id in the same window (refused as held, not as
carried out already: the command path finds the record); the same record found by the running
check (held, then the withdrawal refused by ``_uncertain``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import zmq

from controller.core.table_events import CommandAccepted
from controller.daemon.command_channel import CommandChannel
from controller.stream import wire
from controller.stream.journal import Journal, journal_path

from tests.support.daemon import run_config, Daemon, started
from tests.support.withdrawals import carried_out_at_seq_7


def forge_between_check_and_bind(monkeypatch: pytest.MonkeyPatch, state_dir: Path) -> None:
    """Another process appends, with its hash chained, a copy of the last command's record (seq 7)
    naming ``request-9``, just after the start-up check and before the socket's bind."""
    bind = CommandChannel.bind

    def forging_bind(self: CommandChannel, *args: Any) -> None:
        with Journal(journal_path(state_dir)) as other:
            accepted = [(record, event) for record in other.records()
                        if type(event := wire.to_event(wire.decode_event(record.message)))
                        is CommandAccepted]
            last, event = accepted[-1]
            other.append(event._replace(request_id="request-9"), table_id="TCL-01",
                         hand_id=last.hand_id)
        bind(self, *args)

    monkeypatch.setattr(CommandChannel, "bind", forging_bind)


@contextmanager
def forged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Daemon]:
    carried_out_at_seq_7(tmp_path)
    forge_between_check_and_bind(monkeypatch, tmp_path / "state")
    with zmq.Context() as context, started(tmp_path, run_config(tmp_path), context) as table:
        assert table.daemon.chain is not None
        # the start-up check verified the daemon's records only; the forged one is past them
        assert table.daemon.chain.verified_at_start == table.daemon.journal.last_seq
        assert table.daemon.journal.stored_end() == table.daemon.journal.last_seq + 1
        assert table.daemon.journal_broken is None
        yield table


def test_a_request_never_carried_out_here_is_not_answered_carried_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with forged(tmp_path, monkeypatch) as table:
        after = table.ask(command="withdraw", requests=["request-9"])
        # withdrawn (never carried out here), or refused as what cannot be told
        assert "request-9" not in after.get("carried_out", {}), after


def test_a_command_giving_the_forged_id_is_refused_as_held(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with forged(tmp_path, monkeypatch) as table:
        reply = table.ask(command="open", request_id="request-9")
        assert not reply["ok"] and "held" in reply["error"], reply
        assert "carried out already" not in reply["error"], reply


def test_the_forged_record_holds_the_table_at_the_running_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with forged(tmp_path, monkeypatch) as table:
        table.daemon._next_heartbeat = 0.0
        table.daemon._tick()
        assert table.daemon.journal_broken is not None
        after = table.ask(command="withdraw", requests=["request-9"])
        assert not after["ok"] and "not verified" in after["error"], after

"""One credential per supervisor: the journal says which supervisor acted, decided by the
daemon from the credential, never from the name a client gives."""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq

from controller.cli.demo import demo_config
from controller.daemon.loop import TableDaemon
from controller.daemon.systemd_notify import Notifier
from controller.settings.table_config import Devices, Limits, Security, Stream
from controller.stream import wire

ALICE, BOB = "alice-credential-0123456789", "bob-credential-9876543210"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def daemon() -> Iterator[TableDaemon]:
    with tempfile.TemporaryDirectory(prefix="lowball-supervisors-") as tmp:
        stream = Stream(events=f"ipc://{tmp}/events", replay=f"ipc://{tmp}/replay",
                        commands=f"ipc://{tmp}/commands")
        loaded = demo_config("cali_lowball", shoe="unused", spots="unused", meter="unused",
                             credential="shared-credential", stream=stream)
        security = Security(supervisor_credential_sha256=_sha("shared-credential"),
                            supervisors={"Alice": _sha(ALICE), "Bob": _sha(BOB)})
        loaded = loaded.model_copy(update={"config": loaded.config.model_copy(update={
            "devices": Devices(), "limits": Limits(min_ante=1, max_ante=10_000),
            "security": security})})
        context = zmq.Context()
        daemon = TableDaemon(loaded, state_dir=Path(tmp) / "state", context=context,
                             notifier=Notifier.from_environment({}), durability="batched")
        daemon.start()
        try:
            yield daemon
        finally:
            daemon.close()
            context.term()


def _ask(daemon: TableDaemon, **request: Any) -> dict[str, Any]:
    return daemon.command(json.dumps(request).encode())


def _last(daemon: TableDaemon, kind: str) -> Any:
    records = [wire.decode_event(r.message) for r in daemon.journal.records()]
    return [r for r in records if r.type == kind][-1].data


def test_the_journal_names_the_supervisor_whose_credential_it_was(daemon: TableDaemon) -> None:
    assert _ask(daemon, command="sign_in", credential=BOB, by="Alice")["ok"]
    accepted = _last(daemon, "command_accepted")
    assert (accepted.command, accepted.by, accepted.role) == ("sign_in", "Bob", "supervisor")
    assert _ask(daemon, command="open", credential=ALICE, by="anyone")["ok"]
    assert _last(daemon, "command_accepted").by == "Alice"


def test_a_journal_with_sign_ins_rebuilds_the_table(daemon: TableDaemon) -> None:
    assert _ask(daemon, command="open", credential=ALICE)["ok"]
    assert _ask(daemon, command="sign_in", credential=BOB)["ok"]
    before = daemon.table.snapshot()
    daemon.close()   # one daemon per state directory: the first lets go of it
    again = TableDaemon(daemon.loaded, state_dir=daemon.state_dir,
                        context=daemon.context, notifier=Notifier.from_environment({}),
                        durability="batched")
    again._rebuild()
    assert again.table.snapshot() == before
    again.journal.close()


def test_sign_in_needs_a_valid_credential_and_changes_nothing(daemon: TableDaemon) -> None:
    before = daemon.table.snapshot()
    reply = _ask(daemon, command="sign_in", by="Alice")
    assert not reply["ok"] and "needs the supervisor credential" in reply["error"]
    reply = _ask(daemon, command="sign_in", credential="guess", by="Alice")
    assert not reply["ok"] and reply["error"] == "the supervisor credential is not valid"
    assert daemon.table.snapshot() == before


def test_five_failed_sign_ins_raise_the_alarm(daemon: TableDaemon) -> None:
    for _ in range(5):
        _ask(daemon, command="sign_in", credential="guess", by="Alice")
    assert _last(daemon, "alarm").code == "credential_failures"


def test_the_shared_credential_still_works_with_the_name_the_client_gives(
        daemon: TableDaemon) -> None:
    assert _ask(daemon, command="open", credential="shared-credential", by="pit")["ok"]
    accepted = _last(daemon, "command_accepted")
    assert (accepted.by, accepted.role) == ("pit", "supervisor")


def test_a_supervisor_name_is_checked_where_the_config_is_read() -> None:
    with pytest.raises(ValueError, match="supervisors"):
        Security(supervisors={"<script>": _sha(ALICE)})
    with pytest.raises(ValueError, match="supervisors"):
        Security(supervisors={"Alice": "not-a-hash"})

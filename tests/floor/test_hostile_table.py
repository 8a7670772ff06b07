"""A compromised table is a machine on the casino network: whatever it sends, the floor
stores the other tables' events, stores none of its own out of order or twice, and says
where it stopped following it. Driven against the real floor service and PostgreSQL, with
the hostile table's journal and publisher real (:mod:`tests.support.hostile_table`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from controller.core.table_events import DeviceStatus, Fault, WagerPlaced
from controller.core.vocabulary import Device, DeviceCondition, FaultCode, WagerKey
from controller.floor.service import MAX_MESSAGE_BYTES

from tests.support.hostile_table import HostileTable
from tests.support.hostile_table import stored, opened
from tests.support.postgres import RunningFloor
from tests.support.processes import wait_until


def fault(detail: str) -> Fault:
    return Fault(code=FaultCode.SHOE_JAM, detail=detail, device=Device.SHOE, recoverable=True)


UNSTORABLE = [
    pytest.param([fault("jam\x00; DROP TABLE floor_events")], None, id="NUL in a field"),
    pytest.param([DeviceStatus(device=Device.SHOE, status=DeviceCondition.CONNECTED, detail="ok")],
                 "H-\x00-1",
                 id="NUL in a hand id"),
]


@pytest.mark.parametrize("events, hand_id", UNSTORABLE)
def test_an_event_the_database_refuses_holds_its_table_only(tmp_path: Path, database: str,
                                                            floor: Callable[..., RunningFloor],
                                                            events: list[Any], hand_id: str | None
                                                            ) -> None:
    calm = HostileTable(tmp_path / "calm", "CALM-01")
    evil = HostileTable(tmp_path / "evil", "EVIL-01")
    try:
        calm.emit([opened("CALM-01")])
        evil.emit([opened("EVIL-01")])
        service = floor(calm, evil).service
        wait_until(lambda: stored(database, "CALM-01") == [1]
                   and stored(database, "EVIL-01") == [1], "both tables' first events")
        connected = service.handover.epoch

        evil.emit(events, hand_id=hand_id)                     # seq 2: the database refuses it
        evil.emit([fault("after the poison")])                 # seq 3: must wait behind it
        for _ in range(5):
            calm.emit([fault("an honest jam")])
        wait_until(lambda: stored(database, "CALM-01") == list(range(1, 7)),
                   "the honest table's events, stored although the other's are refused")
        assert stored(database, "EVIL-01") == [1]              # nothing skipped, nothing after
        assert service.handover.epoch == connected   # nothing of the others dropped for it
        assert "EVIL-01" in service.held and "seq 2" in service.held["EVIL-01"]
        calm.emit([fault("still followed")])
        wait_until(lambda: stored(database, "CALM-01") == list(range(1, 8)), "and after")
        assert stored(database, "EVIL-01") == [1]
    finally:
        calm.close()
        evil.close()


def test_an_enormous_event_is_not_taken_and_holds_its_table_only(
        tmp_path: Path, database: str, floor: Callable[..., RunningFloor]) -> None:
    """An event is a few kilobytes: a table sending megabytes (gigabytes would take the floor
    service's memory) is not followed past it."""
    calm = HostileTable(tmp_path / "calm", "CALM-01")
    evil = HostileTable(tmp_path / "evil", "EVIL-01")
    try:
        calm.emit([opened("CALM-01")])
        evil.emit([opened("EVIL-01")])
        floor(calm, evil)
        wait_until(lambda: stored(database, "CALM-01") == [1]
                   and stored(database, "EVIL-01") == [1], "both tables' first events")
        evil.emit([fault("x" * (4 * MAX_MESSAGE_BYTES))])     # seq 2
        evil.emit([fault("after the flood")])                # seq 3
        for _ in range(3):
            calm.emit([fault("an honest jam")])
        wait_until(lambda: stored(database, "CALM-01") == [1, 2, 3, 4], "the honest table")
        calm.emit([fault("and on")])
        wait_until(lambda: stored(database, "CALM-01") == [1, 2, 3, 4, 5], "and on")
        assert stored(database, "EVIL-01") == [1]
    finally:
        calm.close()
        evil.close()


def test_a_number_past_the_views_casts_spoils_no_other_tables_report(
        tmp_path: Path, database: str, floor: Callable[..., RunningFloor]) -> None:
    """The typed views cast a table's numbers with ::bigint: one stored amount past bigint
    would make every query of floor_wagers_placed, the ratings and `floor report` fail for
    every table. The wire refuses an event's integer past 2**53 - 1, so it is never stored, and
    the table that sent it is not followed past it."""
    calm = HostileTable(tmp_path / "calm", "CALM-01")
    evil = HostileTable(tmp_path / "evil", "EVIL-01")
    try:
        calm.emit([opened("CALM-01"), WagerPlaced(spot=1, wager=WagerKey.ANTE, amount=1000,
                                                   player="P-1", source="dealer")])
        evil.emit([opened("EVIL-01"),
                   (WagerPlaced(spot=1, wager=WagerKey.ANTE, amount=1000, player="P-1", source="dealer"),
                    lambda message: message.replace(b'"amount":1000', b'"amount":' + b"9" * 20))])
        floor(calm, evil)
        wait_until(lambda: stored(database, "CALM-01") == [1, 2], "the honest table's wager")
        calm.emit([fault("and on")])
        wait_until(lambda: stored(database, "CALM-01") == [1, 2, 3], "and on")
        with psycopg.connect(database) as connection:
            rows = connection.execute("SELECT table_id, amount FROM floor_wagers_placed "
                                      "ORDER BY table_id").fetchall()
        assert rows == [("CALM-01", 1000)]
        assert stored(database, "EVIL-01") in ([], [1])   # never past the bad seq
    finally:
        calm.close()
        evil.close()


def test_a_tables_records_past_its_journals_break_are_never_stored(
        tmp_path: Path, database: str, floor: Callable[..., RunningFloor]) -> None:
    """A held table's heartbeat names the first bad seq of its journal: what lies past it
    (another process's records) is not the table's, even from a table that serves it."""
    calm = HostileTable(tmp_path / "calm", "CALM-01")
    evil = HostileTable(tmp_path / "evil", "EVIL-01")
    try:
        calm.emit([opened("CALM-01")])
        evil.emit([opened("EVIL-01")])
        evil.broken_at = 3                                       # before the floor connects
        for _ in range(3):
            evil.emit([fault("past the break, or before it")])   # seq 2-4
        service = floor(calm, evil).service
        wait_until(lambda: service.broken == {"EVIL-01": 3}, "the break reported")
        calm.emit([fault("an honest jam")])
        wait_until(lambda: stored(database, "CALM-01") == [1, 2], "the honest table")
        assert stored(database, "EVIL-01") == [1, 2]              # up to the break, not past
        with psycopg.connect(database) as connection:
            cursor = connection.execute("SELECT resume_after FROM floor_cursors "
                                        "WHERE table_id = 'EVIL-01'").fetchone()
        assert cursor == (2,)
    finally:
        calm.close()
        evil.close()

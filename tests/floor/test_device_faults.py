"""A device's fault on the floor: a ``device_fault`` event (schema version 2) and a version 1
``device_status`` ``fault:<code>`` both count as the device down until its next status."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from controller.floor import store


def _row(seq: int, kind: str, ts: str, data: dict[str, Any], version: int) -> store.Row:
    return store.Row("T-1", seq, kind, None, datetime.fromisoformat(ts), json.dumps(
        {"schema_version": version, "table_id": "T-1", "seq": seq, "ts": ts, "hand_id": None,
         "type": kind, "data": data}))


def test_device_faults_of_both_versions_are_device_statuses_and_downtime(database: str) -> None:
    with store.connect(database) as connection:
        store.migrate(connection)
        store.store_batch(connection, [
            _row(1, "device_status", "2026-11-25T01:00:00+00:00",
                 {"device": "shoe", "status": "fault:DOOR", "detail": "v1"}, 1),
            _row(2, "device_status", "2026-11-25T01:00:10+00:00",
                 {"device": "shoe", "status": "connected", "detail": ""}, 1),
            _row(3, "device_fault", "2026-11-25T01:01:00+00:00",
                 {"device": "shoe", "code": "JAM", "detail": "card stuck"}, 2),
            _row(4, "device_status", "2026-11-25T01:01:30+00:00",
                 {"device": "shoe", "status": "connected", "detail": ""}, 2),
        ], {"T-1": 4})
        statuses = connection.execute("SELECT seq, device, status, detail FROM "
                                      "floor_device_status ORDER BY seq").fetchall()
        downtime = connection.execute("SELECT status, extract(epoch FROM duration)::int FROM "
                                      "floor_device_downtime ORDER BY down_at").fetchall()
    assert statuses == [(1, "shoe", "fault:DOOR", "v1"), (2, "shoe", "connected", ""),
                        (3, "shoe", "fault:JAM", "card stuck"), (4, "shoe", "connected", "")]
    assert downtime == [("fault:DOOR", 10), ("fault:JAM", 30)]

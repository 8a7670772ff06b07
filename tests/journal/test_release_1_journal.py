"""A journal written by release 1 (schema_version 1) must keep being read as sound: the
table's journal outlives any one release, and wire.decode reads a version-1 record in
today's form."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from controller.core.table_events import DeviceStatus
from controller.core.vocabulary import Device, DeviceCondition
from controller.stream import wire
from controller.stream.journal import GENESIS_HASH, Journal, chain_hash, journal_path

TS = datetime(2026, 11, 21, 23, 50, tzinfo=UTC)
TABLE = "CALI-01"


def write_v1_journal(path: Path, messages: list[tuple[str, bytes]]) -> None:
    """A journal as release 1 wrote it: the same file format (FORMAT_VERSION 1), rows whose
    ``type`` column is the type the message was written with."""
    Journal(path).close()  # the schema, triggers and application id of today's file
    connection = sqlite3.connect(path, isolation_level=None)
    prev = GENESIS_HASH
    for seq, (kind, message) in enumerate(messages, 1):
        digest = chain_hash(prev, message)
        connection.execute("INSERT INTO journal VALUES (?, ?, ?, ?, ?, ?, ?)",
                           (seq, wire.format_ts(TS), kind, None, message, prev, digest))
        prev = digest
    connection.close()


def v1(event: Any, seq: int) -> bytes:
    return wire.encode(event, table_id=TABLE, seq=seq, ts=TS, hand_id=None).replace(
        b'"schema_version":%d' % wire.SCHEMA_VERSION, b'"schema_version":1')


def test_a_version_1_journal_with_a_device_fault_verifies(tmp_path: Path) -> None:
    path = journal_path(tmp_path)
    fault = v1(DeviceStatus(Device.SHOE, DeviceCondition.CONNECTED, ""), 2).replace(
        b'"status":"connected"', b'"status":"fault:JAM"')
    write_v1_journal(path, [("device_status", v1(DeviceStatus(Device.SHOE, DeviceCondition.CONNECTED, ""), 1)),
                            ("device_status", fault)])
    assert wire.decode_event(fault).type == "device_fault"  # the reader does upgrade it
    with Journal.open_readonly(path) as journal:
        report = journal.verify()
    # The row's type column is the type as written (device_status), not today's form.
    assert report.ok, report.reason


def test_a_version_1_record_whose_column_names_another_type_is_still_broken(tmp_path: Path) -> None:
    path = journal_path(tmp_path)
    fault = v1(DeviceStatus(Device.SHOE, DeviceCondition.CONNECTED, ""), 1).replace(
        b'"status":"connected"', b'"status":"fault:JAM"')
    write_v1_journal(path, [("device_fault", fault)])  # written as device_status
    with Journal.open_readonly(path) as journal:
        report = journal.verify()
    assert not report.ok and report.first_bad_seq == 1
    assert "type 'device_fault' but the message says 'device_status'" in report.reason

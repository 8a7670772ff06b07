"""The table daemon's metrics in the Prometheus text format, on a loopback port.

What a site team watches a server by, for a table: the journal (records, bytes on disk, how
far its chain is verified, whether it is broken), the free space where it lives, each device
connected or not, the table's state and hand number, and counters of what was journaled by
kind (faults, alarms, refusals, hands settled) since the daemon started.

Nothing is counted on the table's path but a record's kind: every other figure is read when
Prometheus scrapes (a :class:`Collector` called on the metrics server's thread), so a table
with metrics deals as fast as one without. No metric names a card, a tag or a player.
"""

from __future__ import annotations

import os
import shutil
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from controller.core.table_states import TableState
from controller.stream.journal import COMPANIONS

if TYPE_CHECKING:
    from controller.daemon.loop import TableDaemon

_TYPE = "type"


class TableMetrics:
    """The daemon's figures, read at each scrape; the kinds journaled, counted as they are."""

    def __init__(self, daemon: TableDaemon) -> None:
        self.daemon = daemon
        #: record kind -> how many this daemon journaled since it started
        self.journaled: Counter[str] = Counter()

    def observe(self, records: list[Any], events: list[Any]) -> None:
        """The daemon's observer: count what one input journaled, by kind."""
        self.journaled.update(record.type for record in records)

    def describe(self) -> list[Metric]:
        return []  # collected at each scrape: nothing to describe ahead

    def collect(self) -> Iterator[Metric]:
        daemon = self.daemon
        table = daemon.table_id
        labels = ["table"]
        journal = daemon.journal
        status = daemon.journal_status()
        yield gauge("lowball_journal_last_seq", "The journal's last seq (records written).",
                     labels, [table], status["seq"])
        yield gauge("lowball_journal_bytes", "The journal's files on disk, in bytes.",
                     labels, [table], _journal_bytes(journal.path))
        verified = status["verified_through"] or status["verified_at_start"] or 0
        yield gauge("lowball_journal_verified_through_seq",
                     "The seq through which the journal's chain is verified.",
                     labels, [table], verified)
        yield gauge("lowball_journal_broken", "1 when the journal's chain failed a check (the "
                     "table is held until a supervisor quarantines it).", labels, [table],
                     0 if status["broken_at"] is None else 1)
        free = shutil.disk_usage(daemon.state_dir)
        yield gauge("lowball_state_dir_free_bytes",
                     "Free bytes on the file system of the journal.", labels, [table], free.free)
        yield gauge("lowball_state_dir_size_bytes",
                     "Size in bytes of the file system of the journal.", labels, [table],
                     free.total)
        devices = GaugeMetricFamily("lowball_device_connected",
                                    "1 when the device is connected, 0 when lost.",
                                    labels=["table", "device"])
        for device, condition in daemon.devices.status().items():
            devices.add_metric([table, str(device)], 1 if condition == "connected" else 0)
        yield devices
        states = GaugeMetricFamily("lowball_table_state", "1 for the table's state now.",
                                   labels=["table", "state"])
        now = daemon.table.state
        for state in TableState:
            states.add_metric([table, state.value], 1 if state == now else 0)
        yield states
        yield gauge("lowball_hand_number", "The number of the last hand started.", labels,
                     [table], daemon.table.hand_number)
        journaled = CounterMetricFamily("lowball_records_journaled",
                                        "Records journaled since the daemon started, by kind "
                                        "(fault, alarm, command_refused, hand_settled, ...).",
                                        labels=["table", _TYPE])
        for kind, count in sorted(self.journaled.copy().items()):
            journaled.add_metric([table, kind], count)
        yield journaled


def gauge(name: str, text: str, labels: list[str], values: list[str],
           value: float) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, text, labels=labels)
    family.add_metric(values, value)
    return family


def _journal_bytes(path: os.PathLike[str] | str) -> int:
    total = 0
    for suffix in ("", *COMPANIONS):
        try:
            total += os.stat(f"{os.fspath(path)}{suffix}").st_size
        except FileNotFoundError:
            pass
    return total

"""The floor service's metrics in the Prometheus text format (``[metrics]`` of the floor's
config): for each table, how far its events are stored and how far behind the table's own
head that is, whether it is held (the database refuses its events) or its journal broken;
events stored, received again, batches and pool ledger rows since the service started.

Every figure is read when Prometheus scrapes; nothing is counted on the feed's path that the
service does not count already.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

if TYPE_CHECKING:
    from controller.floor.service import FloorService


class FloorMetrics:
    def __init__(self, service: FloorService) -> None:
        self.service = service

    def describe(self) -> list[Metric]:
        return []  # collected at each scrape

    def collect(self) -> Iterator[Metric]:
        service = self.service
        with service.handover.lock:
            committed = dict(service.handover.committed)
        heads = dict(service.table_heads)
        held, broken = service.held, service.broken
        stored = GaugeMetricFamily("lowball_floor_stored_through_seq",
                                   "The seq through which the table's events are stored.",
                                   labels=["table"])
        head = GaugeMetricFamily("lowball_floor_table_head_seq",
                                 "The table's last seq, as its last heartbeat said.",
                                 labels=["table"])
        lag = GaugeMetricFamily("lowball_floor_lag_records",
                                "Records the table has journaled that the floor has not "
                                "stored yet.", labels=["table"])
        holding = GaugeMetricFamily("lowball_floor_table_held",
                                    "1 when the database refuses the table's events (not "
                                    "followed until they are stored).", labels=["table"])
        breaks = GaugeMetricFamily("lowball_floor_table_journal_broken",
                                   "1 when the table's journal is broken (stored up to the "
                                   "seq before the break).", labels=["table"])
        for table in service.config.tables:
            through = committed.get(table.id, 0)
            stored.add_metric([table.id], through)
            if table.id in heads:
                head.add_metric([table.id], heads[table.id])
                lag.add_metric([table.id], max(0, heads[table.id] - through))
            holding.add_metric([table.id], 1 if table.id in held else 0)
            breaks.add_metric([table.id], 1 if table.id in broken else 0)
        yield from (stored, head, lag, holding, breaks)
        for name, text, value in (
                ("lowball_floor_events_stored", "Events stored since the service started.",
                 service.stored),
                ("lowball_floor_events_repeated", "Events received again that the store "
                 "already held.", service.repeated),
                ("lowball_floor_batches", "Transactions that stored events.", service.batches),
                ("lowball_floor_pool_ledger_rows", "Rows written to the pools' ledgers.",
                 service.ledger_rows)):
            counter = CounterMetricFamily(name, text)
            counter.add_metric([], value)
            yield counter
        failing = GaugeMetricFamily("lowball_floor_pool_failing",
                                    "1 when a pool's ledger cannot be brought up to the store.",
                                    labels=["pool"])
        for linked in service.config.pools:
            failing.add_metric([linked.id], 1 if linked.id in service.pool_failures else 0)
        yield failing

"""The metrics page (Prometheus's text format over HTTP, ``/metrics``) of a table daemon or the
floor service, on a loopback port and a thread of its own.

What it serves is a collector's (:mod:`controller.daemon.metrics`,
:mod:`controller.floor.metrics`): every figure read when Prometheus scrapes.
"""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import start_http_server

from controller.settings.metrics import MetricsSettings


class MetricsServer:
    """The metrics page of one daemon, on its own thread; :meth:`close` stops it."""

    def __init__(self, settings: MetricsSettings, metrics: Any) -> None:
        """Serve ``metrics`` (a collector: ``collect()`` yields metric families) on
        ``settings``' address and port; OSError when the port cannot be bound."""
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(metrics)
        self.server, self.thread = start_http_server(settings.port, settings.address,
                                                     registry=self.registry)

    @property
    def port(self) -> int:
        return int(self.server.server_port)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)

"""The ``[metrics]`` section of the table's and the floor's config: where Prometheus scrapes.

The metrics name no card and no player, but they tell how busy a table is: they are served on
loopback only (a scraper on the same host, or a node agent that forwards them), so the address
is one of the loopback addresses and nothing else parses.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class MetricsSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    #: The TCP port of the metrics page (``http://ADDRESS:PORT/metrics``).
    port: Annotated[int, Field(strict=True, ge=1024, le=65535)]
    #: A loopback address: the page is for a scraper on this host.
    address: Literal["127.0.0.1", "::1"] = "127.0.0.1"

"""Logging: structlog, JSON lines for journald in production, readable lines on a terminal.

Under systemd stdout is not a terminal, so each log line is one JSON object (``journalctl -o
cat`` shows them as they are and tools can parse them); in a terminal the same events are
printed for people. The table id is bound on every line by the daemon.
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

import structlog


def configure(*, json_lines: bool | None = None, level: int = logging.INFO,
              stream: TextIO | None = None) -> None:
    stream = stream or sys.stdout
    if json_lines is None:
        json_lines = not stream.isatty()
    renderer = structlog.processors.JSONRenderer() if json_lines \
        else structlog.dev.ConsoleRenderer(colors=stream.isatty())
    # Only the processors a line of this project needs: the daemon writes some on the table's
    # thread at every hand, each a cold path (no context variables or stack_info are used).
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.WriteLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )

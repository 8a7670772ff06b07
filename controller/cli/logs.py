"""Logging: structlog, JSON lines for journald in production, readable lines on a terminal.

Under systemd stdout is not a terminal, so each log line is one JSON object (``journalctl -o
cat`` shows them as they are and tools can parse them); in a terminal the same events are
printed for people. The table id is bound on every line by the daemon.

No line names a card: the log's readers (``journalctl`` on the table PC, a log shipper) are
not surveillance, so every card written in a line's values, in any spelling the table writes,
becomes ``(card)`` before the line is rendered (the journal keeps every card, for surveillance).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from typing import Any, TextIO

import structlog

from controller.core.hidden_cards import CARD_TEXT

#: What a card in a log line becomes.
CARD_IN_LOG = "(card)"


def _without_cards(value: Any) -> Any:
    if isinstance(value, str):
        return CARD_TEXT.sub(CARD_IN_LOG, value)
    if isinstance(value, dict):
        return {key: _without_cards(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_without_cards(item) for item in value]
    return value


def no_card(logger: Any, method: str, event: MutableMapping[str, Any]) -> dict[str, Any]:
    """The structlog processor that writes ``(card)`` for every card in a line's values."""
    return {key: _without_cards(value) for key, value in event.items()}


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
            no_card,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.WriteLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )

"""What stops the daemon from starting: a configuration or environment problem, one line.

:class:`StartupError` carries a message that names the cause and what to do about it;
``lowball-table run`` prints it on one line and exits 2, never with a traceback.
"""

from __future__ import annotations


class StartupError(RuntimeError):
    """The daemon cannot start: the message names the cause and what to do."""

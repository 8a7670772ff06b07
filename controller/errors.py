"""The project's exception root, and what stops the daemon from starting.

Every exception the project defines derives from :class:`LowballError`, so a caller can tell
the table's own errors from anything else with one ``except``, and matches a particular one
by its class and its fields, never by its message (the message is for people: it may be
reworded). Each class keeps the builtin base it has always had (``ValueError`` for bad input,
``RuntimeError`` for a failed operation) beside the root, so ``except ValueError`` still
catches a bad card, and pydantic validators still turn one into a validation error.

:class:`StartupError` carries a message that names the cause and what to do about it;
``lowball-table run`` prints it on one line and exits 2, never with a traceback.

Standard library only: every layer imports this module, the core and the drivers included.
"""

from __future__ import annotations


class LowballError(Exception):
    """The root of every exception the project defines."""


class StartupError(LowballError, RuntimeError):
    """The daemon cannot start: the message names the cause and what to do."""

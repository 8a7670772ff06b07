"""Text without a \\u escape is journaled or refused, never held.

Red team 16: this session's speed changes (commits dc33458, 3527ea9, 4e0bab9, 4d3e021)
attacked as a hostile process with write access to the journal's file, a full disk and a kill
between statements would: ``Journal._insert`` (a lone INSERT, or BEGIN IMMEDIATE, single-row
INSERTs, COMMIT), the written links the running chain check trusts without hashing
(``Journal.written_after``, ``chain_watch._Follow.read``), and the command channel's
lone-surrogate check and frame-by-frame replies.

No hole was found: these tests pin the behaviour the attacks found sound, so that a later speed
change that breaks it fails here. Each states the promise it checks."""

from __future__ import annotations

import json

import pytest

from bench import fuzz


@pytest.mark.parametrize("text", ["Zo\u00eb \U0001d11e \uffff \U0010ffff",
                                  "\ufeff\u00a0\u2028 x", "\u0085\u009f end"])
def test_text_without_a_u_escape_is_journaled_or_refused_never_held(text: str) -> None:
    """Non-ASCII text written as UTF-8, not as escapes (the surrogate check then skipped):
    every such command is answered, journaled or refused, and the journal rebuilds the
    table the daemon holds."""
    with fuzz.command_daemon() as daemon:
        checker = fuzz.CommandChecker(daemon)
        for payload in ({"command": "open", "by": text},
                        {"command": "open", text: 1},
                        {"command": text},
                        {"command": "place", "spot": 1, "wager": text, "amount": 500}):
            raw = json.dumps(payload, ensure_ascii=False).encode()
            assert b"\\u" not in raw
            reply = checker(raw)
            assert reply["ok"] is True or reply.get("seq") is not None \
                or reply.get("counted"), (payload, reply)
        assert daemon.held_reason() is None
        checker.check_rebuild()

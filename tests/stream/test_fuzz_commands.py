"""Fuzzed wire input, the command channel: random JSON values and random byte strings
through :meth:`controller.daemon.loop.TableDaemon.command` of a started daemon without devices.

Proves: the daemon never raises on a command; every refusal is ``{"ok": False, "error":
<non-empty>}`` with its journal seq; a refused command leaves the table's snapshot unchanged
and journals only its refusal; after the run the journal verifies and rebuilds exactly the
table the daemon holds (nothing acted on without being journaled).
"""

from __future__ import annotations

import json

import pytest

from bench import fuzz

EXAMPLES = 300


def test_random_json_commands(capsys: pytest.CaptureFixture[str]) -> None:
    tried = fuzz.commands_json(EXAMPLES)
    outcome = fuzz.COMMAND_OUTCOMES["commands_json"]
    with capsys.disabled():
        print(f"\nfuzz commands_json: {tried} inputs tried ({outcome})")
    assert tried >= EXAMPLES * 0.9
    assert outcome["accepted"] > 0 and outcome["refused"] > 0


def test_random_command_bytes(capsys: pytest.CaptureFixture[str]) -> None:
    tried = fuzz.commands_bytes(EXAMPLES)
    with capsys.disabled():
        print(f"\nfuzz commands_bytes: {tried} inputs tried")
    assert tried >= EXAMPLES * 0.9


@pytest.mark.parametrize("payload, says", [
    (b"[" * 4000, "not valid JSON"),                                # nested past the C stack
    (b'{"command": "open", "by": "\\ud800"}', "lone surrogate"),    # not a character
    (b'{"command": "open", "credential": "\\udfff"}', "lone surrogate"),
    (b'{"command": "place", "spot": 1, "wager": "ante", "amount": NaN}', "NaN is not"),
])
def test_json_that_python_half_accepts_is_refused_and_changes_nothing(payload: bytes,
                                                                      says: str) -> None:
    """Found by the fuzzer: these raised out of ``command()`` (killing the daemon's loop),
    and ``{"command": "open", "by": "\\ud800"}`` opened the table before the journal write
    failed, leaving the table in a state its journal did not record."""
    with fuzz.command_daemon() as daemon:
        checker = fuzz.CommandChecker(daemon)
        reply = checker(payload)
        assert reply["ok"] is False and says in reply["error"], reply
        assert daemon.table.state == "CLOSED"
        json.dumps(reply).encode()
        checker.check_rebuild()

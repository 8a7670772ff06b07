"""A refused replay request repeats no client text.

The second outside attack on the finished daemon (issue 14): each test is an attack that
worked before its fix."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench import fuzz
from controller.stream import wire


@pytest.mark.parametrize("request_", (
    {"request": "x" * 60_000},
    {"request": "snapshot", "k" * 60_000: 1},
    {"request": "replay", "after": 0, fuzz.CREDENTIAL: 1},
    {"request": "\u202e" + fuzz.CREDENTIAL},
))
def test_a_refused_replay_request_repeats_no_client_text(request_: dict[str, Any]) -> None:
    """The replay sockets (the CMS one faces off-site systems) answered, journaled and
    published a refused request's unknown name or key verbatim: 60 kB of a client's text per
    refusal on both families, a credential sent as a key, a right-to-left override. A
    refusal now names the known fields only, and describes anything else by its length."""
    with pytest.raises(wire.WireError) as refused:
        wire.parse_request(json.dumps(request_).encode())
    reason = str(refused.value)
    assert len(reason) < 200, reason[:200]
    assert fuzz.CREDENTIAL not in reason and "\u202e" not in reason
    assert "characters" in reason

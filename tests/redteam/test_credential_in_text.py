"""The supervisor credential typed into a text with other words around it (a reason, who
gives the command, a player's name, a key, a nested value) must not be journaled: the journal
is published on both families, the CMS included, and whoever reads it could then void hands
and move the meter. The daemon holds only hashes, so it hashes every piece of every text that
could be a credential and refuses the command whole on a match."""

from __future__ import annotations

import json

import pytest

from bench import fuzz

SECRET = fuzz.CREDENTIAL


def _request(place: str) -> dict:
    return {
        "reason": {"command": "void", "reason": f"misdeal {SECRET}"},
        "by": {"command": "open", "by": f"pit {SECRET}"},
        "player": {"command": "place", "spot": 2, "wager": "ante", "amount": 500,
                   "player": f"{SECRET} Smith"},
        "key": {"command": "open", f"note {SECRET}": True},
        "nested": {"command": "open", "extra": [{"deep": f"({SECRET}),"}]},
    }[place]


@pytest.mark.parametrize("place", ("reason", "by", "player", "key", "nested"))
def test_the_credential_within_a_text_is_never_journaled(place):
    with fuzz.command_daemon("three_card_lowball") as daemon:
        assert daemon.command(b'{"command":"open"}')["ok"]
        reply = daemon.command(json.dumps(_request(place)).encode())
        assert not reply["ok"] and "outside \"credential\"" in reply["error"]
        assert SECRET not in json.dumps(reply)
        journal = b"\n".join(record.message for record in daemon.journal.records())
        assert SECRET.encode() not in journal

"""The supervisor credential typed into a text with other words around it (a reason, who
gives the command, a player's name, a key) must not be journaled: the journal is published on
both families, the CMS included, and whoever reads it could then void hands and move the
meter. The whole text equal to the credential is refused (tests/reliability/
test_redteam_second_pass.py); a text that *contains* it is journaled as it came."""

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
    }[place]


@pytest.mark.xfail(strict=True, reason="the supervisor credential inside a longer text (a "
                                       "reason, by, a player, a key) is journaled and "
                                       "published: only a text equal to it is refused")
@pytest.mark.parametrize("place", ("reason", "by", "player", "key"))
def test_the_credential_within_a_text_is_never_journaled(place):
    with fuzz.command_daemon("three_card_lowball") as daemon:
        assert daemon.command(b'{"command":"open"}')["ok"]
        daemon.command(json.dumps(_request(place)).encode())
        journal = b"\n".join(record.message for record in daemon.journal.records())
        assert SECRET.encode() not in journal

"""Who played, who was paid: the player id from ``place`` to the hand's records (schema 3).

The id is the dealer's text: bounded where the command is parsed, carried by every wager,
settlement and award of the seat, kept on the CMS family, and read as "" in a record
journaled before version 3."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from controller.core.events import ProgressiveAwarded, Wager, WagerSettled, WagersLocked
from controller.core.table_events import HandVoided
from controller.settings.validation import InputError
from controller.stream import cms_view, wire
from controller.stream.table_commands import MAX_PLAYER_ID, parse_command

TS = datetime(2026, 11, 21, 23, 50, 0, 123456, tzinfo=UTC)
HAND = "TCL-01-000001"


def place(player: object) -> object:
    return parse_command({"command": "place", "spot": 3, "wager": "ante", "amount": 1000,
                          "player": player})


@pytest.mark.parametrize("player", ["", "P7", "card 1234", "Jos\u00e9", "O'Brien-2", "88#a.b_c",
                                    "x" * MAX_PLAYER_ID])
def test_a_player_id_of_letters_digits_and_inner_punctuation_is_taken(player):
    assert place(player).player == player  # type: ignore[attr-defined]


@pytest.mark.parametrize("player", [
    "a\nb", "a\tb", "<script>", "a\u202eb", "a\u200bb", "\x1b[31mred", " lead", "trail ",
    "-", "a\"b", "a\\b", "a{b}", "x" * (MAX_PLAYER_ID + 1), 7, None])
def test_anything_else_is_refused_naming_player(player):
    with pytest.raises(InputError) as caught:
        place(player)
    (problem,) = caught.value.problems
    assert problem.startswith("player: ")
    if isinstance(player, str) and len(player) <= MAX_PLAYER_ID:
        assert "letters and digits" in problem


def envelope(event: object, seq: int = 1) -> bytes:
    return wire.encode(event, table_id="TCL-01", seq=seq, ts=TS, hand_id=HAND)


def as_version_2(message: bytes) -> bytes:
    """The record as version 2 journaled it: no ``player`` anywhere."""
    data = json.loads(message)
    data["schema_version"] = 2
    body = data["data"]
    body.pop("player", None)
    for key in ("wagers", "returned"):
        for item in body.get(key, ()):
            del item["player"]
    return wire.canonical_json(data)


RECORDS = [
    WagersLocked("three_card_lowball", "paytable-1", (Wager(1, "ante", 500, "P7"),)),
    WagerSettled(1, "ante", 500, "win", 500, "P7"),
    ProgressiveAwarded(1, "5-high", 300, "P7"),
    HandVoided(HAND, "sup", "misdeal", (Wager(1, "ante", 500, "P7"),), 0),
]


@pytest.mark.parametrize("record", RECORDS, ids=lambda record: type(record).__name__)
def test_version_3_carries_the_player_and_an_older_record_reads_as_no_player(record):
    message = envelope(record)
    assert b'"player":"P7"' in message and b'"schema_version":3' in message
    assert wire.to_event(wire.decode_event(message)) == record
    older = as_version_2(message)
    assert b'"player"' not in older
    read = wire.decode_event(older)
    assert read.schema_version == 2
    assert b'"player":"P7"' not in wire.dumps(read) and b'"player":""' in wire.dumps(read)


def test_the_cms_family_says_whose_settlement_it_is_even_for_a_card_like_id():
    settled = envelope(WagerSettled(1, "ante", 500, "win", 500, "4c"))
    # the hand is still in play: the record goes live, with its player untouched
    assert cms_view.cms_message("wager_settled", HAND, settled, HAND) == settled
    assert cms_view.redact({"player": "Kh", "players": {"1": "As"}, "reason": "Kh"}) == \
        {"player": "Kh", "players": {"1": "As"}, "reason": "**"}

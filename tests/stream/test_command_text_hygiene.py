"""A command's text: invisible and control characters refused, other scripts welcome.

The second outside attack on the finished daemon (issue 14): each test is an attack that
worked before its fix."""

from __future__ import annotations

import json

import pytest

from bench import fuzz


#: Characters that are not text a person reads: controls, bidirectional overrides, zero-width
#: and format characters, line and paragraph separators.
_INVISIBLE = ("\u0000", "\n", "\x1b[2J", "\u202e", "\u2066", "\u200b", "\ufeff", "\u2028",
              "\u0085")


@pytest.mark.parametrize("trick", _INVISIBLE)
@pytest.mark.parametrize("field", ("player", "reason", "key"))
def test_a_command_text_with_invisible_or_control_characters_is_refused(trick: str,
                                                                        field: str) -> None:
    """A player name with a right-to-left override, a NUL or a terminal escape was carried
    out and published raw to surveillance (``by`` alone was held to printable text): a
    console shows ``\\u202eevil`` reversed, a C consumer stops at the NUL. Every text a
    command carries, keys included, is now refused when it holds such a character."""
    with fuzz.command_daemon("three_card_lowball") as daemon:
        assert daemon.command(b'{"command":"open"}')["ok"]
        before = daemon.journal.last_seq
        command = {"command": "place", "spot": 1, "wager": "ante", "amount": 5,
                   "player": f"seat{trick}1"}
        if field == "reason":
            command = {"command": "adjust_meter", "amount": 1, "reason": f"r{trick}x",
                       "credential": fuzz.CREDENTIAL}
        elif field == "key":
            command = {"command": "open", f"k{trick}": 1}
        reply = daemon.command(json.dumps(command).encode())
        assert not reply["ok"] and "character" in reply["error"], reply
        assert trick.encode() not in reply["error"].encode()
        records = list(daemon.journal.records())[before:]
        assert [record.type for record in records] == ["command_refused"]
        assert trick.encode("utf-8") not in records[0].message


def test_accented_and_other_scripts_stay_welcome() -> None:
    with fuzz.command_daemon("three_card_lowball") as daemon:
        assert daemon.command(b'{"command":"open"}')["ok"]
        # each script on its own (an id that mixes scripts is refused, Unicode TR39; Latin
        # may join Han: a Chinese player's romanised name)
        # (the vowel signs of Devanagari, Tamil and Thai are combining marks: part of the
        # letter they follow, welcome as an accent is)
        for spot, player in enumerate(["Zoë", "李", "محمد", "Zoë 李", "राम शर्मा", "முருகன்",
                                       "สมชาย"], start=1):
            reply = daemon.command(json.dumps({"command": "place", "spot": spot,
                                               "wager": "ante", "amount": 5,
                                               "player": player}).encode())
            assert reply["ok"], reply


@pytest.mark.parametrize("player", ["P\u034f-1", "P-1\ufe0f", "\u0301P", "P-\u0301"])
def test_a_mark_that_draws_nothing_or_follows_no_letter_is_refused(player: str) -> None:
    from controller.settings.validation import InputError
    from controller.stream.table_commands import parse_command

    with pytest.raises(InputError, match="player"):
        parse_command({"command": "place", "spot": 1, "wager": "ante", "amount": 5,
                       "player": player})

"""The second outside attack on the finished daemon (issue 14): each test is an attack that
worked before its fix."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bench import fuzz
from controller.stream import cms_view, wire
from controller.core.cards import parse_card
from tests.test_daemon import rig_factory, wait_for  # noqa: F401 (a fixture)
from tests.reliability.test_command_channel_attacks import a_hand_locked
from tests.test_daemon import RigFactory

#: Spellings the table reads as a card (``parse_card``) besides the canonical ``Kh``.
_SPELLINGS = ("kh", "KH", "kH", "10d", "10D", "td", "as", "AS")


@pytest.mark.parametrize("spelling", _SPELLINGS)
def test_every_spelling_the_table_reads_as_a_card_is_redacted_for_the_cms(spelling: str) -> None:
    """``decide`` with ``discard:kh`` is carried out (the table reads ``kh`` as the king of
    hearts), and its journaled arguments went to the CMS family as written while the hand
    was in play: the redaction knew only the canonical ``Kh``."""
    assert parse_card(spelling)  # the table takes it as a card
    hand = "TCL-01-000001"
    for arguments, reason in ((json.dumps({"decision": f"discard:{spelling}", "spot": 1}), "x"),
                              ("{}", f"unknown card {spelling!r} at spot 1")):
        event = wire.EVENT_CLASSES["command_refused"]("decide", arguments, "dealer", "dealer",
                                                      reason)
        message = wire.encode(event, table_id="TCL-01", seq=3, ts=datetime.now(UTC),
                              hand_id=hand)
        sent = cms_view.cms_message("command_refused", hand, message, hand)
        assert sent is not None
        data: Any = wire.decode_event(sent).data      # Any: command_refused's own fields
        assert spelling not in data.arguments.replace("discard", "")
        assert spelling not in data.reason.replace("unknown card", "")


def test_a_discard_spelled_in_lower_case_reaches_no_cms_client_before_the_hand_settles() -> None:
    """Through the daemon: a decide command with the cards in lower case, refused in the wrong
    state, is journaled with the hand in play; the CMS bytes of it name no card."""
    with a_hand_locked() as daemon:
        hand = daemon.table.hand_id
        assert hand is not None
        daemon.command(json.dumps({"command": "decide", "spot": 1,
                                   "decision": "discard:qs,10h"}).encode())
        record = list(daemon.journal.records())[-1]
        assert record.type == "command_refused" and record.hand_id == hand
        sent = cms_view.cms_message(record.type, record.hand_id, record.message, hand)
        assert sent is not None
        assert b"qs" not in sent and b"10h" not in sent


def _with_credential_in(place: str) -> dict[str, Any]:
    secret = fuzz.CREDENTIAL
    commands: dict[str, dict[str, Any]] = {
        "by": {"command": "open", "by": secret},
        "reason": {"command": "void", "reason": secret},
        "player": {"command": "place", "spot": 2, "wager": "ante", "amount": 500,
                   "player": secret},
        "decision": {"command": "decide", "spot": 1, "decision": secret},
        "key": {"command": "void", "reason": "x", secret: True},
        "wager": {"command": "cancel", "spot": 1, "wager": secret},
    }
    return commands[place]


@pytest.mark.parametrize("place", ("by", "reason", "player", "decision", "key", "wager"))
def test_the_credential_sent_outside_its_field_is_never_journaled(place: str) -> None:
    """A supervisor who types the credential into ``by``, a reason or a player name (or sends
    it as a key) saw it journaled and published on both families, the CMS included: the
    daemon now refuses any command that carries the credential outside ``credential``, and
    keeps none of it."""
    with fuzz.command_daemon("three_card_lowball") as daemon:
        assert daemon.command(b'{"command":"open"}')["ok"]
        before = daemon.journal.last_seq
        reply = daemon.command(json.dumps(_with_credential_in(place)).encode())
        assert not reply["ok"]
        assert "credential" in reply["error"]
        journal = b"\n".join(record.message for record in daemon.journal.records())
        assert fuzz.CREDENTIAL.encode() not in journal
        assert fuzz.CREDENTIAL[:16].encode() not in journal
        assert daemon.journal.last_seq > before  # the refusal itself is on the record


@pytest.mark.parametrize("which", ("config", "paytables"))
def test_a_config_file_that_is_not_utf8_is_one_line_exit_2(tmp_path: Path, which: str) -> None:
    """A config (or paytables) file with bytes that are not UTF-8 (a copy gone wrong, a
    file saved in Latin-1) ended the start in a UnicodeDecodeError traceback, exit 1."""
    from tests.reliability.test_startup_trust import cli, one_line_exit_2, run_config

    path = run_config(tmp_path)
    if which == "config":
        path.write_bytes(b"# caf\xe9\n" + path.read_bytes())
        named = str(path)
    else:
        from controller.settings.table_config import load_config

        paytables = path.parent / load_config(path).config.table.paytables_file
        text = paytables.read_bytes()
        paytables = tmp_path / "latin1-paytables.toml"
        paytables.write_bytes(b"# caf\xe9\n" + text)
        path.write_text(path.read_text().replace(
            str(load_config(path).config.table.paytables_file), str(paytables)))
        named = str(paytables)
    result = cli("run", "--config", str(path), "--state-dir", str(tmp_path / "state"))
    one_line_exit_2(result, named, "UTF-8")


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


def test_a_shoe_sending_garbage_at_full_speed_neither_floods_the_journal_nor_holds_a_card(
        rig_factory: RigFactory) -> None:  # noqa: F811
    """2,000 garbled frames (``STX A ETX``: 6 kB, half a second of a 115,200-baud line) then a
    card: every rejected frame was journaled and published (2,000 synced records), and the
    card waited behind all of them (seconds; at full speed the queue only grows). Now the
    first rejection in a second is reported in full and the rest are counted, in one report
    that comes before the device's next one: every rejection is accounted for."""
    rig = rig_factory("three_card_lowball")
    assert rig.ask({"command": "open"})["ok"]
    for wager in ("ante", "bonus"):
        assert rig.ask({"command": "place", "spot": 1, "wager": wager, "amount": 500})["ok"]
    assert rig.ask({"command": "lock"})["ok"]
    rig.shoe.device.load(["As", "2d", "3c"])
    before = rig.daemon.journal.last_seq
    with rig.shoe.lock:
        rig.shoe.device.inject_noise(bytes([0x02, 0x41, 0x03] * 2000))
        rig.shoe.device.deal(1)
    wait_for(lambda: rig.events("card_dealt"), "the card behind the garbage")
    rejected = [e.data for e in rig.events("device_status") if e.seq > before
                and e.data.status == "frame_rejected"]
    assert len(rejected) <= 20, len(rejected)
    counted = sum(int(m.group(1)) if (m := re.match(r"(\d+) more", r.detail)) else 1
                  for r in rejected)
    assert counted == 2000, [r.detail for r in rejected]


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


def test_a_shoe_sending_garbage_does_not_flood_the_log(rig_factory: RigFactory) -> None:  # noqa: F811
    """Each garbled frame was a warning line with its bytes: 2,000 lines for 6 kB, thousands
    a second at full speed, enough for journald's rate limit to drop the daemon's other lines.
    Now one line a second, the next one counting the lines not written."""
    import structlog

    rig = rig_factory("three_card_lowball")
    assert rig.ask({"command": "open"})["ok"]
    with structlog.testing.capture_logs() as logs:
        with rig.shoe.lock:
            rig.shoe.device.inject_noise(bytes([0x02, 0x41, 0x03] * 2000))
            rig.shoe.device.deal(1)
        wait_for(lambda: rig.events("shoe_card"), "the card behind the garbage")
    rejected = [line for line in logs if line["event"] == "shoe input rejected"]
    assert 1 <= len(rejected) <= 20, len(rejected)
    assert len(rejected) + sum(line.get("not_logged", 0) for line in rejected) <= 2000


def test_a_garbled_card_frame_named_in_a_fault_reaches_the_cms_without_its_card() -> None:
    """The shoe spells cards in capitals (``KH,,0``); a frame refused for its count was
    published to the CMS family with the card as sent in the fault's detail."""
    hand = "TCL-01-000001"
    event = wire.EVENT_CLASSES["device_fault"](
        "shoe", "MISREAD", "card frame 'KH,,0': card count '0' is not 1-65535")
    message = wire.encode(event, table_id="TCL-01", seq=9, ts=datetime.now(UTC), hand_id=hand)
    sent = cms_view.cms_message("device_fault", hand, message, hand)
    assert sent is not None
    fault: Any = wire.decode_event(sent)      # Any: device_fault's own fields
    assert "KH" not in fault.data.detail


@pytest.mark.parametrize("command", ({"command": "void"},
                                     {"command": "adjust_meter", "amount": 5},
                                     {"command": "void", "reason": ""}))
def test_a_malformed_supervisor_command_without_the_credential_is_refused_for_the_credential(
        command: dict[str, Any]) -> None:
    """``void`` without its reason and without the credential was refused as ``reason: Field
    required`` only, not saying that it needs the credential (the property test that the role
    is the credential's alone failed whenever it drew this case)."""
    with fuzz.command_daemon("three_card_lowball") as daemon:
        reply = daemon.command(json.dumps(command).encode())
        assert not reply["ok"]
        assert reply["error"].startswith(
            f"'{command['command']}' needs the supervisor credential; "), reply

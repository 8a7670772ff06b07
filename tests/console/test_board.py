"""The board: what the dealer's screen shows and which buttons it offers, from the stream."""

from __future__ import annotations

from typing import Any

import pytest

from controller.console.board import Board, actions, banner, supervisor_actions
from controller.console.config import ConsoleConfig
from controller.settings.validation import InputError, validate


def state(name: str, **extra: Any) -> dict[str, Any]:
    return {"table_id": "T", "game": "cali_lowball", "state": name, "hand": None,
            "layout": {}, "lamps": {}, "fault": None, "jackpot_pending": None,
            "last_settled_hand": None, "expecting": "", **extra}


def hand(kind: str, **step: Any) -> dict[str, Any]:
    return {"hand_id": "T-000001", "phase": "p", "wagers": {"1": {"ante": 1000}},
            "cards": {"1": ["Ah", "Kd"]}, "house_way": None,
            "next": {"kind": kind, "to": None, "seats": [], "options": [], **step}}


def names(found: list[dict[str, Any]]) -> list[Any]:
    return [(a["command"], a.get("spot"), a.get("decision")) for a in found]


def test_the_buttons_are_the_commands_the_table_lists_and_none_other() -> None:
    """The screen derives no rule: its buttons are the snapshot's ``allowed`` (the table's
    own ``can`` for each command, tested in tests/core/test_table.py)."""
    allowed = {"dealer": [{"command": "decide", "spot": 1, "decision": "raise"}],
               "supervisor": [{"command": "void"}]}
    deciding = state("DECIDING", hand=hand("decision", seats=[1], options=["raise"]),
                     allowed=allowed)
    assert actions(deciding) == allowed["dealer"]
    assert supervisor_actions(deciding) == allowed["supervisor"]
    assert actions(state("OPEN")) == [] and supervisor_actions(state("OPEN")) == []


def test_a_fault_shows_its_way_out() -> None:
    fault = {"code": "shoe_jam", "detail": "the shoe jammed", "device": "shoe",
             "recoverable": True}
    paused = state("PAUSED", hand=hand("card", to=1), fault=fault)
    assert "the shoe jammed" in banner(paused) and "Continue" in banner(paused)
    lost = state("PAUSED", hand=hand("card", to=1), fault={**fault, "recoverable": False})
    assert "supervisor to void" in banner(lost)
    burnable = state("PAUSED", hand=hand("card", to=1),
                     fault={**fault, "recoverable": False, "burnable": True})
    assert "supervisor to burn the card or void the hand" in banner(burnable)


def test_a_pending_jackpot_holds_the_screen() -> None:
    pending = state("SETTLED", jackpot_pending={"hand_id": "T-000009", "seats": [2],
                                                "amount": 512345})
    assert "JACKPOT $5,123.45" in banner(pending)
    assert Board().view(pending, 10)["jackpot"]["text"] == "$5,123.45"


def test_the_payout_panel_says_pay_or_collect_per_wager_with_the_awards_apart() -> None:
    board = Board()
    board.note(1, "hand_started", "T-1", {"hand_id": "T-1"})
    board.note(2, "card_dealt", "T-1", {"card": "Ah", "to": 1, "phase": "deal"})
    board.note(3, "decision_made", "T-1", {"seat": 1, "decision": "discard:Kd", "raised": 0,
                                            "cards": ["Kd"]})
    for seq, (wager, amount, result, net) in enumerate(
            [("ante", 1000, "win", 1000), ("bonus", 1000, "push", 0),
             ("progressive", 100, "lose", -100)], start=4):
        board.note(seq, "wager_settled", "T-1", {"seat": 1, "wager": wager, "amount": amount,
                                                  "result": result, "net": net})
    board.note(7, "progressive_awarded", "T-1", {"seat": 1, "award": "4-high", "amount": 1000,
                                                  "player": "P-7"})
    view = board.view(state("SETTLED", last_settled_hand="T-1"), 7)
    [panel] = view["payouts"]
    assert [(line["action"], line["text"], line["award"]) for line in panel["lines"]] == [
        ("pay", "$10.00", False), ("return", "$10.00", False), ("collect", "$1.00", False),
        ("pay", "$10.00", True)]
    assert panel["total"] == 1900 and panel["total_text"] == "$19.00"
    assert panel["player"] == "P-7"   # whom the records name
    assert view["spots"][0]["cards"] == [{"card": "Ah", "discarded": False}]
    # the next hand's screen starts clean
    assert board.view(state("OPEN", last_settled_hand="T-1"), 8)["payouts"] == []


def test_a_discarded_card_is_shown_as_discarded() -> None:
    board = Board()
    board.note(1, "hand_started", "T-1", {"hand_id": "T-000001"})
    board.note(2, "decision_made", "T-1", {"seat": 1, "decision": "discard", "raised": 0,
                                            "cards": []})     # the table family: redacted
    view = board.view(state("DEALING", hand={**hand("card", to=1),
                                             "discarded": {"1": ["Kd"]}}), 2)
    assert view["spots"][0]["cards"] == [{"card": "Ah", "discarded": False},
                                         {"card": "Kd", "discarded": True}]


def test_a_hidden_card_is_a_card_back_and_a_settled_hand_shows_its_discards() -> None:
    board = Board()
    board.note(1, "hand_started", "T-1", {"hand_id": "T-000001"})
    view = board.view(state("DEALING", hand={**hand("card", to=2),
                                             "cards": {"1": [None, None], "dealer": [None]}}), 1)
    assert view["spots"][0]["cards"] == [{"card": None, "discarded": False}] * 2
    assert view["dealer"] == [{"card": None, "discarded": False}]
    # once the hand is over the table family sends the cards it held; the final hands say
    # which were given up
    for seq, card in enumerate(["Kd", "2c", "3h", "4s"], start=2):
        board.note(seq, "card_dealt", "T-000001", {"card": card, "to": 1, "phase": "deal"})
    board.note(6, "hand_shown", "T-000001", {"to": 1, "cards": ["2c", "3h", "4s"],
                                              "hand_class": "4-high", "folded": False})
    board.note(7, "wager_settled", "T-000001", {"seat": 1, "wager": "ante", "amount": 100,
                                                 "result": "win", "net": 100})
    view = board.view(state("SETTLED", last_settled_hand="T-000001"), 7)
    assert view["spots"][0]["cards"][0] == {"card": "Kd", "discarded": True}
    assert [c["discarded"] for c in view["spots"][0]["cards"][1:]] == [False] * 3


@pytest.mark.parametrize("settings, problem", [
    ({"table_config": "t.toml", "host": "0.0.0.0"}, "only with TLS"),
    ({"table_config": "t.toml", "tls_cert_file": "c.pem"}, "go together"),
    ({"table_config": "t.toml", "port": 70000}, "port"),
    ({"table_config": "t.toml", "admin": True}, "admin: unknown key"),
])
def test_the_console_listens_off_loopback_only_with_tls(settings: dict[str, Any], problem: str
                                                        ) -> None:
    with pytest.raises(InputError, match=problem):
        validate(ConsoleConfig, settings, "console.toml")
    assert validate(ConsoleConfig, {"table_config": "t.toml", "host": "::1"}, "c").host == "::1"


def test_alarms_stay_until_the_table_journals_their_acknowledgement_and_are_bounded() -> None:
    from controller.console.recall import Alarms

    alarms = Alarms(size=3)
    alarms.note(5, "fault", "t", {"code": "shoe_jam", "detail": "JAM", "device": "shoe",
                                  "recoverable": True})
    alarms.note(5, "fault", "t", {"code": "again", "detail": "", "device": "shoe",
                                  "recoverable": True})          # seen again after a reconnect
    alarms.note(6, "device_status", "t", {"device": "shoe", "status": "connected", "detail": ""})
    assert [a["text"] for a in alarms.all()] == ["fault shoe_jam: JAM"]
    assert alarms.all()[0]["acknowledged_by"] is None
    alarms.note(10, "alarm_acknowledged", "2026-11-25T06:00:01.000000Z", {"seq": 5, "by": "Alice"})
    alarms.note(11, "alarm_acknowledged", "t", {"seq": 99, "by": "Alice"})  # one not kept here
    assert (alarms.all()[0]["acknowledged_by"], alarms.all()[0]["acknowledged_at"]) == \
        ("Alice", "2026-11-25T06:00:01.000000Z")
    for seq in (7, 8, 9):
        alarms.note(seq, "alarm", "t", {"code": "credential_failures", "detail": "5"})
    assert [a["seq"] for a in alarms.all()] == [9, 8, 7]    # the acknowledged one went first


def test_a_broken_journal_is_an_alarm_once_that_no_command_acknowledges() -> None:
    from controller.console.recall import Alarms

    alarms = Alarms()
    alarms.journal_broken(17, "2026-11-25T06:00:00.000000Z")
    alarms.journal_broken(17, "2026-11-25T06:00:01.000000Z")   # every heartbeat says it again
    (alarm,) = alarms.all()
    assert alarm["seq"] == -17 and alarm["type"] == "journal_broken"
    assert alarm["text"].startswith("journal hash chain broken at seq 17")


def test_the_locked_wagers_say_who_played_each_spot_of_a_hand() -> None:
    from controller.console.recall import Recall

    recall = Recall()
    recall.note(1, "wager_placed", None, "t", {"spot": 4, "wager": "ante", "amount": 500,
                                                "player": "typo", "source": "dealer"})
    recall.note(2, "hand_started", "T-000001", "t",
                {"hand_id": "T-000001", "game": "g", "paytable": "p", "number": 1})
    recall.note(3, "wagers_locked", "T-000001", "t", {"game": "g", "paytable": "p", "wagers": [
        {"seat": 4, "wager": "ante", "amount": 500, "player": "card 88"},
        {"seat": 5, "wager": "ante", "amount": 500, "player": ""}]})
    assert recall.hands()[0]["players"] == {"4": "card 88"}


def test_recall_keeps_the_last_hands_with_who_played_each_spot() -> None:
    from controller.console.recall import Recall

    recall = Recall(size=2)
    for number in (1, 2, 3):
        hand_id = f"T-{number:06d}"
        recall.note(number * 10, "wager_placed", None, "t",
                    {"spot": 4, "wager": "ante", "amount": 500, "player": f"card-{number}",
                     "source": "dealer"})
        recall.note(number * 10 + 1, "hand_started", hand_id, "t",
                    {"hand_id": hand_id, "game": "g", "paytable": "p", "number": number})
        recall.note(number * 10 + 2, "card_dealt", hand_id, "t",
                    {"card": "Ah", "to": 4, "phase": "deal"})
    assert [h["hand_id"] for h in recall.hands()] == ["T-000003", "T-000002"]
    hand = recall.hand("T-000003")
    assert hand is not None
    assert hand["players"] == {"4": "card-3"} and hand["steps"][0]["data"]["card"] == "Ah"
    assert recall.hand("T-000001") is None

"""`make run`'s demo, headless, and the dealer's command-line client."""

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from controller.cli.dealer import request_of
from controller.settings.table_config import build_table, default_config_path, load_config
from controller.stream.journal import Journal, journal_path
from controller.stream.live_view import LiveView


@pytest.mark.slow
def test_the_demo_plays_hands_and_stops_cleanly(tmp_path: Path) -> None:
    state = tmp_path / "state"
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli.main", "demo", "--hands", "2", "--no-view",
         "--pace", "0", "--seed", "11", "--state-dir", str(state),
         "--events", f"ipc://{tmp_path}/e", "--replay", f"ipc://{tmp_path}/r",
         "--commands", f"ipc://{tmp_path}/c", "--cms-events", f"ipc://{tmp_path}/ce",
         "--cms-replay", f"ipc://{tmp_path}/cr", "--console-port", "0"],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "demo: the dealer's screen: http://127.0.0.1:" in done.stderr   # make run's URL
    assert done.stdout.count(" hand_settled ") >= 2
    assert "demo stopped after 2 hands" in done.stderr
    report = Journal(journal_path(state)).verify()
    assert report.ok and report.records_checked > 50


@pytest.mark.parametrize("words, expected", [
    (["place", "3", "ante", "10"], {"command": "place", "spot": 3, "wager": "ante",
                                      "amount": 1000}),
    (["place", "3", "ante", "$10.00", "P9"], {"command": "place", "spot": 3, "wager": "ante",
                                            "amount": 1000, "player": "P9"}),
    (["decide", "2", "discard:Kh,Qs"], {"command": "decide", "spot": 2,
                                        "decision": "discard:Kh,Qs"}),
    (["verify-jackpot"], {"command": "verify_jackpot"}),
    (["void", "card on the floor"], {"command": "void", "reason": "card on the floor"}),
    (["lock"], {"command": "lock"}),
    (["acknowledge-alarm", "812"], {"command": "acknowledge_alarm", "seq": 812}),
])
def test_dealer_words_make_requests(words: list[str], expected: dict[str, Any]) -> None:
    assert request_of(words) == expected


@pytest.mark.parametrize("words, says", [
    (["place", "3"], "usage: place SPOT WAGER DOLLARS [PLAYER]"),
    (["decide", "2", "stand", "extra"], "usage: decide SPOT DECISION"),
])
def test_dealer_usage_errors(words: list[str], says: str) -> None:
    with pytest.raises(ValueError, match=says.replace("[", r"\[").replace("]", r"\]")):
        request_of(words)


def test_dealer_says_when_nobody_answers(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli.main", "dealer", "--connect", f"ipc://{tmp_path}/x",
         "--timeout", "0.2", "status"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "no answer from" in done.stderr


def test_the_live_view_shows_spots_cards_and_meter() -> None:
    table = build_table(load_config(default_config_path("three_card_lowball")))
    view = LiveView()
    view.event(7, "fault", {"code": "shoe_jam", "detail": "card stuck"})
    screen = view.render(table.snapshot(), {"shoe": "connected", "spots": "lost"}, 7)
    assert "TCL-01" in screen and "$5,000.00" in screen and "shoe_jam" in screen
    assert screen.count("\n") > 12 and "spots \x1b[31mlost" in screen


def test_recent_events_show_cards_as_text_and_every_field_of_a_shown_hand() -> None:
    table = build_table(load_config(default_config_path("three_card_lowball")))
    view = LiveView()
    view.event(532, "hand_shown", {"to": 6, "cards": ["2s", "Ah", "Jd"], "hand_class": "J-high",
                                   "folded": False})
    view.event(533, "house_way", {"hand": ["Qs", "Qh", "Qc"], "discard": ["Qs", "Qh"],
                                  "rule": "three of a kind: keep one"})
    screen = view.render(table.snapshot(), {"shoe": "connected"}, 534)
    assert "to=6, cards=2s Ah Jd, hand_class=J-high, folded=False" in screen
    assert "hand=Qs Qh Qc, discard=Qs Qh" in screen
    assert "Card(" not in screen


def test_a_new_credential_verifies_as_supervisor(tmp_path: Path) -> None:
    import hashlib
    import stat

    path = tmp_path / "supervisor.credential"
    done = subprocess.run([sys.executable, "-m", "controller.cli.main", "credential", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    digest = hashlib.sha256(path.read_text().strip().encode()).hexdigest()
    assert f'supervisor_credential_sha256 = "{digest}"' in done.stdout
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = subprocess.run([sys.executable, "-m", "controller.cli.main", "credential", str(path)],
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 2 and "exists" in again.stderr

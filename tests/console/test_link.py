"""The console's link to the table, in this process against the real daemon."""

from __future__ import annotations

import threading

from controller.console import link as link_module
from controller.console.link import TableLink
from tests.test_daemon import Rig, wait_for


def test_a_burst_of_cards_reaches_the_screen_without_waiting_for_the_idle_poll(
        tmp_path, monkeypatch):
    """The stream client reads live events into its buffer while it waits for a snapshot;
    they are on no socket, so the link must look again at once instead of sleeping until its
    idle poll ends (here a minute: the burst must be on the screen long before)."""
    monkeypatch.setattr(link_module, "IDLE_POLL_MS", 60_000)
    rig = Rig(tmp_path, "cali_lowball")
    views: list[dict] = []
    seen = threading.Event()

    def on_view(view: dict) -> None:
        views.append(view)
        seen.set()

    stream = rig.stream
    link = TableLink(table_id=rig.daemon.table_id, spots=7, events=stream.events,
                     replay=stream.replay, commands=stream.commands, on_view=on_view)
    link.start()
    try:
        assert seen.wait(15)
        rig.shoe.device.load(["Jd", "3h", "9s", "5c", "2c", "4d", "7h"])
        assert rig.ask({"command": "open"})["ok"]
        for wager in ("ante", "xtra_bonus"):
            assert rig.ask({"command": "place", "spot": 1, "wager": wager,
                            "amount": 1000})["ok"]
        assert rig.ask({"command": "lock"})["ok"]
        rig.shoe.device.deal(4)                     # a burst: two rounds of hole cards
        wait_for(lambda: views and len(views[-1]["dealer"]) == 2
                 and len(views[-1]["spots"][0]["cards"]) == 2, "the four cards on the screen")
    finally:
        link.stop()
        rig.close()


def test_a_command_is_answered_through_the_link(tmp_path):
    rig = Rig(tmp_path, "cali_lowball")
    stream = rig.stream
    link = TableLink(table_id=rig.daemon.table_id, spots=7, events=stream.events,
                     replay=stream.replay, commands=stream.commands, on_view=lambda view: None)
    link.start()
    answers: list[dict] = []
    try:
        link.send({"command": "open", "by": "test"}, answers.append)
        link.send({"command": "open", "by": "test"}, answers.append)
        wait_for(lambda: len(answers) == 2, "both answers")
        assert answers[0]["ok"] and not answers[1]["ok"]      # in the order sent
    finally:
        link.stop()
        rig.close()

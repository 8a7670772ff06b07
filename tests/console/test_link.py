"""The console's link to the table, in this process against the real daemon."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
import zmq

from controller.console import link as link_module
from controller.console.link import TableLink
from controller.stream.command_replies import Withdrawn

from tests.support.commands import Router
from tests.support.daemon import Daemon, config_file
from tests.support.rig import Rig
from tests.support.waits import wait_for


def test_a_burst_of_cards_reaches_the_screen_without_waiting_for_the_idle_poll(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stream client reads live events into its buffer while it waits for a snapshot;
    they are on no socket, so the link must look again at once instead of sleeping until its
    idle poll ends (here a minute: the burst must be on the screen long before)."""
    monkeypatch.setattr(link_module, "IDLE_POLL_MS", 60_000)
    rig = Rig(tmp_path, "cali_lowball")
    views: list[dict[str, Any]] = []
    seen = threading.Event()

    def on_view(view: dict[str, Any]) -> None:
        views.append(view)
        seen.set()

    stream = rig.stream
    assert stream.table_events and stream.table_replay
    link = TableLink(table_id=rig.daemon.table_id, spots=7, events=stream.table_events,
                     replay=stream.table_replay, commands=stream.commands, on_view=on_view)
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


def test_events_between_the_links_snapshot_and_its_first_view_reach_the_screen(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The link joins the stream from a snapshot, then notes the events that arrived after
    it; it published its first view from that older snapshot, and redrew the screen only
    when something else came (a heartbeat that happened to change, another event): a card
    dealt as the console joined, then a quiet table, stayed off the screen. Here the table
    answers only when the test serves its replay socket, and sends no heartbeat at all."""
    monkeypatch.setattr(link_module, "SILENCE_S", 600.0)      # no heartbeat is no outage here
    context = zmq.Context()
    table = Daemon(tmp_path, config_file(tmp_path), context)
    table.daemon.start()                                       # its loop does not run
    assert table.daemon.publisher is not None
    serve = table.daemon.publisher.handle_replay
    assert table.ask(command="open")["ok"]                     # a journal to look back on
    views: list[dict[str, Any]] = []
    link = TableLink(table_id=table.daemon.table_id, spots=7, events=f"ipc://{tmp_path}/te",
                     replay=f"ipc://{tmp_path}/tr", commands=f"ipc://{tmp_path}/c",
                     on_view=views.append)
    link.start()
    try:
        wait_for(lambda: serve(max_requests=1), "the link's first snapshot")
        wait_for(lambda: serve(max_requests=1), "the snapshot it follows the stream from")
        # After that snapshot, while the link waits for the events before it:
        assert table.ask(command="place", spot=3, wager="ante", amount=500)["ok"]
        wait_for(lambda: serve() >= 0 and views and views[-1]["spots"][2]["wagers"],
                 "the wager on the screen")
    finally:
        link.stop()
        table.daemon.close()
        context.term()


def test_a_command_is_answered_through_the_link(tmp_path: Path) -> None:
    rig = Rig(tmp_path, "cali_lowball")
    stream = rig.stream
    assert stream.table_events and stream.table_replay
    link = TableLink(table_id=rig.daemon.table_id, spots=7, events=stream.table_events,
                     replay=stream.table_replay, commands=stream.commands, on_view=lambda view: None)
    link.start()
    answers: list[dict[str, Any]] = []
    try:
        link.send({"command": "open", "by": "test"}, answers.append)
        link.send({"command": "open", "by": "test"}, answers.append)
        wait_for(lambda: len(answers) == 2, "both answers")
        assert answers[0]["ok"] and not answers[1]["ok"]      # in the order sent
    finally:
        link.stop()
        rig.close()



@pytest.mark.parametrize("settled, told", [
    (Withdrawn({}, ["ID"]), {"ok": False, "withdrawn": True}),
    (Withdrawn({"ID": 41}, []), {"ok": True, "seq": 41}),
])
def test_a_command_not_answered_in_time_is_withdrawn_and_its_screen_told_what_became_of_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settled: Withdrawn, told: dict[str, Any]
        ) -> None:
    """The table holds the screen's command without answering (a slow disk): the link
    withdraws it when its time is up, and tells the screen what the withdrawal settled,
    never to be carried out, or carried out late (docs/command-channel.md, section 6)."""
    monkeypatch.setattr(link_module, "COMMAND_TIMEOUT_S", 0.2)
    rig = Rig(tmp_path, "cali_lowball")
    router = Router(rig.context, f"ipc://{tmp_path}/slow-commands")
    stream = rig.stream
    assert stream.table_events and stream.table_replay
    link = TableLink(table_id=rig.daemon.table_id, spots=7, events=stream.table_events,
                     replay=stream.table_replay, commands=f"ipc://{tmp_path}/slow-commands",
                     on_view=lambda view: None)
    link.start()
    answers: list[dict[str, Any]] = []
    try:
        wait_for(lambda: link.view is not None, "the link following the table")
        link.send({"command": "open", "by": "test"}, answers.append)
        _, command = router.take()
        envelope, withdraw = router.take()
        assert withdraw == {"command": "withdraw", "requests": [command["request_id"]]}
        assert not answers, "the screen was answered before the withdrawal was"
        router.answer(envelope, Withdrawn(
            {command["request_id"]: seq for seq in settled.carried_out.values()},
            [command["request_id"]] if settled.withdrawn else []))
        wait_for(lambda: answers, "the screen's answer")
        answer = answers[0]
        if told.pop("withdrawn", False):
            assert "withdrawn: it was not carried out" in answer["error"]
        assert told.items() <= answer.items()
    finally:
        link.stop()
        router.socket.close(0)
        rig.close()

"""The pit and surveillance screen: read-only, the last hands step by step with who played
each spot, alarms that stay until a supervisor acknowledges them (journaled by the table:
another console shows the same)."""

from __future__ import annotations

import json

from websockets.sync.client import connect

from controller.settings.scenario import load_scenario
from controller.stream import wire

from tests.support.console import (
    PIT_ACCOUNT,
    SUPERVISORS,
    Console,
    ScreenFactory,
    TableFactory,
    shot,
    write_configs,
)
from tests.support.rig import SCENARIOS
from tests.support.sign_in import sign_in as signed_in_cookie
from tests.support.supervisor_screen import sign_in
from tests.support.waits import wait_for


def test_the_pit_recalls_a_hand_step_by_step_and_acknowledges_alarms(table: TableFactory,
                                                                     screen: ScreenFactory) -> None:
    rig, console = table("three_card_lowball", pit=True)
    assert rig.ask({"command": "open"})["ok"]
    scenario = load_scenario(SCENARIOS / "tcl_prog_four_high_after_draw.json")
    rig.play(scenario)                     # places with player "p1", "p2"
    wait_for(lambda: rig.events("hand_settled"), "the settlement")
    for _ in range(5):
        rig.ask({"command": "void", "reason": "x", "credential": "a-guess"})
    wait_for(lambda: rig.events("alarm"), "the alarm")
    page = screen(console.url)
    sign_in(page, console.url, *PIT_ACCOUNT, then="/pit")    # the pit's account
    page.wait_for_url("**/pit")
    hand_id = rig.events("hand_settled")[0].hand_id
    # each hand's players, from its locked wagers (the records name them since version 3)
    players = page.wait_for_selector(f'[data-players="{hand_id}"]')
    assert players is not None
    assert players.inner_text().strip() == "\u2014 spot 1: p1, spot 2: p2"
    page.tap(f'[data-hand="{hand_id}"]')
    page.wait_for_selector("#recall:not([hidden])")
    assert "Players spot 1: p1, spot 2: p2" in page.inner_text("#recall-players")
    settled = page.locator('#recall-steps [data-step="wager_settled"]').all_inner_texts()
    assert settled and all(text.startswith(("spot 1 (p1) ", "spot 2 (p2) ")) for text in settled)
    dealt = [str(e.data.card) for e in rig.events("card_dealt")]
    shown = page.eval_on_selector_all("#recall-cards .mini", "n => n.map(x => x.dataset.card)")
    assert sorted(shown) == sorted(dealt) and len(dealt) == 12
    assert page.locator('#recall-steps [data-step="decision_made"]').count() == 2
    page.tap("#first")
    assert page.locator("#recall-steps li").count() == 0
    page.tap("#step")
    page.tap("#step")
    assert page.locator("#recall-steps li").count() == 2
    # the journal's chain as the table states it (its heartbeats), never read by the console
    verified = page.wait_for_selector("#journal.verified")
    assert verified is not None and "journal verified through seq" in verified.inner_text()
    alarm = page.wait_for_selector("#alarms li.open:has-text('credential_failures')")
    assert page.locator('[data-action="acknowledge"]').count() == 0   # nobody signed in
    shot(page, "pit")
    assert alarm is not None
    seq = alarm.get_attribute("data-alarm")
    assert seq is not None
    sign_in(page, console.url, "Alice", SUPERVISORS["Alice"], then="/pit")
    page.wait_for_url("**/pit")
    page.tap(f'[data-alarm="{seq}"] [data-action="acknowledge"]')
    page.wait_for_selector(f'[data-alarm="{seq}"]:has-text("acknowledged by Alice")')
    (journaled,) = rig.events("alarm_acknowledged")
    assert (journaled.data.seq, journaled.data.by) == (int(seq), "Alice")
    # A console started now rebuilds the alarms and who acknowledged them from the stream.
    second = Console(write_configs(rig.tmp_path, rig, pit=True))
    try:
        _, cookie = signed_in_cookie(second.url, *PIT_ACCOUNT)
        assert cookie
        with connect(second.url.replace("http://", "ws://") + "ws/pit",
                     additional_headers={"Cookie": cookie}) as socket:
            while (message := json.loads(socket.recv(timeout=10)))["type"] != "view":
                pass
        alarm = next(a for a in message["alarms"] if a["seq"] == int(seq))
        assert alarm["acknowledged_by"] == "Alice"
        assert alarm["acknowledged_at"] == wire.format_ts(journaled.ts)
    finally:
        second.close()


def test_the_pit_screen_gives_no_command(table: TableFactory) -> None:
    rig, console = table("cali_lowball", pit=True)
    _, cookie = signed_in_cookie(console.url, *PIT_ACCOUNT)
    assert cookie
    with connect(console.url.replace("http://", "ws://") + "ws/pit",
                 additional_headers={"Cookie": cookie}) as socket:
        socket.send(json.dumps({"type": "command", "id": "abcdefgh-1",
                                "command": {"command": "open"}}))
        while (message := json.loads(socket.recv(timeout=10)))["type"] != "error":
            pass
        assert "read-only" in message["error"]
        socket.send(json.dumps({"type": "acknowledge", "seq": 1}))
        while (message := json.loads(socket.recv(timeout=10)))["type"] != "error":
            pass
        assert "needs a supervisor signed in" in message["error"]
        socket.send(json.dumps({"type": "recall", "hand_id": "CALI-01-999999"}))
        while (message := json.loads(socket.recv(timeout=10)))["type"] != "error":
            pass
        assert "not among the last hands" in message["error"]
    assert rig.events("command_accepted") == []

"""``lowball-table demo --dealer human``: a person deals on the console while the terminal is
the card shoe (Enter deals a card), and the demo's supervisor signs in with the PIN it prints.
Before, the demo's simulated dealer could not be turned off, and it made a supervisor
credential it never showed."""

from __future__ import annotations

import json
import queue
import re
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import IO, Any

from controller.cli.demo import deal_by_hand
from controller.stream.command_client import CommandClient
from controller.stream.command_replies import Status

DEADLINE_S = 60.0


def lines_of(stream: IO[str]) -> queue.Queue[str]:
    """Each line of ``stream`` as it comes, read in a thread of its own."""
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in stream:
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    return lines


def line_with(lines: queue.Queue[str], text: str, seen: list[str]) -> str:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            break
        seen.append(line)
        if text in line:
            return line
    raise AssertionError(f"the demo never said {text!r}: {''.join(seen)}")


def state_of(client: CommandClient) -> dict[str, Any]:
    reply = client.ask({"command": "status"})
    assert isinstance(reply, Status)
    return reply.state


def test_a_person_deals_a_hand_with_the_terminal_as_the_shoe(tmp_path: Path) -> None:
    ends = {name: f"ipc://{tmp_path}/{name}" for name in (
        "events", "replay", "commands", "table-events", "table-replay", "cms-events",
        "cms-replay")}
    demo = subprocess.Popen(
        [sys.executable, "-m", "controller.cli.main", "demo", "--dealer", "human", "--hands",
         "1", "--seed", "7", "--state-dir", str(tmp_path / "state"), "--console-port", "0",
         *[f"--{name}={endpoint}" for name, endpoint in ends.items()]],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert demo.stdin is not None and demo.stderr is not None
    seen: list[str] = []
    try:
        lines = lines_of(demo.stderr)
        sign_in = line_with(lines, "a supervisor's sign-in", seen)
        found = re.search(r"(http://\S+)supervisor\s+\(touch Sam, PIN (\d{6});", sign_in)
        assert found is not None, sign_in
        url, pin = found.groups()
        line_with(lines, "this terminal is the card shoe", seen)
        # the PIN the demo printed signs its supervisor in on the console
        request = urllib.request.Request(
            f"{url}api/sign-in", method="POST", headers={"content-type": "application/json"},
            data=json.dumps({"name": "Sam", "credential": pin}).encode())
        with urllib.request.urlopen(request, timeout=DEADLINE_S) as answer:
            assert json.loads(answer.read())["ok"]
        # the person at the table: the console's commands, here from the command channel
        with CommandClient(ends["commands"], timeout_s=10.0) as client:
            for command in ({"command": "open"},
                            {"command": "seat_player", "spot": 2, "player": "4417"},
                            {"command": "place", "spot": 2, "wager": "ante", "amount": 1000},
                            {"command": "place", "spot": 2, "wager": "bonus", "amount": 1000},
                            {"command": "lock"}):
                assert client.ask({**command, "by": "a person"}).ok, command
            deadline = time.monotonic() + DEADLINE_S
            while (state := state_of(client))["hand"] is not None:
                assert time.monotonic() < deadline, state
                step = state["hand"]["next"]
                if step["kind"] == "decision":
                    assert client.ask({"command": "decide", "spot": 2, "decision": "stand",
                                       "by": "a person"}).ok
                    continue
                held = sum(len(cards) for cards in state["hand"]["cards"].values())
                demo.stdin.write("\n")        # Enter: the shoe deals the next card
                demo.stdin.flush()
                while (now := state_of(client))["hand"] is not None and \
                        sum(len(c) for c in now["hand"]["cards"].values()) == held:
                    assert time.monotonic() < deadline, now
                    time.sleep(0.02)
        line_with(lines, "demo stopped after 1 hands", seen)   # --hands 1: it stops itself
        assert demo.wait(DEADLINE_S) == 0, "".join(seen)
        assert not any("card" in line and re.search(r"\b[2-9TJQKA][shdc]\b", line)
                       for line in seen), "the shoe's terminal names no card"
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait(10)


def test_the_human_dealers_shoe_deals_a_card_per_enter_and_says_what_it_takes() -> None:
    class Shoe:
        dealt = 0

        def deal(self, count: int = 1) -> None:
            self.dealt += count

    shoe, stop = Shoe(), threading.Event()
    deal_by_hand(shoe, stop, iter(["\n", "3\n", "deal\n", "999\n", "\n", "q\n", "\n"]))
    assert shoe.dealt == 5 and stop.is_set()

"""The second outside attack on the finished daemon (issue 14): each test is an attack that
worked before its fix."""

from __future__ import annotations

import re

from tests.support.rig import RigFactory
from tests.support.waits import wait_for


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

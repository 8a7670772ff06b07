"""A linked table restarted while the floor is away takes progressive wagers (red team 5).

The link's status is a journaled input (``pool_link``), so a restart replays the last one:
``connected``. The daemon then gives the floor ``stale_after_ms`` to be heard from
(controller/daemon/pool_link.py: the start counts as a message) and, meanwhile, the table is
"connected" to a pool it has not heard from since before the power cut: it locks progressive
wagers against the meter it journaled before (the pool may have paid a jackpot, been locked,
reseeded or gone away since). docs/floor.md says a linked table "not yet heard from (just
started) takes no progressive"."""

from __future__ import annotations

import zmq

from controller.stream import pool_channel
from controller.stream.pool_channel import MeterMessage

from tests.support.pool import journal
from tests.support.pool_link import links, settings_of
from tests.support.processes import TableProcess, wait_until

POOL = "LINK-1"


def test_a_linked_table_restarted_with_the_floor_away_refuses_progressive(
        played_floor: tuple[zmq.Socket[bytes], TableProcess]) -> None:
    floor, table = played_floor
    meter = MeterMessage(pool_id=POOL, meter=777_700, entry=3, state="open", hits=(),
                         settings=settings_of(table))

    def heard() -> bool:
        floor.send_multipart(pool_channel.frames(meter))
        return bool(links(table)) and links(table)[-1][1] == "connected"
    wait_until(heard, "the link connected")
    wait_until(lambda: any(kind == "pool_meter" for _, kind, _ in journal(table)),
               "the pool's meter journaled")

    # a power cut; the floor does not come back with the table (a long stale window,
    # so that nothing here depends on how fast the machine is)
    table.kill()
    floor.close(0)
    text = table.config.read_text()
    table.config.write_text(text.replace("[progressive.link]\n",
                                         "[progressive.link]\nstale_after_ms = 60000\n"))
    table.start()
    for wager, amount in (("ante", 500), ("bonus", 500), ("progressive", 100)):
        assert table.ask({"command": "place", "spot": 1, "wager": wager,
                          "amount": amount})["ok"]
    lock = table.ask({"command": "lock"})
    assert not lock["ok"] and "pool link is down" in str(lock), (
        f"the table locked a progressive wager with no word from the pool since before "
        f"its restart: {lock}")

"""A linked table whose progressive is not the pool's is reconnected by any claim message
(red team 5).

The table refuses the link when a meter message's settings differ from its own (journals the
link lost: no progressive wager at lock). But a ``claimed`` message carries no settings, and
the daemon (controller/daemon/loop.py, handle_pool_messages) counts *every* parsed message,
a claim for another table's hit included, as the floor heard from and journals the link
connected. The floor sends, every second and after each commit, the meter and then one claim
per hit awaiting verification: while any table of the pool has a jackpot waiting for its
supervisor, a table with another seed, contribution or paytable is "connected" after every
heartbeat and locks progressive wagers it will pay by other rules than the pool's.

Here the test is the floor (a PUB socket on the table's ipc endpoint, no CURVE on ipc), with a
real table daemon on the simulators."""

from __future__ import annotations

import zmq

from controller.stream import pool_channel
from controller.stream.pool_channel import ClaimedMessage, MeterMessage

from tests.support.pool import journal
from tests.support.pool_link import settings_of, links
from tests.support.processes import TableProcess, wait_until


POOL = "LINK-1"


def test_a_claim_for_another_tables_hit_does_not_reconnect_a_refused_table(
        played_floor: tuple[zmq.Socket[bytes], TableProcess]) -> None:
    floor, table = played_floor
    other_seed = settings_of(table, seed=settings_of(table).seed + 1)
    mismatched = MeterMessage(pool_id=POOL, meter=600_000, entry=9, state="locked",
                              hits=(pool_channel.Hit(table_id="TCL-02", hand_id="TCL-02-1",
                                                     lock_order=1, paid=600_000),),
                              settings=other_seed)
    claim = ClaimedMessage(pool_id=POOL, table_id="TCL-02", hand_id="TCL-02-1",
                           lock_order=1, paid=600_000, share=600_000)

    def refused() -> bool:
        floor.send_multipart(pool_channel.frames(mismatched))
        return any(status == "lost" and "not the table's" in detail
                   for _, status, detail in links(table))
    wait_until(refused, "the link refused for the pool's other seed")

    # one heartbeat of the floor while TCL-02's jackpot awaits verification, then a
    # barrier: a meter with the table's own settings, which connects the link anyway
    floor.send_multipart(pool_channel.frames(claim))
    floor.send_multipart(pool_channel.frames(mismatched))
    barrier = mismatched.model_copy(update={"meter": 612_345, "settings": settings_of(table)})
    floor.send_multipart(pool_channel.frames(barrier))
    wait_until(lambda: any(kind == "pool_meter" and data["meter"] == 612_345
                           for _, kind, data in journal(table)), "the barrier")
    first_lost = next(seq for seq, status, detail in links(table) if status == "lost")
    connected = [(seq, detail) for seq, status, detail in links(table)
                 if status == "connected" and seq > first_lost]
    assert len(connected) == 1, (
        f"the link refused for the pool's settings was journaled connected "
        f"{len(connected)} times before the pool's settings matched: {connected}")

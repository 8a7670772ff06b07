"""A hostile floor floods a linked table with claims that do not add up, each one different
(red team 7).

The table journals a claim of its pending jackpot that does not add up as received (and does
not take it); it remembered only the last bad claim, so a floor varying the amount grew the
table's journal a record a message. Now the first bad claim of a hand in a window is journaled
in full and the rest are counted in one ``refusals_counted``, journaled when the window passes
or the hand's claim is taken. A real table daemon on the simulators; the floor is a PUB socket
on the table's ipc endpoint (as in test_pool_settings_bypass)."""

from __future__ import annotations

from pathlib import Path

import zmq

from controller.stream import pool_channel
from controller.stream.pool_channel import ClaimedMessage, MeterMessage

from tests.support.pool import STALE_AFTER_MS, journal, link_up
from tests.support.pool_link import settings_of
from tests.support.processes import PoolDealer, TableProcess, wait_until

POOL = "LINK-1"
FLOOD = 3000


def test_a_flood_of_different_bad_claims_costs_the_journal_two_records(tmp_path: Path) -> None:
    endpoint = f"ipc://{tmp_path}/pool"
    context = zmq.Context()
    floor = context.socket(zmq.PUB)
    floor.setsockopt(zmq.LINGER, 0)
    floor.setsockopt(zmq.SNDHWM, 0)  # the whole flood reaches the table: none dropped here
    floor.bind(endpoint)
    table = None
    try:
        table = TableProcess("TCL-01", link=(POOL, endpoint), stale_after_ms=STALE_AFTER_MS)
        meter = MeterMessage(pool_id=POOL, meter=500_000, entry=1, state="open", hits=(),
                             settings=settings_of(table))

        def connected() -> bool:
            floor.send_multipart(pool_channel.frames(meter))
            return link_up(table)
        wait_until(connected, "the table hears the pool")
        dealer = PoolDealer(table, {1: "P-1"})
        dealer.jackpot_next()
        dealer.hand()
        (pending,) = [data for _, kind, data in journal(table) if kind == "jackpot_pending"]
        hand, seats = pending["hand_id"], len(pending["seats"])
        before = len(journal(table))

        share = 400_000
        for number in range(FLOOD):              # every one different, none adds up
            floor.send_multipart(pool_channel.frames(ClaimedMessage(
                pool_id=POOL, table_id="TCL-01", hand_id=hand, lock_order=1,
                paid=share * seats + 1 + number, share=share)))
            if number == FLOOD // 2:             # the table still serves its commands
                assert table.ask({"command": "status"})["ok"]
        good = ClaimedMessage(pool_id=POOL, table_id="TCL-01", hand_id=hand, lock_order=1,
                              paid=share * seats, share=share)

        def taken() -> bool:
            # (sent again until taken, as the floor repeats a claim: the table's queue of pool
            # messages is bounded, and a busy machine may have let it fill with the flood)
            floor.send_multipart(pool_channel.frames(good))
            return any(kind == "jackpot_claimed" and data["paid"] == good.paid
                       for _, kind, data in journal(table))
        wait_until(taken, "the good claim taken")
        grown = journal(table)[before:]
    finally:
        if table is not None:
            table.close()
        floor.close(0)
        context.term()
    claims = [data["paid"] for _, kind, data in grown if kind == "jackpot_claimed"]
    counted = [data for _, kind, data in grown if kind == "refusals_counted"]
    bad = claims[:-1]
    assert claims[-1] == good.paid and bad[0] == share * seats + 1
    # every bad claim the table received is journaled or counted (the flood outruns the
    # table's bounded queue on a busy machine: ZeroMQ drops the rest before the table sees them)
    assert 1 <= len(bad) + sum(count["count"] for count in counted) <= FLOOD, (bad, counted)
    # one window, journaled in full and counted (two only if the flood outlasted a minute)
    assert len(bad) == len(counted) <= 2, (bad, counted)
    assert {count["client"] for count in counted} == {f"pool {POOL} claim of {hand}"}
    assert {count["last_command"] for count in counted} == {"jackpot_claimed"}
    assert len(grown) <= 10, [kind for _, kind, _ in grown]

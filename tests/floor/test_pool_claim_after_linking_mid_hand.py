"""Red team 6: a table flips its journaled settings in the middle of a hand to claim a pool it
never contributed to (controller/floor/pool.py ``apply`` reads the link at the claim only)."""

from __future__ import annotations

import psycopg

from controller.floor import pool

from tests.support.ledger import SEED, Tables, ledger, linked


def test_a_hand_dealt_unlinked_cannot_claim_the_pool_by_linking_before_its_claim(
        connection: psycopg.Connection) -> None:  # noqa: F811
    pool.configure(connection, [linked()])
    tables = Tables(connection, link=None)          # its meter is its own
    hand = "TCL-01-000001"
    tables.event("TCL-01", "hand_started", hand, hand_id=hand, game="three_card_lowball",
                 paytable="paytable-1", number=1)
    tables.event("TCL-01", "meter_contributed", hand, before=0, contribution=20, after=0)
    tables.jackpot_dealt("TCL-01", hand, (1,))
    tables.configured("TCL-01", "LINK-1")           # linked between the deal and the claim
    tables.event("TCL-01", "hand_settled", hand)
    tables.event("TCL-01", "jackpot_pending", hand, hand_id=hand, seats=[1], amount=0)
    tables.store()
    pool.apply(connection, "LINK-1")
    paid = [row for row in ledger(connection) if row[0] == "jackpot"]
    assert paid == [], f"the pool paid {paid} for a hand dealt while the table was not linked"

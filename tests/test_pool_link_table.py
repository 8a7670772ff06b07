"""A table linked to the floor's pool, in the pure core: the pool's meter is the table's, the
link down refuses progressive wagers at lock (naming each spot, the spots' lamps saying so)
while ante and bonus deal on, the jackpot waits for the pool's claim, the meter is not the
table's to adjust, and a replay of the journaled inputs rebuilds the same link state."""

from controller.core.table_events import (
    CommandAccepted,
    CommandRefused,
    JackpotClaimed,
    LampSet,
    LockRefused,
    PoolHit,
    PoolMeter,
)
from controller.settings.table_config import (
    PoolLinkSettings,
    TableProgressive,
    build_table,
    default_config_path,
    load_config,
)
from tests.test_table import Driver

POOL = "LINK-1"


def linked_driver() -> Driver:
    loaded = load_config(default_config_path("three_card_lowball"))
    link = PoolLinkSettings(pool=POOL, endpoint="ipc:///tmp/lowball-pool")
    config = loaded.config.model_copy(update={"progressive": TableProgressive(link=link)})
    driver = Driver(loaded=loaded.model_copy(update={"config": config}))
    driver.do(command="open")
    return driver


def place(driver: Driver, spot: int, progressive: bool = True) -> None:
    wagers = [("ante", 1000), ("bonus", 1000)] + ([("progressive", 100)] if progressive else [])
    for wager, amount in wagers:
        assert type(driver.do(command="place", spot=spot, wager=wager, amount=amount)[0]) \
            is CommandAccepted


def test_the_link_down_refuses_progressive_at_lock_naming_each_spot_and_ante_deals_on():
    d = linked_driver()
    assert d.table.pool == POOL and d.table.progressive_closed()   # not heard from yet
    d.record(d.table.pool_link_status(POOL, "lost", "no message for 3000 ms"))
    assert set(d.table.lamps.values()) == {"progressive_closed"}
    place(d, 1)
    place(d, 3)
    refused = d.do(command="lock")
    assert refused[1] == LockRefused(("spot 1: the pool link is down: no progressive wagers",
                                      "spot 3: the pool link is down: no progressive wagers"))
    assert LampSet(1, "progressive_closed") in refused and d.table.state == "OPEN"
    for spot in (1, 3):
        d.do(command="cancel", spot=spot, wager="progressive")
    assert type(d.do(command="lock")[0]) is CommandAccepted          # ante and bonus deal on
    assert d.table.state == "LOCKED"


def test_the_link_back_takes_progressive_with_the_pools_meter_and_lamps_reopen():
    d = linked_driver()
    d.record(d.table.pool_link_status(POOL, "lost", "silent"))
    place(d, 2)
    back = d.record(d.table.pool_link_status(POOL, "connected", ""))
    assert LampSet(1, "attract") in back and d.table.lamps[2] == "wager_accepted"
    assert "progressive_closed" not in d.table.lamps.values()
    d.record(d.table.pool_meter(POOL, 1_234_567, "open", ()))
    assert d.table.meter == 1_234_567
    d.do(command="lock")
    assert d.table.hand.meter_before == 1_234_567             # the hand locks with the pool's
    assert type(d.do(role="supervisor", command="adjust_meter", amount=100,
                     reason="test")[0]) is CommandRefused


def jackpot(d: Driver) -> None:
    d.record(d.table.pool_link_status(POOL, "connected", ""))
    d.record(d.table.pool_meter(POOL, 800_000, "open", ()))
    place(d, 1)
    d.do(command="lock")
    d.cards("4h 4c 2d 2h As Ac")
    d.do(command="decide", spot=1, decision="stand")
    assert d.table.jackpot is not None


def test_verification_waits_for_the_pools_claim_and_a_replay_rebuilds_it():
    d = linked_driver()
    jackpot(d)
    hand = d.table.jackpot.hand_id
    refused = d.do(role="supervisor", command="verify_jackpot")
    assert type(refused[0]) is CommandRefused and "not claimed by pool LINK-1" in refused[0].reason
    hit = PoolHit(d.table.table_id, hand, 1, 800_020)
    d.record(d.table.pool_meter(POOL, 20, "locked", (hit,)))
    assert d.table.awaits_claim(hand) and not d.table.awaits_claim("other")
    claimed = d.record(d.table.jackpot_claimed(POOL, hand, 1, 800_020, 800_020))
    assert claimed == [JackpotClaimed(POOL, hand, 1, 800_020, 800_020)]
    assert not d.table.awaits_claim(hand)
    assert d.table.snapshot()["jackpot_pending"]["amount"] == 800_020

    rebuilt = build_table(load_config(default_config_path("three_card_lowball")))
    rebuilt.replay(d.events)
    assert rebuilt.snapshot() == d.table.snapshot()
    assert rebuilt.pool_link == "connected" and rebuilt.pool_shown == PoolMeter(
        POOL, 20, "locked", (hit,))
    assert rebuilt.jackpot.claimed == d.table.jackpot.claimed

    assert type(d.do(role="supervisor", command="verify_jackpot")[0]) is CommandAccepted
    assert d.table.jackpot is None and d.table.meter == 20

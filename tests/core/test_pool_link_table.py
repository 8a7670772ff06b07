"""A table linked to the floor's pool, in the pure core: the pool's meter is the table's, the
link down refuses progressive wagers at lock (naming each spot, the spots' lamps saying so)
while ante and bonus deal on, the jackpot waits for the pool's claim, the meter is not the
table's to adjust, and a replay of the journaled inputs rebuilds the same link state. Its
config and the pool channel's messages are bounded where parsed, each refusal naming what was
wrong."""

from pathlib import Path

import pytest

from controller.core.games import ThreeCardLowballHand
from controller.core.table_events import (
    CommandAccepted,
    CommandRefused,
    JackpotClaimed,
    LampSet,
    LockRefused,
    PoolHit,
    PoolMeter,
)
from controller.core.vocabulary import PoolState, SpotLamp
from controller.settings.table_config import build_table, default_config_path, load_config
from controller.settings.validation import InputError
from controller.stream import pool_channel

from tests.support.config_files import edit
from tests.support.pool_link import POOL, linked_driver, place, jackpot, LINK


def test_the_link_down_refuses_progressive_at_lock_naming_each_spot_and_ante_deals_on() -> None:
    d = linked_driver()
    assert d.table.pool == POOL and d.table.progressive_closed()   # not heard from yet
    d.record(d.table.pool_link_status(POOL, "lost", "no message for 3000 ms"))
    assert set(d.table.lamps.values()) == {"progressive_closed"}
    place(d, 1)
    place(d, 3)
    refused = d.do(command="lock")
    assert refused[1] == LockRefused(("spot 1: the pool link is down: no progressive wagers",
                                      "spot 3: the pool link is down: no progressive wagers"))
    assert LampSet(1, SpotLamp.PROGRESSIVE_CLOSED) in refused and d.table.state == "OPEN"
    for spot in (1, 3):
        d.do(command="cancel", spot=spot, wager="progressive")
    assert type(d.do(command="lock")[0]) is CommandAccepted          # ante and bonus deal on
    assert d.table.state == "LOCKED"


def test_the_link_back_takes_progressive_with_the_pools_meter_and_lamps_reopen() -> None:
    d = linked_driver()
    d.record(d.table.pool_link_status(POOL, "lost", "silent"))
    place(d, 2)
    back = d.record(d.table.pool_link_status(POOL, "connected", ""))
    assert LampSet(1, SpotLamp.ATTRACT) in back and d.table.lamps[2] == "wager_accepted"
    assert "progressive_closed" not in d.table.lamps.values()
    d.record(d.table.pool_meter(POOL, 1_234_567, "open", ()))
    assert d.table.meter == 1_234_567
    d.do(command="lock")
    assert isinstance(d.table.hand, ThreeCardLowballHand)
    assert d.table.hand.meter_before == 1_234_567             # the hand locks with the pool's
    assert type(d.do(role="supervisor", command="adjust_meter", amount=100,
                     reason="test")[0]) is CommandRefused


def test_verification_waits_for_the_pools_claim_and_a_replay_rebuilds_it() -> None:
    d = linked_driver()
    jackpot(d)
    assert d.table.jackpot is not None
    hand = d.table.jackpot.hand_id
    refused = d.do(role="supervisor", command="verify_jackpot")
    assert type(refused[0]) is CommandRefused and "not claimed by pool LINK-1" in refused[0].reason
    hit = PoolHit(d.table.table_id, hand, 1, 800_020)
    d.record(d.table.pool_meter(POOL, 20, PoolState.LOCKED, (hit,)))
    assert d.table.awaits_claim(hand) and not d.table.awaits_claim("other")
    claimed = d.record(d.table.jackpot_claimed(POOL, hand, 1, 800_020, 800_020))
    assert claimed == [JackpotClaimed(POOL, hand, 1, 800_020, 800_020)]
    assert not d.table.awaits_claim(hand)
    assert d.table.snapshot()["jackpot_pending"]["amount"] == 800_020

    rebuilt = build_table(load_config(default_config_path("three_card_lowball")))
    rebuilt.replay(d.events)
    assert rebuilt.snapshot() == d.table.snapshot()
    assert rebuilt.pool_link == "connected" and rebuilt.pool_shown == PoolMeter(
        POOL, 20, PoolState.LOCKED, (hit,))
    assert rebuilt.jackpot is not None and d.table.jackpot is not None
    assert rebuilt.jackpot.claimed == d.table.jackpot.claimed

    assert type(d.do(role="supervisor", command="verify_jackpot")[0]) is CommandAccepted
    assert d.table.jackpot is None and d.table.meter == 20


def test_a_claim_that_does_not_add_up_is_not_taken_and_verification_waits() -> None:
    d = linked_driver()
    jackpot(d)
    assert d.table.jackpot is not None
    hand = d.table.jackpot.hand_id
    for paid, share in ((800_020, 400_010), (0, 0), (800_021, 800_020)):
        d.record(d.table.jackpot_claimed(POOL, hand, 1, paid, share))  # one seat won
        assert d.table.awaits_claim(hand)
    refused = d.do(role="supervisor", command="verify_jackpot")
    assert type(refused[0]) is CommandRefused and "not claimed" in refused[0].reason
    d.record(d.table.jackpot_claimed(POOL, hand, 1, 800_020, 800_020))
    assert type(d.do(role="supervisor", command="verify_jackpot")[0]) is CommandAccepted


@pytest.mark.parametrize("link, says", [
    ('pool = "LINK 1"\nendpoint = "ipc:///tmp/pool"', "progressive.link.pool: String should match"),
    ('pool = "LINK-1"\nendpoint = "http://floor:80"', "progressive.link.endpoint: String should"),
    ('pool = "LINK-1"\nendpoint = "ipc:///tmp/pool"\nstale_after_ms = 100',
     "progressive.link.stale_after_ms: Input should be greater than or equal to 1500"),
    ('pool = "LINK-1"\nendpoint = "ipc:///tmp/pool"\nstale_after_ms = "3000"',
     "progressive.link.stale_after_ms: Input should be a valid integer"),
    ('pool = "LINK-1"\nendpoint = "tcp://10.0.0.5:7000"',
     "without the floor's CURVE key (server_key_file) the pool channel is on loopback"),
    ('pool = "LINK-1"\nendpoint = "tcp://10.0.0.5:7000"\nserver_key_file = "floor.key"',
     "progressive.link.server_key_file needs [security] server_secret_key_file"),
    ('pool = "LINK-1"\nendpoint = "ipc:///tmp/pool"\npoll = 1', "progressive.link.poll: unknown"),
])
def test_a_bad_link_config_names_the_key(table_dir: Path, link: str,  # noqa: F811 - the fixture
                                         says: str) -> None:
    edit(table_dir / "three-card-lowball.toml", LINK, f"[progressive.link]\n{link}\n\n{LINK}")
    with pytest.raises(InputError) as caught:
        load_config(table_dir / "three-card-lowball.toml")
    assert says in str(caught.value)


def test_a_linked_tables_settings_name_the_pool_not_how_to_reach_it(  # noqa: F811
        table_dir: Path) -> None:
    path = table_dir / "three-card-lowball.toml"
    unlinked = build_table(load_config(path)).settings
    edit(path, LINK, f'[progressive.link]\npool = "LINK-1"\nendpoint = "ipc:///tmp/a"\n\n{LINK}')
    linked = build_table(load_config(path)).settings
    assert linked.setup.progressive.pool == "LINK-1" and unlinked.setup.progressive.pool is None
    assert '"pool":"LINK-1"' in linked.text and "ipc://" not in linked.text
    assert '"pool"' not in unlinked.text     # an unlinked table's fingerprint is unchanged


@pytest.mark.parametrize("parts, says", [
    ([b"pool.LINK-1.meter"], "a pool message is 2 frames"),
    ([b"pool.LINK-2.meter", b"{}"], "is not one of pool LINK-1's"),
    ([b"pool.LINK-1.meter", b"[1"], "Invalid JSON"),
    ([b"pool.LINK-1.meter", b'{"pool_id":"LINK-1","meter":-5,"entry":1,"state":"open",'
                            b'"hits":[],"settings":{"wager":100,"seed":1,"contribution":20,'
                            b'"awards":{}}}'], "meter: Input should be greater than or equal"),
    ([b"pool.LINK-1.meter", b'{"pool_id":"LINK-1","meter":5.5,"entry":1,"state":"open",'
                            b'"hits":[],"settings":{"wager":100,"seed":1,"contribution":20,'
                            b'"awards":{}}}'], "meter: Input should be a valid integer"),
    ([b"pool.LINK-1.claimed", b'{"pool_id":"LINK-9","table_id":"T","hand_id":"h",'
                              b'"lock_order":1,"paid":1,"share":1}'], "pool_id: 'LINK-9'"),
    ([b"pool.LINK-1.claimed", b'{"pool_id":"LINK-1","table_id":"T","hand_id":"h",'
                              b'"lock_order":0,"paid":1,"share":1,"role":"supervisor"}'],
     "lock_order: Input should be greater than or equal to 1"),
    ([b"pool.LINK-1.meter", b" " * (pool_channel.MAX_MESSAGE_BYTES + 1)], "bytes (at most"),
])
def test_a_pool_message_is_refused_naming_what_is_wrong(parts: list[bytes], says: str) -> None:
    with pytest.raises(pool_channel.PoolChannelError) as caught:
        pool_channel.parse(POOL, parts)
    assert says in str(caught.value)

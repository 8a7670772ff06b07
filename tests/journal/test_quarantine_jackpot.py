"""A journal that breaks while a jackpot awaits a supervisor's verification (the hand settled,
the hand-pay not yet verified). Quarantine once started the new journal with the meter and
nothing else: the pending jackpot vanished (the table opened on a supervisor's word about the
meter, the hand-pay never verified and the seed never put back). The new journal now carries
it: the table holds it pending as before, and it is verified once."""

from __future__ import annotations

from pathlib import Path

import pytest
import zmq

from controller.cli.main import main
from controller.core.cards import parse_card
from controller.core.money import format_cents
from controller.core.table_events import (
    CarriedJackpot,
    CommandAccepted,
    JackpotClaimed,
    JournalContinued,
)
from controller.core.vocabulary import Device, DeviceCondition
from controller.daemon.journal_quarantine import quarantine
from controller.settings.table_config import (
    PoolLinkSettings,
    TableProgressive,
    default_config_path,
    load_config,
)
from controller.stream import wire
from controller.stream.journal import Journal, journal_path

from tests.support.daemon import run_config
from tests.support.daemon import Daemon
from tests.support.journal_files import damage_last_record
from tests.support.pool_link import POOL, jackpot, linked_driver
from tests.support.table import Driver


def hit_the_jackpot(table: Daemon) -> None:
    """Two carded players on the progressive; the cards give both seats the jackpot."""
    assert table.ask(command="open")["ok"]
    for spot, player in ((1, "P-1"), (2, "P-2")):
        for wager, amount in (("ante", 1000), ("bonus", 1000), ("progressive", 100)):
            assert table.ask(command="place", spot=spot, wager=wager, amount=amount,
                             player=player)["ok"]
    assert table.ask(command="lock")["ok"]
    daemon = table.daemon
    for count, card in enumerate("4h 4c 4d 2d 2h 2c As Ac Ad".split(), 1):
        daemon.apply(daemon.table.shoe_card(parse_card(card), count, "", count))
    for spot in (1, 2):
        assert table.ask(command="decide", spot=spot, decision="stand")["ok"]


def test_a_jackpot_awaiting_verification_is_carried_and_verified_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, state, context = run_config(tmp_path), tmp_path / "state", zmq.Context()
    try:
        table = Daemon(tmp_path, path, context)
        table.daemon.start()
        try:
            hit_the_jackpot(table)
            pending = table.daemon.table.jackpot
            assert pending is not None and pending.seats == (1, 2)
            carried = CarriedJackpot(pending.hand_id, pending.seats, pending.amount,
                                     pending.meter_after_reset)
            meter_before = table.daemon.table.meter
            table.daemon.apply(table.daemon.table.device_status(
                Device.SHOE, DeviceCondition.CONNECTED, ""))
        finally:
            table.daemon.close()
        damage_last_record(state)
        assert main(["journal", "quarantine", "--state-dir", str(state), "--reason",
                     "disk damage found at start", "--by", "sam"]) == 0
        assert f"the jackpot of hand {carried.hand_id} ({format_cents(carried.amount)} to " \
               f"seat(s) 1, 2) awaited verification: carried" in capsys.readouterr().out
        with Journal.open_readonly(journal_path(state)) as journal:
            [record] = [wire.to_event(wire.decode_event(r.message)) for r in journal.records()]
        assert record.pending_jackpots == (carried,) and record.meter == meter_before

        table = Daemon(tmp_path, path, context)
        table.daemon.start()
        try:
            status = table.daemon.table.snapshot()
            assert status["jackpot_pending"]["hand_id"] == carried.hand_id
            refused = table.ask(command="open")
            assert not refused["ok"] and "awaits a supervisor's verification" in refused["error"]
            assert table.ask(command="verify_jackpot", supervisor=True)["ok"]
            again = table.ask(command="verify_jackpot", supervisor=True)
            assert again == {"ok": False, "error": "no jackpot awaits verification",
                             "seq": again["seq"]}
            assert table.daemon.table.meter == carried.meter_after_reset   # the seed put back
            # The meter carried over still waits for a supervisor's word.
            assert "confirms it" in table.ask(command="open")["error"]
            assert table.ask(command="adjust_meter", amount=0, reason="sign checked",
                             supervisor=True)["ok"]
            assert table.ask(command="open")["ok"]
        finally:
            table.daemon.close()
        table = Daemon(tmp_path, path, context)          # the verification is journaled
        table.daemon.start()
        try:
            assert table.daemon.table.jackpot is None
            assert table.daemon.table.meter == carried.meter_after_reset
        finally:
            table.daemon.close()
    finally:
        context.term()


def test_a_linked_tables_pending_jackpot_is_carried_with_the_pools_claim(tmp_path: Path) -> None:
    """On a linked table the hand-pay is the pool's: its claim is carried after the jackpot,
    so the supervisor verifies what the pool pays, without waiting for a claim the floor
    already made."""
    d = linked_driver()
    jackpot(d)
    assert d.table.jackpot is not None
    hand = d.table.jackpot.hand_id
    d.record(d.table.jackpot_claimed(POOL, hand, 1, 800_020, 800_020))
    d.record(d.table.device_status(Device.SHOE, DeviceCondition.CONNECTED, ""))
    with Journal(journal_path(tmp_path)) as journal:
        for event in d.events:
            journal.append(event, table_id=d.table.table_id, hand_id=None)
    damage_last_record(tmp_path)
    done = quarantine(tmp_path, "disk damage found at start", by="sam")
    assert [carried.hand_id for carried in done.record.pending_jackpots] == [hand]
    assert done.claimed == JackpotClaimed(POOL, hand, 1, 800_020, 800_020)

    with Journal.open_readonly(journal_path(tmp_path)) as journal:
        events = [wire.to_event(wire.decode_event(r.message)) for r in journal.records()]
    assert [type(event) for event in events] == [JournalContinued, JackpotClaimed]
    loaded = load_config(default_config_path("three_card_lowball"))
    link = TableProgressive(link=PoolLinkSettings(pool=POOL, endpoint="ipc:///tmp/pool"))
    rebuilt = Driver(loaded=loaded.model_copy(update={"config": loaded.config.model_copy(
        update={"progressive": link})}))                # the daemon's start, on that journal
    rebuilt.table.replay(events)
    assert rebuilt.table.jackpot is not None
    assert rebuilt.table.jackpot.claimed == done.claimed
    assert type(rebuilt.do(role="supervisor", command="verify_jackpot")[0]) is CommandAccepted

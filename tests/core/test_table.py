"""The table state machine: procedure, lock validation, faults and their ways out, the
jackpot hold, sensors, and rebuilding the table from its journaled inputs."""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from controller.core.cards import parse_card
from controller.core.events import ProgressiveAwarded, WagerSettled
from controller.core.games import IllegalAction as IllegalActionError, WagerError
from controller.core.table import AnyEvent, Table
from controller.core.table_events import (
    CommandAccepted,
    CommandRefused,
    Fault,
    HandVoided,
    JackpotPending,
    LampSet,
    LockRefused,
    MeterChanged,
    StateChanged,
)
from controller.core.vocabulary import Device, DeviceCondition, FaultCode, ShoeFaultCode, SpotLamp
from controller.settings.table_config import build_table, default_config_path, load_config
from controller.settings.validation import InputError
from controller.stream.table_commands import parse_command

from tests.support.table import Driver, cali_hand


SCENARIOS = Path(__file__).resolve().parents[1] / "data" / "scenarios"


def test_a_cali_hand_from_open_to_settled() -> None:
    d = Driver()
    cali_hand(d)
    d.cards("As 9c Kd 2s 9d Qh")
    assert d.table.state == "DECIDING"
    assert d.table.expecting() == "decision from spots 1, 2: raise or check"
    d.do(command="decide", spot=1, decision="raise")
    d.do(command="decide", spot=2, decision="check")
    d.cards("3c 4d 5h")
    d.do(command="decide", spot=2, decision="fold")
    assert d.states() == ["OPEN", "LOCKED", "DEALING", "DECIDING", "DEALING", "DECIDING",
                          "SETTLED"]
    settled = {(s.seat, s.wager): s.net for s in d.table.last_settlement}
    assert settled == {(1, "ante"): 1000, (1, "xtra_bonus"): 50_000, (1, "raise"): 3000,
                       (2, "ante"): -1000, (2, "xtra_bonus"): -1000}
    lamps = [(e.spot, e.lamp) for e in d.events if type(e) is LampSet][-2:]
    assert lamps == [(1, "win"), (2, "lose")]
    # The next hand's betting opens the table again.
    d.do(command="place", spot=1, wager="ante", amount=500)
    assert d.table.state == "OPEN"


@pytest.mark.parametrize("game, wager, amount, says", [
    ("cali_lowball", "ante", 100, "spot 1: ante $1.00 is outside the table limits $5.00 to $1,000.00"),
    ("cali_lowball", "xtra_bonus", 100_001, "spot 1: xtra_bonus $1,000.01 is outside the table"),
    ("cali_lowball", "lowdown_bonus", 20000, "spot 1: lowdown_bonus $200.00 is over the "
                                             "limit $100.00"),
    ("cali_lowball", "ante", 10**12, "spot 1: ante $10,000,000,000.00 is outside the table"),
    ("three_card_lowball", "bonus", 10**9, "spot 1: bonus $10,000,000.00 is outside the table"),
    ("three_card_lowball", "progressive", 500, "spot 1: the progressive wager is $1.00, "
                                               "not $5.00"),
])
def test_place_refuses_an_amount_outside_the_limits_at_once(game: str, wager: str, amount: int,
                                                            says: str) -> None:
    """Found by the red team: ``place`` took 10**30 cents (journaled and published), and only
    ``lock`` refused it."""
    d = Driver(game)
    d.do(command="open")
    (refused,) = d.do(command="place", spot=1, wager=wager, amount=amount)
    assert type(refused) is CommandRefused and refused.reason.startswith(says), refused
    assert d.table.snapshot()["layout"] == {}


def test_place_refuses_an_amount_past_any_table_at_parse() -> None:
    with pytest.raises(InputError, match=r"amount \(in cents\): at most 1000000000000 cents \(\$10,000,000,000.00\)"):
        parse_command({"command": "place", "spot": 1, "wager": "ante", "amount": 10**30})


@pytest.mark.parametrize("wagers, says", [
    ({1: {"ante": 1000, "xtra_bonus": 500}}, "spot 1: Ante $10.00 and X-Tra Bonus $5.00 must "
                                             "be equal"),
    ({1: {"xtra_bonus": 1000}}, "spot 1: the Ante wager is required"),
    ({}, "no wagers on the layout"),
])
def test_lock_refusals_name_the_spot(wagers: dict[int, dict[str, int]], says: str) -> None:
    d = Driver()
    d.do(command="open")
    for spot, amounts in wagers.items():
        for wager, amount in amounts.items():
            d.do(command="place", spot=spot, wager=wager, amount=amount)
    (refused,) = d.do(command="lock")[1:]
    assert type(refused) is LockRefused and any(says in p for p in refused.problems)
    assert d.table.state == "OPEN" and d.table.hand is None


def test_at_most_four_spots_per_player() -> None:
    d = Driver()
    d.do(command="open")
    for spot in range(1, 6):
        d.do(command="place", spot=spot, wager="ante", amount=1000, player="P7")
        d.do(command="place", spot=spot, wager="xtra_bonus", amount=1000)
    (refused,) = d.do(command="lock")[1:]
    assert refused.problems == ("spot 5: player 'P7' wagers on 5 spots (1, 2, 3, 4, 5); "
                                "at most 4",)
    d.do(command="cancel", spot=5, wager="ante")
    d.do(command="cancel", spot=5, wager="xtra_bonus")
    assert type(d.do(command="lock")[0]) is CommandAccepted and d.table.state == "LOCKED"


@pytest.mark.parametrize("command, says", [
    ({"command": "lock"}, "wagers lock only while the table is OPEN (it is CLOSED)"),
    ({"command": "place", "spot": 1, "wager": "ante", "amount": 5},
     "wagers are taken only while the table is OPEN (it is CLOSED)"),
    ({"command": "continue"}, "nothing to continue: the table is CLOSED"),
    ({"command": "verify_jackpot"}, "needs the supervisor credential"),
    ({"command": "void", "reason": "x"}, "needs the supervisor credential"),
])
def test_commands_refused_with_the_reason(command: dict[str, Any], says: str) -> None:
    (refused,) = Driver().do(**command)
    assert type(refused) is CommandRefused and says in refused.reason


def test_wager_keys_and_spots_are_checked() -> None:
    d = Driver()
    d.do(command="open")
    (refused,) = d.do(command="place", spot=1, wager="bonus", amount=500)
    assert "'bonus' is not a cali_lowball wager" in refused.reason


def test_duplicate_card_pauses_until_a_supervisor_voids() -> None:
    d = Driver("three_card_lowball")
    d.do(command="open")
    d.do(command="place", spot=3, wager="ante", amount=1000)
    d.do(command="place", spot=3, wager="bonus", amount=1000)
    d.do(command="place", spot=3, wager="progressive", amount=100)
    d.do(command="lock")
    meter_after_lock = d.table.meter
    d.cards("4h 9c")
    events = d.card("4h")
    assert [type(e).__name__ for e in events] == ["ShoeCard", "Fault", "StateChanged"]
    assert events[1] == Fault(FaultCode.DUPLICATE_CARD, "a card came out of the shoe a second time: card 4h, "
                              "already dealt to spot 3",
                              Device.SHOE, False)
    assert d.table.state == "PAUSED"
    (refused,) = d.do(command="continue")
    assert "this is a misdeal: only a supervisor can void" in refused.reason
    voided = d.do(role="supervisor", command="void", reason="misdeal")
    (void,) = [e for e in voided if type(e) is HandVoided]
    assert {(w.seat, w.wager, w.amount) for w in void.returned} == \
        {(3, "ante", 1000), (3, "bonus", 1000), (3, "progressive", 100)}
    assert void.contributions_reversed == 20
    assert d.table.meter == meter_after_lock - 20 == 500_000
    assert d.table.state == "OPEN" and d.table.hand is None


def test_shoe_jam_pauses_and_the_dealer_continues() -> None:
    d = Driver()
    cali_hand(d)
    d.cards("As 9c")
    events = d.table.shoe_fault(ShoeFaultCode.JAM, "card stuck")
    assert events[1] == Fault(FaultCode.SHOE_JAM, "the shoe is jammed (the shoe reported JAM)",
                             Device.SHOE, True)
    assert d.table.state == "PAUSED"
    d.record(events)
    assert "clear it, then continue" in d.table.expecting()
    d.do(command="continue")
    assert d.table.state == "DEALING"
    d.cards("Kd 2s 9d Kh")
    assert d.table.state == "DECIDING"


def test_a_card_in_flight_when_the_shoe_is_lost_is_dealt_and_the_hand_stays_paused() -> None:
    d = Driver()
    cali_hand(d)
    d.record(d.table.device_status(Device.SHOE, DeviceCondition.LOST, "no frame for 3 s"))
    assert d.table.fault is not None
    assert d.table.fault.code == "device_lost" and d.table.fault.recoverable
    events = d.card("As")                     # resent by the shoe after the replug
    assert [type(e).__name__ for e in events] == ["ShoeCard", "CardDealt"]
    assert events[0].during_pause                 # marked for surveillance
    assert d.table.hand is not None
    assert d.table.state == "PAUSED" and d.table.hand.cards[1] == [parse_card("As")]
    d.record(d.table.device_status(Device.SHOE, DeviceCondition.CONNECTED, "/dev/ttyUSB0"))
    d.do(command="continue")
    assert d.table.state == "DEALING"


def test_a_card_nobody_expects_during_a_pause_is_a_misdeal() -> None:
    d = Driver()
    cali_hand(d)
    d.cards("As 9c Kd 2s 9d Qh")               # decisions are due: no card is expected
    d.record(d.table.shoe_fault(ShoeFaultCode.DOOR))
    events = d.card("Qc")
    assert d.table.fault is not None
    assert events[1].code == "unexpected_card" and not d.table.fault.recoverable


def test_a_card_while_decisions_are_due_is_out_of_play_for_a_supervisor_to_burn() -> None:
    """Game protection (finding 8): an extra card no longer leaves only a void; once the
    starting hands are complete the supervisor may burn it and go on (Roberts' rule 9)."""
    d = Driver()
    cali_hand(d)
    d.cards("As 9c Kd 2s 9d Kh")
    events = d.card("Qc")
    assert events[1].code == "unexpected_card"
    assert "while spots 1 and 2 were deciding" in events[1].detail
    assert not events[1].recoverable and events[1].burnable
    (refused,) = d.do(command="continue")
    assert "only a supervisor can burn it and go on, or void the hand" in refused.reason
    burned = d.do(role="supervisor", command="burn", reason="card flashed")
    assert [type(e).__name__ for e in burned][:3] == ["CommandAccepted", "CardsBurned",
                                                      "HandContinued"]
    assert burned[1].cards == ("Qc",) and burned[1].counts == (7,)
    assert d.table.state == "DECIDING" and d.table.fault is None
    d.do(command="decide", spot=1, decision="raise")
    d.do(command="decide", spot=2, decision="raise")
    d.cards("3c 4d 5h")                                # the flop: the burned card is out
    assert d.table.state == "SETTLED"
    assert replayed(d.events, "cali_lowball") == d.table.snapshot()


def jackpot_table() -> Driver:
    d = Driver("three_card_lowball")
    d.do(command="open")
    for spot in (1, 2):
        for wager, amount in (("ante", 1000), ("bonus", 1000), ("progressive", 100)):
            d.do(command="place", spot=spot, wager=wager, amount=amount)
    d.do(command="lock")
    d.cards("4h 4c 4d 2d 2h 2c As Ac Ad")
    d.do(command="decide", spot=1, decision="stand")
    d.do(command="decide", spot=2, decision="stand")
    return d


def test_a_jackpot_holds_the_table_until_verified() -> None:
    d = jackpot_table()
    (pending,) = [e for e in d.events if type(e) is JackpotPending]
    assert pending.seats == (1, 2) and pending.amount == 500_040
    assert d.table.meter == 0 and d.table.state == "SETTLED"
    assert type(d.do(command="place", spot=1, wager="ante", amount=1000)[0]) is CommandRefused
    assert type(d.do(command="verify_jackpot")[0]) is CommandRefused
    verified = d.do(role="supervisor", command="verify_jackpot")
    assert verified[-1] == MeterChanged(500_000, "reset to seed after the jackpot of TCL-01-000001")
    assert type(d.do(command="place", spot=1, wager="ante", amount=1000)[0]) is CommandAccepted


def test_progressive_sensor_places_and_flags_changes_after_lock() -> None:
    d = Driver("three_card_lowball")
    d.do(command="open")
    d.record(d.table.sensor(4, True))
    assert d.table.wagers[4] == {"progressive": 100}
    d.do(command="place", spot=4, wager="ante", amount=1000)
    d.do(command="place", spot=4, wager="bonus", amount=1000)
    d.do(command="lock")
    events = d.table.sensor(4, False)
    assert events[-1] == LampSet(4, SpotLamp.CHANGED_AFTER_LOCK)
    assert d.table.hand is not None
    assert d.table.hand.wagers[4]["progressive"] == 100      # the locked wager stands


def replayed(events: list[Any], game: str) -> dict[str, Any]:
    table = build_table(load_config(default_config_path(game)))
    table.replay(events)
    return table.snapshot()


@pytest.mark.parametrize("build, game", [
    (lambda: jackpot_table(), "three_card_lowball"),
    (lambda: (lambda d: (cali_hand(d), d.cards("As 9c Kd 2s 9d Kh"),
                         d.do(command="decide", spot=1, decision="raise"), d)[-1])(Driver()),
     "cali_lowball"),
])
def test_replaying_the_journal_at_every_transaction_rebuilds_the_same_table(
        build: Callable[[], Driver], game: str) -> None:
    """Cut the journal after every committed input (a power loss at any instant leaves one
    of these): the rebuilt table is the live table as it stood then."""
    d = build()
    assert len(d.checkpoints) > 12
    for count, snapshot in d.checkpoints:
        assert replayed(d.events[:count], game) == snapshot


@pytest.mark.parametrize("path", sorted(p for p in SCENARIOS.glob("*.json")
                                        if not p.name.endswith(".expected.json"))[::3],
                         ids=lambda p: p.stem)
def test_scenarios_through_the_table_settle_as_replay_does(path: Path) -> None:
    scenario = json.loads(path.read_text())
    expected = json.loads(path.with_suffix(".expected.json").read_text())
    from controller.settings.table_config import Rules
    loaded = load_config(default_config_path(scenario["game"]))
    config = loaded.config
    d = Driver(loaded=loaded.model_copy(update={"config": config.model_copy(update={
        "table": config.table.model_copy(update={"paytable": scenario["paytable"]}),
        "rules": Rules(**scenario.get("rules", {})),
        "limits": config.limits.model_copy(update={"min_ante": 1, "max_ante": 10**9,
                                                   "max_lowdown_bonus": 10**9})})}))
    table = d.table
    if "meter" in scenario:
        table.meter = scenario["meter"]
    d.do(command="open")
    for spot, wagers in scenario["seats"].items():
        for wager, amount in wagers.items():
            d.do(command="place", spot=int(spot), wager=wager, amount=amount, player=f"p{spot}")
    assert type(d.do(command="lock")[-1]) is not LockRefused
    shoe = iter(scenario["shoe"])
    decisions = {int(k): list(v) for k, v in scenario["decisions"].items()}
    while table.hand is not None:
        step = table.hand.next_step()
        if step.kind == "card":
            d.card(next(shoe))
        else:
            spot = step.seats[0]
            d.do(command="decide", spot=spot, decision=decisions[spot].pop(0))
    settled = [s._asdict() for s in d.events if type(s) is WagerSettled]
    # every settlement and award names the player the dealer gave for its spot
    assert settled == [{**s, "player": f"p{s['seat']}"} for s in expected["settlements"]]
    awarded = [a._asdict() for a in d.events if type(a) is ProgressiveAwarded]
    assert awarded == [{**a, "player": f"p{a['seat']}"} for a in expected["progressive"]]


def three_card_hand_dealt() -> Driver:
    """A Three Card Lowball hand on spot 1 (ante and bonus), dealt: the player 4h 9c 2d, the
    dealer Kd Qs Ac; spot 1 to decide."""
    d = Driver("three_card_lowball")
    d.do(command="open")
    d.do(command="place", spot=1, wager="ante", amount=1000)
    d.do(command="place", spot=1, wager="bonus", amount=1000)
    d.do(command="lock")
    d.cards("4h Kd 9c Qs 2d Ac")
    return d


def test_the_dealer_is_shown_the_house_way() -> None:
    d = three_card_hand_dealt()      # dealer Kd Qs Ac: no pair, discard every card ten or higher
    d.do(command="decide", spot=1, decision="stand")
    assert d.table.expecting() == ("house way: dealer discards Kd Qs (no pair: discard every "
                                   "card ten or higher); deal a card to the dealer")
    assert d.table.snapshot()["hand"]["house_way"]["discard"] == ["Kd", "Qs"]


def test_void_returns_the_raise_too() -> None:
    d2 = Driver()
    cali_hand(d2)
    d2.cards("As 9c Kd 2s 9d Qh")
    d2.do(command="decide", spot=1, decision="raise")
    d2.card("As")                                       # a card while spot 2 must decide
    voided = d2.do(role="supervisor", command="void", reason="misdeal")
    (void,) = [e for e in voided if type(e) is HandVoided]
    assert (1, "raise", 3000) in {(w.seat, w.wager, w.amount) for w in void.returned}
    assert sum(w.amount for w in void.returned) == 4 * 1000 + 3000


def test_a_discard_must_name_its_cards() -> None:
    d = three_card_hand_dealt()
    for text in ("discard", "discard:"):
        (refused,) = d.do(command="decide", spot=1, decision=text)
        assert type(refused) is CommandRefused and "name the 1 or 2 cards" in refused.reason
    assert d.table.expecting() == "decision from spot 1: stand or discard"


def test_a_jackpot_is_held_even_with_a_zero_seed() -> None:
    from controller.settings.table_config import Progressive
    loaded = load_config(default_config_path("three_card_lowball"))
    d = Driver(loaded=loaded.model_copy(update={"config": loaded.config.model_copy(
        update={"progressive": Progressive(seed=0)})}))
    assert d.table.meter == 0
    d.do(command="open")
    for wager, amount in (("ante", 1000), ("bonus", 1000), ("progressive", 100)):
        d.do(command="place", spot=1, wager=wager, amount=amount)
    d.do(command="lock")
    d.cards("4h 4c 2d 2h As Ac")
    d.do(command="decide", spot=1, decision="stand")
    assert [e for e in d.events if type(e) is JackpotPending]
    assert d.table.jackpot is not None
    assert type(d.do(command="open")[0]) is CommandRefused


def restarted_after_a_card() -> tuple[Driver, Table]:
    """A Cali hand's first card (As, shoe seq 7, count 1) taken, and the table rebuilt from
    the journal (as a restart does): the driver's table and the rebuilt one."""
    d = Driver()
    cali_hand(d)
    d.card("As", seq=7)
    rebuilt = build_table(load_config(default_config_path("cali_lowball")))
    rebuilt.replay(d.events)
    return d, rebuilt


def test_a_card_resent_after_a_restart_counts_once() -> None:
    d, rebuilt = restarted_after_a_card()
    events = rebuilt.shoe_card(parse_card("As"), 7, "", 1)     # the shoe resends it
    assert [type(e).__name__ for e in events] == ["ShoeCard"]
    assert rebuilt.snapshot() == d.table.snapshot()
    moved: list[Any] = rebuilt.shoe_card(parse_card("9c"), 8, "", 2)
    assert moved[1].to == 2


def test_player_names_do_not_outlive_their_wagers() -> None:
    d = Driver()
    d.do(command="open")
    for spot in range(1, 5):
        d.do(command="place", spot=spot, wager="ante", amount=1000, player="alice")
    for spot in range(1, 5):
        d.do(command="cancel", spot=spot, wager="ante")
    for spot in range(1, 6):
        d.do(command="place", spot=spot, wager="ante", amount=1000,
             player="alice" if spot == 5 else "")
        d.do(command="place", spot=spot, wager="xtra_bonus", amount=1000)
    assert type(d.do(command="lock")[-1]) is not LockRefused


def test_continue_waits_for_the_lost_device() -> None:
    d = Driver()
    cali_hand(d)
    d.record(d.table.device_status(Device.SHOE, DeviceCondition.LOST, "unplugged"))
    (refused,) = d.do(command="continue")
    assert "shoe still lost" in refused.reason
    d.record(d.table.device_status(Device.SHOE, DeviceCondition.CONNECTED, "/dev/ttyUSB0"))
    assert type(d.do(command="continue")[0]) is CommandAccepted
    assert d.table.state == "LOCKED"


def test_a_card_dealt_in_play_is_not_marked_during_pause() -> None:
    d = Driver()
    cali_hand(d)
    (record, dealt, *_) = d.card("As")
    assert record.count == 1 and not record.during_pause and dealt.to == 1


def test_a_skipped_card_count_pauses_the_hand_naming_the_missing_card() -> None:
    d = Driver()
    cali_hand(d)
    d.cards("As 9c")
    events = d.card("Kd", count=4)                    # count 3 never arrived
    assert [type(e).__name__ for e in events] == ["ShoeCard", "Fault", "StateChanged"]
    fault = events[1]
    assert fault.code == "card_missing" and not fault.recoverable
    assert fault.detail.startswith("card count 3 left the shoe and never arrived")
    assert "Kd not dealt" in fault.detail
    assert d.table.hand is not None
    assert d.table.hand.cards_used == 2             # the card that showed the gap is not dealt
    assert d.table.state == "PAUSED"
    (refused,) = d.do(command="continue")
    assert "this is a misdeal" in refused.reason
    voided = d.do(role="supervisor", command="void", reason="card missing")
    assert any(type(e) is HandVoided for e in voided)


def test_several_missing_counts_are_named_as_a_range() -> None:
    d = Driver()
    cali_hand(d)
    d.card("As")
    events = d.card("9c", count=5)
    assert "card counts 2-4 left the shoe" in events[1].detail


def test_a_count_that_goes_back_mid_hand_names_both_counts() -> None:
    d = Driver()
    cali_hand(d)
    d.cards("As 9c Kd 2s")
    events = d.card("9d", count=3)          # the shoe counted again from 1: 1 and 2 never came
    assert events[2].code == "count_went_back"
    assert events[2].detail.startswith("the shoe's card count went back from 4 to 3 in the "
                                       "middle of hand CALI-01-000001")


def test_a_count_that_skips_names_the_cards_that_never_came() -> None:
    d = Driver()
    cali_hand(d)
    d.cards("As 9c Kd")
    events = d.card("2s", count=6)
    assert events[1].code == "card_missing" and events[1].detail.startswith(
        "card counts 4-5 left the shoe and never arrived")
    assert not events[1].burnable           # the starting deal: a misdeal (rule 1)


def test_a_missing_card_with_no_hand_in_play_is_journaled_as_a_fault_and_the_table_goes_on(
        ) -> None:
    d = Driver()
    d.do(command="open")
    d.card("As")
    events = d.card("9c", count=3)
    assert [type(e).__name__ for e in events] == ["ShoeCard", "Fault"]
    assert events[1].code == "card_missing" and "card count 2" in events[1].detail
    assert d.table.state == "OPEN" and d.table.fault is None


def test_a_count_of_one_after_a_shuffle_between_hands_starts_again() -> None:
    d = Driver()
    cali_hand(d)
    d.cards("As 9c Kd 2s 9d Qh")
    d.do(command="decide", spot=1, decision="check")
    d.do(command="decide", spot=2, decision="check")
    d.cards("3c 4d 5h")
    d.do(command="decide", spot=1, decision="fold")
    d.do(command="decide", spot=2, decision="fold")
    assert d.table.state == "SETTLED"
    d.count = 0                                    # the shoe was shuffled between hands
    cali_hand(d)
    d.cards("As 9c Kd 2s 9d Qh")
    assert d.table.state == "DECIDING" and d.table.fault is None


@pytest.mark.parametrize("reported, trouble", [
    (lambda table: table.shoe_fault(ShoeFaultCode.DOOR), "DOOR at card count 3"),
    (lambda table: table.shoe_fault(ShoeFaultCode.JAM), "JAM at card count 3"),
    (lambda table: table.device_status(Device.SHOE, DeviceCondition.LOST, "cable out"),
     "shoe lost"),
    (lambda table: table.device_status(Device.CONTROLLER, DeviceCondition.RESTARTED,
                                       "journal seq 40"), "controller restarted"),
], ids=["door opened", "jam", "shoe lost", "controller restarted"])
def test_a_shoe_reloaded_mid_hand_is_never_dealt_whatever_fault_came_first(
        reported: Callable[[Table], list[AnyEvent]], trouble: str) -> None:
    """Game protection (finding 6): a door opened (or a jam, the shoe lost, a restart) let
    the dealer load a stacked order whose count restarted at 1, and spot 1 drew from it. A
    count that goes back mid-hand is a misdeal only a supervisor's void ends, with an alarm
    naming the shoe's trouble and the counts."""
    d = Driver()
    cali_hand(d)
    d.cards("As 9c Kd")
    d.record(reported(d.table))                    # the shoe may be reloaded meanwhile
    d.record(d.table.device_status(Device.SHOE, DeviceCondition.CONNECTED, "back"))
    d.do(command="continue")
    d.count = 0
    events = d.card("2s")
    alarm, fault = events[1], events[2]
    assert type(alarm).__name__ == "Alarm" and alarm.code == "shoe_count_back"
    assert "went back from 3 to 1" in alarm.detail and trouble in alarm.detail
    assert fault.code == "count_went_back" and not fault.recoverable and not fault.burnable
    assert d.table.hand is not None and d.table.hand.cards_used == 3   # 2s went to no one
    assert "is a misdeal" in d.do(command="continue")[0].reason
    assert "void the hand" in d.do(role="supervisor", command="burn", reason="x")[0].reason
    d.cards("9d Qh")                               # the dealer deals on: nothing is taken
    assert d.table.hand.cards_used == 3 and d.table.state == "PAUSED"
    d.do(role="supervisor", command="void", reason="shoe reloaded mid-hand")
    assert d.table.state == "OPEN"
    assert replayed(d.events, "cali_lowball") == d.table.snapshot()


def test_a_door_opened_during_a_hand_is_an_alarm() -> None:
    d = Driver("three_card_lowball")
    d.do(command="open")
    d.do(command="place", spot=1, wager="ante", amount=1000)
    d.do(command="place", spot=1, wager="bonus", amount=1000)
    d.do(command="lock")
    d.cards("As 9c")
    events = d.record(d.table.shoe_fault(ShoeFaultCode.DOOR))
    assert [type(e).__name__ for e in events] == ["DeviceFault", "Alarm", "Fault",
                                                  "StateChanged"]
    assert events[1].code == "shoe_door_in_hand"
    assert events[1].detail == "the shoe's door was opened during hand TCL-01-000001 (card count 2)"


def test_a_misread_in_the_starting_deal_is_a_misdeal() -> None:
    d = Driver()
    cali_hand(d)
    d.cards("As 9c")
    events = d.record(d.table.shoe_fault(ShoeFaultCode.MISREAD))
    assert events[1].code == "shoe_misread" and not events[1].recoverable
    assert not events[1].burnable
    assert "is a misdeal" in d.do(command="continue")[0].reason


def test_a_misread_on_the_flop_is_burned_by_a_supervisor_and_takes_one_card_count() -> None:
    """Game protection (finding 7): after a misread the dealer's continue sent the next card
    on as if nothing had left the shoe. The misread card counts as a card out of the shoe:
    the supervisor burns it (the exposed card is replaced, rule 9) or voids."""
    d = Driver()
    cali_hand(d)
    d.cards("As 9c Kd 2s 9d Qh")
    d.do(command="decide", spot=1, decision="raise")
    d.do(command="decide", spot=2, decision="raise")
    d.card("3c")
    events = d.record(d.table.shoe_fault(ShoeFaultCode.MISREAD))
    assert events[1].code == "shoe_misread" and events[1].burnable
    assert "burn it and go on" in d.do(command="continue")[0].reason
    burned = d.do(role="supervisor", command="burn", reason="misread flop card")
    assert burned[1].cards == ("??",) and burned[1].counts == (8,)
    d.count += 1                                   # the misread card had count 8
    d.cards("4d 5h")
    assert d.table.state == "SETTLED"
    assert replayed(d.events, "cali_lowball") == d.table.snapshot()


def test_the_same_seq_and_count_with_another_card_is_refused_after_a_restart() -> None:
    """The driver's memory of the last frame is gone after a restart; the journal's is not."""
    d, rebuilt = restarted_after_a_card()
    events: list[Any] = rebuilt.shoe_card(parse_card("Kd"), 7, "", 1)
    assert [type(e).__name__ for e in events] == ["ShoeCard", "Fault", "StateChanged"]
    fault = events[1]
    assert fault.code == "shoe_conflict" and not fault.recoverable
    assert "Kd (SEQ 07) as card count 1, which was card As (SEQ 07)" in fault.detail
    assert rebuilt.hand is not None
    assert rebuilt.hand.cards[1] == [parse_card("As")]      # the table keeps the card it has
    assert rebuilt.hand.cards_used == 1


def test_a_conflict_refused_by_the_driver_pauses_the_hand_as_a_misdeal() -> None:
    d = Driver()
    cali_hand(d)
    d.card("As")
    events = d.record(d.table.shoe_fault(ShoeFaultCode.CONFLICT, "SEQ 01 was accepted as ..."))
    assert events[1].code == "shoe_conflict" and not events[1].recoverable
    assert d.table.state == "PAUSED"


def test_a_card_during_a_misdeal_pause_is_marked_and_refused() -> None:
    d = Driver()
    cali_hand(d)
    d.cards("As 9c")
    d.card("As")                                    # duplicate: misdeal
    events = d.card("Kd")
    assert events[0].during_pause and events[1].code == "unexpected_card"
    assert "while the hand was paused" in events[1].detail
    assert d.table.fault is not None
    assert d.table.fault.code == "duplicate_card"   # the first fault stands


def test_a_journal_from_before_the_card_count_replays_as_it_was_played() -> None:
    """A table's journal outlives a release: ``shoe_card`` records journaled before the shoe
    reported card counts (no ``count``, no ``during_pause``) are read with count 0 (not
    reported) and rebuild the very table they were played on."""
    from datetime import UTC, datetime

    from controller.stream import wire
    from controller.core.table_events import ShoeCard

    d = jackpot_table()
    ts = datetime(2026, 11, 20, tzinfo=UTC)
    messages = []
    for seq, event in enumerate(d.events, 1):
        message = json.loads(wire.encode(event, table_id="TCL-01", seq=seq, ts=ts,
                                         hand_id=None))
        if message["type"] == "shoe_card":
            del message["data"]["count"], message["data"]["during_pause"]
        messages.append(json.dumps(message).encode())
    old = [wire.to_event(wire.decode_event(message)) for message in messages]
    cards = [event for event in old if type(event) is ShoeCard]
    assert cards and all((card.count, card.during_pause) == (0, False) for card in cards)
    assert replayed(old, "three_card_lowball") == d.table.snapshot()
    dealt = next(json.loads(m) for m in messages if json.loads(m)["type"] == "card_dealt")
    del dealt["data"]["to"]                       # only the documented added fields are filled
    with pytest.raises(wire.WireError, match="to"):
        wire.decode_event(json.dumps(dealt).encode())


def test_the_table_asks_the_engine_what_depends_on_the_game() -> None:
    """No game name and no reaching into an engine's attributes in the table: the engines say
    whether the game has a progressive, how a hand starts, what a void returns."""
    source = (Path(__file__).parents[2] / "controller" / "core" / "table.py").read_text()
    assert "three_card_lowball" not in source and "cali_lowball" not in source
    assert "getattr(" not in source
    from controller.core.games import CaliLowballHand, ThreeCardLowballHand
    assert ThreeCardLowballHand.HAS_PROGRESSIVE and not CaliLowballHand.HAS_PROGRESSIVE
    d = Driver()
    cali_hand(d)
    d.cards("As 9c Kd 2s 9d Qh")
    d.do(command="decide", spot=1, decision="raise")
    assert d.table.hand is not None
    assert [(w.seat, w.wager, w.amount) for w in d.table.hand.wagers_at_stake()] == [
        (1, "ante", 1000), (1, "xtra_bonus", 1000), (2, "ante", 1000), (2, "xtra_bonus", 1000),
        (1, "raise", 3000)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["cali_lowball", "three_card_lowball"]),
       st.dictionaries(st.integers(1, 7), st.dictionaries(
           st.sampled_from(["ante", "xtra_bonus", "lowdown_bonus", "bonus", "progressive"]),
           st.sampled_from([100, 500, 1000, 2000, 20_000]), max_size=4), max_size=5))
def test_the_lock_and_the_hand_apply_one_set_of_wager_rules(
        game: str, layout: dict[int, dict[str, int]]) -> None:
    """A layout the table would lock is one the engine takes, and a layout the engine refuses
    is one the lock refuses, with the engine's own words among its reasons."""
    table = TABLES[game]
    engine = table.engine
    wagers = {spot: {key: amount for key, amount in amounts.items() if key in engine.WAGER_KEYS}
              for spot, amounts in layout.items()}
    wagers = {spot: amounts for spot, amounts in wagers.items() if amounts}
    if not wagers:
        return
    problems = table.lock_problems(wagers)
    try:
        engine.start(table.setup, wagers, table.meter)
    except WagerError as error:
        assert str(error) in problems
    else:
        assert not [problem for problem in problems if problem.startswith("seat ")]


TABLES = {game: build_table(load_config(default_config_path(game)))
          for game in ("cali_lowball", "three_card_lowball")}


def test_a_journal_of_an_older_release_replays_as_it_was_played() -> None:
    """An older release dealt a card whose count went back after a shoe fault (taken as a
    reshuffle), and let the dealer continue after a misread. The journal's decisions stand: a
    replay deals what the journal shows dealt and gives the way out it gave, so the table
    starts on such a journal and rebuilds the same hand."""
    from controller.core.events import CardDealt
    d = Driver()
    cali_hand(d)
    d.cards("As 9c Kd")
    d.record(d.table.shoe_fault(ShoeFaultCode.JAM))
    d.do(command="continue")
    d.count = 0
    events = d.card("2s")                              # today: count_went_back, not dealt
    assert events[2].code == "count_went_back"
    then = d.events.index(events[0])                   # as an older release journaled it:
    older = d.events[:then + 1] + [CardDealt(parse_card("2s"), 2, "hole cards")]
    table = build_table(load_config(default_config_path("cali_lowball")))
    table.replay(older)
    assert table.hand is not None and table.hand.cards_used == 4 and table.fault is None

    misread = Driver()
    cali_hand(misread)
    misread.cards("As 9c")
    journaled = misread.record(misread.table.shoe_fault(ShoeFaultCode.MISREAD))
    assert [type(e).__name__ for e in journaled] == ["DeviceFault", "Fault", "StateChanged"]
    assert not journaled[1].recoverable                # today: a supervisor's
    then = misread.events.index(journaled[0])
    older = misread.events[:then + 1] + [
        journaled[1]._replace(recoverable=True, burnable=False), journaled[2],
        CommandAccepted("continue", "{}", "dealer", "dealer")]
    table = build_table(load_config(default_config_path("cali_lowball")))
    table.replay(older)                                # the continue is accepted again
    assert table.state == "DEALING" and table.fault is None


def names(allowed: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(a["command"], a.get("spot"), a.get("decision") or a.get("wager")) for a in allowed]


def test_the_table_lists_the_commands_it_takes_now_and_verifies_each() -> None:
    """pokerkit's pattern: ``verify`` names why a command would be refused, ``can`` says
    whether it would be taken, and ``allowed`` (in the snapshot) lists what the table takes
    now: the screens' buttons, derived nowhere else."""
    from controller.core.commands import Decide, Lock, Open, Void
    from controller.core.table import CommandError
    d = Driver()
    assert names(d.table.allowed()["dealer"]) == [("open", None, None)]
    assert d.table.allowed()["supervisor"] == [{"command": "reload"}]
    with pytest.raises(CommandError, match="needs the supervisor credential"):
        d.table.verify(Void("x"))
    d.do(command="open")
    assert d.table.can(Lock())                        # taken, and answered lock_refused
    assert names(d.table.allowed()["dealer"]) == [("close", None, None), ("place", None, None)]
    d.do(command="place", spot=1, wager="ante", amount=1000)
    d.do(command="place", spot=1, wager="xtra_bonus", amount=1000)
    assert names(d.table.allowed()["dealer"]) == [
        ("lock", None, None), ("place", None, None), ("cancel", 1, "ante"),
        ("cancel", 1, "xtra_bonus")]
    d.do(command="lock")
    assert d.table.allowed() == {"dealer": [], "supervisor": [{"command": "void"}],
                                 "seating": []}
    d.cards("As 9c Kd 2s")
    assert names(d.table.allowed()["dealer"]) == [("decide", 1, "raise"), ("decide", 1, "check")]
    with pytest.raises(IllegalActionError):
        d.table.verify(Decide(2, "raise"))
    assert d.table.can(Decide(1, "raise")) and not d.table.can(Open())
    before = d.table.snapshot()
    d.table.verify(Decide(1, "raise"))
    assert d.table.snapshot() == before               # verify changes nothing
    assert d.table.snapshot()["allowed"] == d.table.allowed()
    d.card("Qc")                                      # an extra card: the supervisor's
    assert d.table.allowed() == {"dealer": [], "supervisor": [{"command": "burn"},
                                                              {"command": "void"}],
                                 "seating": []}

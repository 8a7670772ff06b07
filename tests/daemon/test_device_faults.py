"""Device faults through the real daemon over the pty simulators (tests/support/rig.py).

* Shoe unplugged and replugged mid-hand (the pty transport's disconnect/reconnect, a USB-serial
  adapter pulled and put back at the same path): the hand pauses with ``device_lost``,
  ``continue`` is refused while the shoe is lost and accepted once it is back, the hand
  finishes, every card is dealt once, the settlements equal the scenario's replay.
* Shoe silent (``go_silent``): lost after ``lost_after_s`` (0.5 s here), heard again on resume.
* Spot controller lost: the hand keeps its state; once it is back the lamps should show what
  the table says (the daemon re-sends every lamp when the controller reconnects).
* Meter lost: the table keeps dealing; once it is back the sign shows the current amount.
* Duplicate card and unknown tag reported by the shoe: the hand pauses (a misdeal, not
  recoverable), a ``fault`` event is on the stream, ``continue`` is refused, and a
  supervisor's void returns every wager.

Waits are polls with a deadline; the deadline only bounds a failure.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.core.money import format_cents
from controller.settings.scenario import Scenario, load_scenario, replay, settlement_report
from controller.settings.table_config import LoadedConfig, default_config_path, load_config

from tests.support.rig import CREDENTIAL, SCENARIOS, Rig, played_by_p_spot
from tests.support.waits import wait_for

LOST_AFTER_S = 0.5


class FaultRig(Rig):
    """The test_daemon rig with a short shoe silence limit and fast reconnects."""

    def start_daemon(self) -> None:
        # A heartbeat well inside the short silence limit, so a healthy shoe is never lost.
        self.shoe.model.heartbeat_every_s = LOST_AFTER_S / 5
        import tests.support.rig as rig_module

        original = rig_module.demo_config

        def short_timers(*args: Any, **kwargs: Any) -> LoadedConfig:
            loaded = original(*args, **kwargs)
            devices = loaded.config.devices
            assert devices.shoe is not None and devices.spots is not None \
                and devices.meter is not None
            fast = {"reconnect_initial_s": 0.05, "reconnect_max_s": 0.2}
            devices = devices.model_copy(update={
                "shoe": devices.shoe.model_copy(update={"lost_after_s": LOST_AFTER_S, **fast}),
                "spots": devices.spots.model_copy(update=fast),
                "meter": devices.meter.model_copy(update=fast)})
            return loaded.model_copy(update={"config": loaded.config.model_copy(
                update={"devices": devices})})

        rig_module.demo_config = short_timers
        try:
            super().start_daemon()
        finally:
            rig_module.demo_config = original

    # -- helpers --------------------------------------------------------------------------

    def device_status(self, device: str, status: str) -> list[Any]:
        return [e for e in self.events("device_status")
                if e.data.device == device and e.data.status == status]

    def back(self, device: str) -> list[Any]:
        """``connected`` reports of ``device`` after its last ``lost`` one."""
        statuses = [e for e in self.events("device_status") if e.data.device == device]
        lost = [i for i, e in enumerate(statuses) if e.data.status == "lost"]
        after = statuses[lost[-1] + 1:] if lost else []
        return [e for e in after if e.data.status == "connected"]

    def faults(self, code: str) -> list[Any]:
        return [e for e in self.events("fault") if e.data.code == code]


@pytest.fixture
def rig(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[FaultRig]:
    game = getattr(request, "param", "cali_lowball")
    rig = FaultRig(tmp_path, game)
    assert rig.ask({"command": "open"})["ok"]
    yield rig
    rig.close()


def _scenario(name: str) -> Scenario:
    return load_scenario(SCENARIOS / f"{name}.json")


def _decisions(scenario: Scenario) -> dict[int, list[str]]:
    return {int(spot): list(texts) for spot, texts in scenario.decisions.items()}


def _expected(scenario: Scenario) -> list[dict[str, Any]]:
    """The scenario's settlements as the rig plays it (spot N's player is ``pN``)."""
    return played_by_p_spot(settlement_report(replay(
        scenario, load_config(default_config_path(scenario.game))))["settlements"])


def _settled_as_replay(rig: FaultRig, scenario: Scenario) -> None:
    wait_for(lambda: rig.events("hand_settled"), "the settlement")
    published = [e.data.model_dump() for e in rig.events("wager_settled")]
    assert published == _expected(scenario)
    dealt = [str(e.data.card) for e in rig.events("card_dealt")]
    assert len(dealt) == len(set(dealt)), f"a card counted twice: {dealt}"
    left_the_shoe = [str(card) for card in rig.shoe.model.dealt]
    assert sorted(dealt) == sorted(left_the_shoe), "a card lost between shoe and table"
    seqs = [e.seq for e in rig.received]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))          # gapless stream


# --- the shoe --------------------------------------------------------------------------------

def test_shoe_unplugged_and_replugged_mid_hand_loses_no_card(rig: FaultRig) -> None:
    scenario = _scenario("cali_check_bet_win")
    rig.start_hand(scenario)
    rig.deal_one()
    rig.deal_one()
    cards_before = rig.status()["hand"]["cards"]

    rig.shoe.disconnect()
    wait_for(lambda: rig.faults("device_lost"), "device_lost on the stream")
    state = rig.status()
    assert state["state"] == "PAUSED" and state["fault"]["device"] == "shoe"
    assert state["hand"]["cards"] == cards_before                    # the hand kept its cards
    reply = rig.ask({"command": "continue"})
    assert reply["ok"] is False and "shoe still lost" in reply["error"], reply

    rig.shoe.reconnect()
    wait_for(lambda: rig.back("shoe"), "the shoe back")
    assert rig.ask({"command": "continue"})["ok"]
    rig.finish_hand(_decisions(scenario))
    _settled_as_replay(rig, scenario)


def test_shoe_unplugged_with_a_card_in_flight_resends_it_once(rig: FaultRig) -> None:
    """The cable goes while a card's frame is outstanding; the shoe resends it after the
    replug: dealt once."""
    scenario = _scenario("cali_check_bet_win")
    rig.start_hand(scenario)
    rig.deal_one()
    with rig.shoe.lock:             # the card leaves the shoe and the cable goes, atomically
        rig.shoe.model.deal(1)
        rig.shoe.disconnect()
    wait_for(lambda: rig.faults("device_lost"), "device_lost on the stream")
    rig.shoe.reconnect()
    wait_for(lambda: rig.back("shoe"), "the shoe back")
    wait_for(lambda: len(rig.events("card_dealt")) == 2, "the card in flight, resent")
    assert rig.ask({"command": "continue"})["ok"]
    rig.finish_hand(_decisions(scenario))
    _settled_as_replay(rig, scenario)


def test_a_silent_shoe_is_lost_after_lost_after_s_and_heard_again(rig: FaultRig) -> None:
    scenario = _scenario("cali_check_bet_win")
    rig.start_hand(scenario)
    rig.deal_one()
    rig.shoe.device.go_silent()
    lost = wait_for(lambda: rig.device_status("shoe", "lost"), "the silent shoe lost",
                    timeout=LOST_AFTER_S + 5)
    assert f"{LOST_AFTER_S:g} s" in lost[-1].data.detail
    assert rig.status()["fault"]["code"] == "device_lost"
    assert rig.ask({"command": "continue"})["ok"] is False
    rig.shoe.device.resume()       # the next heartbeat (1 s) brings it back
    wait_for(lambda: rig.back("shoe"), "the shoe heard again")
    assert rig.ask({"command": "continue"})["ok"]
    rig.finish_hand(_decisions(scenario))
    _settled_as_replay(rig, scenario)


# --- misdeals --------------------------------------------------------------------------------

def _void_returns_every_wager(rig: FaultRig, scenario: Scenario, code: str) -> None:
    fault = wait_for(lambda: rig.faults(code), f"the {code} fault on the stream")[-1]
    assert fault.data.recoverable is False
    state = rig.status()
    assert state["state"] == "PAUSED" and state["fault"]["code"] == code
    reply = rig.ask({"command": "continue"})
    assert reply["ok"] is False and "misdeal" in reply["error"]
    assert rig.ask({"command": "void", "reason": code}, supervisor=True)["ok"]
    voided = wait_for(lambda: rig.events("hand_voided"), "hand_voided")[-1]
    returned = sorted((w.seat, w.wager, w.amount) for w in voided.data.returned)
    placed = sorted((int(spot), wager, amount) for spot, wagers in scenario.seats.items()
                    for wager, amount in wagers.items())
    assert returned == placed
    assert not rig.events("wager_settled")
    assert rig.status()["state"] == "OPEN"


def test_a_duplicate_card_pauses_the_hand_and_a_void_returns_every_wager(rig: FaultRig) -> None:
    scenario = _scenario("cali_check_bet_win")
    rig.start_hand(scenario)
    rig.deal_one()
    rig.shoe.device.report_duplicate(str(scenario.shoe[0]))
    _void_returns_every_wager(rig, scenario, "duplicate_card")


def test_an_unknown_tag_pauses_the_hand_and_a_void_returns_every_wager(rig: FaultRig) -> None:
    scenario = _scenario("cali_check_bet_win")
    rig.start_hand(scenario)
    rig.deal_one()
    rig.shoe.device.unknown_tag(1)
    rig.shoe.device.deal(1)
    _void_returns_every_wager(rig, scenario, "unknown_tag")


# --- spot controller and meter -----------------------------------------------------------------

def test_spot_controller_lost_mid_hand_keeps_the_hand(rig: FaultRig) -> None:
    scenario = _scenario("cali_check_bet_win")
    rig.start_hand(scenario)
    rig.deal_one()
    before = rig.status()
    rig.spots.disconnect()
    wait_for(lambda: rig.faults("device_lost"), "device_lost for the spots")
    state = rig.status()
    assert state["state"] == "PAUSED" and state["fault"]["device"] == "spots"
    assert state["hand"]["cards"] == before["hand"]["cards"]
    assert state["hand"]["wagers"] == before["hand"]["wagers"]
    assert "spots still lost" in rig.ask({"command": "continue"})["error"]
    rig.spots.reconnect()
    wait_for(lambda: rig.back("spots"), "the spots back")
    assert rig.ask({"command": "continue"})["ok"]
    rig.finish_hand(_decisions(scenario))
    _settled_as_replay(rig, scenario)
    # The settlement lamps were sent after the reconnect: the felt shows them.
    _lamps_match(rig)


def _lamps_match(rig: FaultRig) -> None:
    from drivers.spots import LAMPS

    def matches() -> bool:
        table = rig.status()["lamps"]
        shown = rig.spots.model.lamps
        return all(shown[int(spot)] == LAMPS[lamp] for spot, lamp in table.items())

    try:
        wait_for(matches, "the lamps to catch up", timeout=3)
    except AssertionError:
        table = rig.status()["lamps"]
        shown = {spot: str(lamp) for spot, lamp in rig.spots.model.lamps.items()}
        raise AssertionError(f"lamps differ from the table's: table {table}, felt {shown}")


def test_lamps_catch_up_when_the_spot_controller_is_back(rig: FaultRig) -> None:
    scenario = _scenario("cali_check_bet_win")
    _lamps_match(rig)                               # the felt shows the open table
    lamps = rig.daemon.devices._lamps
    assert lamps is not None
    rig.spots.disconnect()
    wait_for(lambda: rig.device_status("spots", "lost"), "the spots lost")
    for spot, wagers in scenario.seats.items():     # lamps change while it is away
        for wager, amount in wagers.items():
            assert rig.ask({"command": "place", "spot": int(spot), "wager": wager,
                            "amount": amount})["ok"]
    wait_for(lambda: not lamps._pending, "the lamp worker to try every lamp")
    time.sleep(0.1)                                 # and finish its last try
    rig.spots.reconnect()
    wait_for(lambda: rig.back("spots"), "the spots back")
    _lamps_match(rig)


@pytest.mark.parametrize("rig", ["three_card_lowball"], indirect=True)
def test_meter_lost_the_table_keeps_dealing_and_the_meter_catches_up(rig: FaultRig) -> None:
    scenario = _scenario("tcl_prog_five_high")
    rig.meter.disconnect()
    start = rig.status()["meter"]
    rig.start_hand(scenario)                       # progressive contributions: meter moves
    rig.finish_hand(_decisions(scenario))
    _settled_as_replay(rig, scenario)
    now = rig.status()
    assert now["meter"] != start and now["state"] == "SETTLED"
    assert rig.meter.model.text != format_cents(now["meter"])   # the sign could not know
    rig.meter.reconnect()
    wait_for(lambda: rig.meter.model.text == format_cents(now["meter"]),
             f"the meter to show {format_cents(now['meter'])}", timeout=5)

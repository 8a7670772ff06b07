"""A journal that breaks while a hand is in play (its wagers locked, the progressive's
contribution already on the meter). Quarantine once started a new journal that carried the
meter and nothing else: the hand was neither resumed nor voided in any journal. The new
journal now voids it: its wagers returned on record, its contribution taken off the meter;
and the table opens only once a supervisor has confirmed the meter."""

from __future__ import annotations

from pathlib import Path

import zmq

from controller.daemon.journal_quarantine import quarantine
from controller.stream.journal import Journal, journal_path

from tests.support.daemon import play_a_hand, run_config
from tests.support.daemon import Daemon
from tests.support.journal_files import damage_last_record


def test_quarantine_mid_hand_accounts_for_the_hand_in_play(tmp_path: Path) -> None:
    path, state, context = run_config(tmp_path), tmp_path / "state", zmq.Context()
    try:
        table = Daemon(tmp_path, path, context)
        table.daemon.start()
        try:
            before_hand = table.daemon.table.meter
            play_a_hand(table.ask)                       # locked: the meter took 20
            hand = table.daemon.table.hand_id
            assert hand is not None and table.daemon.table.meter == before_hand + 20
            assert not table.ask(command="open")["ok"]  # a record after the meter's
        finally:
            table.daemon.close()
        damage_last_record(state)
        done = quarantine(state, "disk damage found at start", by="sam")
        assert done.voided is not None and done.voided.hand_id == hand
        table = Daemon(tmp_path, path, context)
        table.daemon.start()
        try:
            with Journal.open_readonly(journal_path(state)) as journal:
                kinds = [record.type for record in journal.records()]
            assert kinds == ["journal_continued", "hand_voided", "meter_changed"]
            assert table.daemon.table.meter == before_hand
            assert [tuple(wager) for wager in done.voided.returned] == [
                (1, "ante", 500, ""), (1, "bonus", 500, ""), (1, "progressive", 100, "")]
            assert done.voided.contributions_reversed == 20
            # The meter carried over waits for a supervisor's word before the table opens.
            refused = table.ask(command="open")
            assert not refused["ok"] and "confirms it" in refused["error"]
            assert table.ask(command="adjust_meter", amount=0, reason="sign checked",
                             supervisor=True)["ok"]
            assert table.ask(command="open")["ok"]
            assert table.daemon.table.meter == before_hand
        finally:
            table.daemon.close()
    finally:
        context.term()

"""Who may know which card, and when (docs/security.md), read off what each role receives
through a hand of each game on a real daemon and the simulated shoe.

At every step of the hand (each card out of the shoe, each decision) the test reads what
each client has received since the last step: the table family's live records and its
snapshot (the dealer's console), the ``status`` reply and every command reply (the
``dealer`` command line, a supervisor's too), the CMS family's records and snapshot, and the
surveillance stream. It fails on any card a role may not have at that step, by the rules
written out here on their own (not by the code under test): game protection, findings 1
and 2 (the dealer's screen drew every card as it was read; ``dealer status`` returned the
dealer's hole cards).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq

from controller.stream import wire
from controller.stream.client import StreamClient

from tests.support.rig import Rig
from tests.support.waits import wait_for

#: Cali LowBall, spots 1 and 2: hole cards (1, 2, dealer) x 2, then the flop.
CALI_SHOE = ["As", "7d", "Kc", "2h", "9s", "3c", "4d", "Jh", "5s"]
#: Three Card Lowball, spots 1 and 2: (1, 2, dealer) x 3; spot 1 discards one (8c), spot 2
#: stands, the dealer draws (Kd Qd: discards both: two cards T or higher).
TCL_SHOE = ["8c", "2d", "Kd", "3s", "4h", "Qd", "5c", "6h", "7d", "Ad", "9h", "Th"]


def cards_in(data: Any, deck: list[str]) -> set[str]:
    """The cards of ``deck`` written anywhere in ``data`` (JSON text or bytes)."""
    text = data.decode() if isinstance(data, bytes) else \
        data if isinstance(data, str) else json.dumps(data)
    return {card for card in deck if re.search(rf"(?<![A-Za-z0-9]){card}(?![A-Za-z0-9])", text)}


class Roles:
    """The clients of one table, and everything each has received, step by step."""

    def __init__(self, rig: Rig, deck: list[str]) -> None:
        self.rig, self.deck = rig, deck
        self.context = zmq.Context()
        stream = rig.stream
        assert stream.table_events and stream.table_replay and stream.cms_events \
            and stream.cms_replay
        self.table = StreamClient(self.context, table_id=rig.daemon.table_id,
                                  pub_endpoint=stream.table_events,
                                  replay_endpoint=stream.table_replay, family=wire.TABLE)
        self.cms = StreamClient(self.context, table_id=rig.daemon.table_id,
                                pub_endpoint=stream.cms_events,
                                replay_endpoint=stream.cms_replay, family=wire.CMS)
        self.table.sync()
        self.cms.sync()
        #: what the dealer's side received this step, what the CMS received
        self.dealer_side: list[Any] = []
        self.cms_side: list[Any] = []

    def ask(self, request: dict[str, Any], supervisor: bool = False) -> dict[str, Any]:
        reply = self.rig.ask(request, supervisor=supervisor)
        self.dealer_side.append(reply)
        return reply

    def read(self) -> None:
        """Everything the table and CMS families sent up to the table's last record."""
        last = self.rig.daemon.journal.last_seq
        for client, into in ((self.table, self.dealer_side), (self.cms, self.cms_side)):
            while True:
                envelope = client.receive(0.2)
                if envelope is not None:
                    into.append(wire.dumps(envelope))
                elif client.last_seq is not None and client.last_seq >= last:
                    break
            into.append(client.snapshot().state)
        self.dealer_side.append(self.ask({"command": "status"}))

    def step(self) -> tuple[set[str], set[str]]:
        """The cards the dealer's side and the CMS received since the last step."""
        self.read()
        dealer = set().union(*(cards_in(item, self.deck) for item in self.dealer_side))
        cms = set().union(*(cards_in(item, self.deck) for item in self.cms_side))
        self.dealer_side, self.cms_side = [], []
        return dealer, cms

    def close(self) -> None:
        self.table.close()
        self.cms.close()
        self.context.term()


@pytest.fixture
def roles(tmp_path: Path) -> Iterator[Any]:
    made: list[Any] = []

    def make(game: str, deck: list[str]) -> tuple[Rig, Roles]:
        rig = Rig(tmp_path, game)
        made.append(rig)
        roles = Roles(rig, deck)
        made.append(roles)
        rig.shoe.device.load(deck)
        return rig, roles

    yield make
    for thing in reversed(made):
        thing.close()


def open_and_lock(roles: Roles, second: str) -> None:
    assert roles.ask({"command": "open"})["ok"]
    for spot in (1, 2):
        for wager in ("ante", second):
            assert roles.ask({"command": "place", "spot": spot, "wager": wager,
                              "amount": 1000, "player": f"p{spot}"})["ok"]
    assert roles.ask({"command": "lock"})["ok"]


def deal(rig: Rig, count: int = 1) -> None:
    for _ in range(count):
        rig.deal_one()


def surveillance_cards(rig: Rig) -> list[str]:
    return [event.data.card for event in rig.events("card_dealt")]


def test_cali_lowball_shows_the_dealer_side_only_the_flop_until_the_showdown(roles: Any) -> None:
    rig, who = roles("cali_lowball", CALI_SHOE)
    open_and_lock(who, "xtra_bonus")
    hole = CALI_SHOE[:6]
    for index in range(6):                         # the hole cards, one at a time
        deal(rig)
        dealer, cms = who.step()
        assert dealer == set() and cms == set(), (index, dealer, cms)
    assert [str(card) for card in surveillance_cards(rig)] == hole   # surveillance: all, live
    assert who.ask({"command": "decide", "spot": 1, "decision": "check"})["ok"]
    assert who.ask({"command": "decide", "spot": 2, "decision": "check"})["ok"]
    assert who.step() == (set(), set())            # pre-flop: nothing
    flop: set[str] = set()
    for card in CALI_SHOE[6:]:                     # the flop, face up as dealt
        deal(rig)
        flop.add(card)
        dealer, cms = who.step()
        assert dealer <= flop and card in dealer and cms == set(), (dealer, cms)
    assert who.ask({"command": "decide", "spot": 1, "decision": "bet"})["ok"]
    dealer, cms = who.step()                       # post-flop: still only the flop
    assert dealer <= flop and cms == set()
    assert who.ask({"command": "decide", "spot": 2, "decision": "fold"})["ok"]
    wait_for(lambda: rig.events("hand_settled"), "the settlement")
    dealer, cms = who.step()                       # the showdown: everything, to everyone
    assert dealer == set(CALI_SHOE) and cms == set(CALI_SHOE)


def test_three_card_lowball_shows_a_spot_its_cards_only_while_it_draws(roles: Any) -> None:
    rig, who = roles("three_card_lowball", TCL_SHOE)
    open_and_lock(who, "bonus")
    for index in range(8):                         # the deal: every card face down
        deal(rig)
        dealer, cms = who.step()
        assert dealer == set() and cms == set(), (index, dealer, cms)
    spot1, spot2, dealer_hand = TCL_SHOE[0:9:3], TCL_SHOE[1:9:3], TCL_SHOE[2:9:3]
    deal(rig)                                      # the deal's last card: spot 1 is to draw
    state = who.ask({"command": "status"})["state"]
    assert state["hand"]["next"]["seats"] == [1]
    dealer, cms = who.step()                       # its three cards (the dealer keys its
    assert dealer == set(spot1) and cms == set()   # discard), no others
    assert who.ask({"command": "decide", "spot": 1, "decision": "discard:8c"})["ok"]
    dealer, cms = who.step()
    assert dealer <= set(spot1) and cms == set()   # the discard names a card it was shown
    deal(rig)                                      # spot 1's replacement: face down
    dealer, cms = who.step()
    assert dealer == set(spot2) and cms == set()   # now spot 2 is to draw
    assert who.ask({"command": "decide", "spot": 2, "decision": "stand"})["ok"]
    dealer, cms = who.step()                       # the dealer's draw: the dealer's cards
    assert dealer == set(dealer_hand) and cms == set()
    deal(rig, 2)                                   # the dealer's replacements, face up
    wait_for(lambda: rig.events("hand_settled"), "the settlement")
    dealer, cms = who.step()
    assert dealer == set(TCL_SHOE[:12]) and cms == set(TCL_SHOE[:12])


def test_a_supervisors_credential_opens_no_hidden_card(roles: Any) -> None:
    """A supervisor's command (and its reply) is a command like the dealer's: the credential
    authorizes an action, it shows no card."""
    rig, who = roles("cali_lowball", CALI_SHOE)
    open_and_lock(who, "xtra_bonus")
    deal(rig, 6)
    reply = who.ask({"command": "status"}, supervisor=True)
    assert reply["ok"] and cards_in(reply, CALI_SHOE) == set()
    who.ask({"command": "void", "reason": "test"}, supervisor=True)
    assert cards_in(who.dealer_side[-1], CALI_SHOE) == set()

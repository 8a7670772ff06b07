"""Standing a table up in this process for the journal's tests: its config, a dealer that plays
random hands through the daemon an input at a time, and the table the whole journal gives.

The real daemon runs without devices; hands are played as its command channel and shoe would
play them (each input through :meth:`controller.daemon.loop.TableDaemon.apply`).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import structlog.testing
import zmq

from controller.core.cards import DECK
from controller.core.table import Table
from controller.daemon.loop import TableDaemon
from controller.settings.table_config import (
    LoadedConfig,
    Stream,
    build_table,
    default_config_path,
    load_config,
)
from controller.stream import wire
from controller.stream.journal import Journal, journal_path
from controller.stream.table_commands import DEALER_ROLE, SUPERVISOR_ROLE, parse_command

GAMES = ("cali_lowball", "three_card_lowball")


def table_config(game: str, folder: Path) -> LoadedConfig:
    """The shipped config of ``game``, its stream on ipc sockets in ``folder``, no devices."""
    loaded = load_config(default_config_path(game))
    return loaded.model_copy(update={"config": loaded.config.model_copy(update={
        "limits": loaded.config.limits.model_copy(update={"max_ante": 10**7,
                                                          "max_lowdown_bonus": 10**7}),
        "stream": Stream(events=f"ipc://{folder}/e", replay=f"ipc://{folder}/r",
                         commands=f"ipc://{folder}/c", table_events=f"ipc://{folder}/te",
                         table_replay=f"ipc://{folder}/tr", cms_events=f"ipc://{folder}/ce",
                         cms_replay=f"ipc://{folder}/cr")})})


class Dealer:
    """Plays random hands through a daemon, an input at a time."""

    def __init__(self, daemon: TableDaemon, game: str, rng: random.Random) -> None:
        self.daemon, self.game, self.rng = daemon, game, rng
        self.deck: Iterator[Any] = iter(())

    def command(self, data: dict[str, Any], role: str = DEALER_ROLE) -> list[Any]:
        """The records of one command, journaled."""
        table = self.daemon.table
        return self.daemon.apply(table.command(parse_command(data), "dealer", role))

    def inputs(self) -> Iterator[list[Any]]:
        """One input per step, until the hand in play (or a new one) is settled and any
        jackpot verified."""
        table = self.daemon.table
        if table.state == "CLOSED":
            yield self.command({"command": "open"})
        if table.state == "PAUSED" and table.hand is None:
            yield self.command({"command": "continue"}, SUPERVISOR_ROLE)
        if table.hand is None and table.jackpot is None and table.state != "PAUSED":
            second = "xtra_bonus" if self.game == "cali_lowball" else "bonus"
            # wagers left on the layout by a kill are completed, not added to
            for spot, placed in list(table.wagers.items()):
                if placed and second not in placed:
                    yield self.command({"command": "place", "spot": spot, "wager": second,
                                        "amount": placed["ante"]})
            spots = [] if any(table.wagers.values()) else \
                self.rng.sample(range(1, 8), self.rng.randint(1, 4))
            for spot in spots:
                ante = self.rng.choice((500, 1000, 2500))
                yield self.command({"command": "place", "spot": spot, "wager": "ante",
                                    "amount": ante, "player": f"p{spot}"})
                yield self.command({"command": "place", "spot": spot, "wager": second,
                                    "amount": ante})
                if self.rng.random() < 0.5:
                    extra, amount = ("lowdown_bonus", 500) if self.game == "cali_lowball" \
                        else ("progressive", self.daemon.loaded.config.progressive.wager)
                    yield self.command({"command": "place", "spot": spot, "wager": extra,
                                        "amount": amount})
            yield self.command({"command": "lock"})
            assert table.hand is not None, "the lock was refused"
        stuck = 0
        while (hand := table.hand) is not None:
            if table.state == "PAUSED":
                # a restart mid-hand pauses it: the dealer continues it, or a supervisor voids
                # a hand that cannot go on
                stuck += 1
                if stuck > 2:
                    yield self.command({"command": "void", "reason": "the test's dealer"},
                                       SUPERVISOR_ROLE)
                    assert table.hand is None, f"hand {table.hand_id} is stuck: {table.fault}"
                    break
                yield self.command({"command": "continue"},
                                   DEALER_ROLE if stuck == 1 else SUPERVISOR_ROLE)
                continue
            if hand.cards_expected():
                yield self.card()
                continue
            step = hand.next_step()
            seat = step.seats[0]
            yield self.command({"command": "decide", "spot": seat,
                                "decision": self.decision(hand, step, seat)})
        if table.jackpot is not None:
            yield self.command({"command": "verify_jackpot"}, SUPERVISOR_ROLE)

    def card(self) -> list[Any]:
        table = self.daemon.table
        card = next(self.deck, None)
        if card is None:
            self.deck = iter(self.rng.sample(DECK, 52))
            card = next(self.deck)
        last = table.last_shoe_card
        shoe_seq = 0 if last is None else (last[0] + 1) & 0xFF
        count = (table.shoe_count or 0) + 1
        return self.daemon.apply(table.shoe_card(card, shoe_seq, "", count))

    def decision(self, hand: Any, step: Any, seat: int) -> str:
        if self.game == "three_card_lowball":
            high = [card for card in hand.dealt[seat] if card.rank > 7][:2]
            return "discard:" + ",".join(str(card) for card in high) if high else "stand"
        options = step.options
        for preferred in (("raise", "bet") if seat % 2 else ("check", "bet")):
            if preferred in options:
                return str(preferred)
        return str(options[0])


def replayed_from_seq_1(loaded: LoadedConfig, state: Path) -> Table:
    """The table the whole journal gives, replayed from its first record."""
    table = build_table(loaded)
    with Journal.open_readonly(journal_path(state)) as journal:
        table.replay(wire.to_event(wire.decode_event(record.message))
                     for record in journal.records())
    return table


def state_of(table: Table) -> dict[str, Any]:
    """Everything the table holds, comparable: its fields, and the hand in play as its
    snapshot shows it."""
    fields: dict[str, Any] = {}
    for name, value in vars(table).items():
        if name == "hand":
            continue
        if isinstance(value, set):
            value = sorted(value)
        elif isinstance(value, dict):
            value = {key: dict(inner) if isinstance(inner, dict) else inner
                     for key, inner in value.items()}
        elif name == "settings":
            value = (value.text, value.fingerprint)
        fields[name] = value
    return {"fields": fields, "snapshot": table.snapshot()}


def start(loaded: LoadedConfig, state: Path, context: zmq.Context[Any]
          ) -> tuple[TableDaemon, list[Any]]:
    with structlog.testing.capture_logs() as logs:
        daemon = TableDaemon(loaded, state_dir=state, context=context, durability="batched")
        daemon.start()
    return daemon, logs

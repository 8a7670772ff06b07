"""The stream's fixtures: a ZeroMQ context, a journal, a publisher, and :class:`TableLoop`
(a publisher served from a thread, as the daemon serves it)."""

from __future__ import annotations

import threading
import time
import types
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import pytest
import zmq
from hypothesis import strategies as st

from controller.core.cards import parse_card, parse_cards, DECK
from controller.core.events import (
    CardDealt,
    DecisionMade,
    PhaseStarted,
    Wager,
    WagersLocked,
    field_hints,
    is_record_type,
)
from controller.core.table_events import Fault, HandVoided
from controller.core.vocabulary import Device, FaultCode
from controller.stream import wire
from controller.stream.journal import Journal
from controller.stream.publisher import EventPublisher

from tests.support.waits import DEADLINE_S




TABLE = "CALI-01"


HAND = "CALI-01-000017"


#: A few events of different shapes (cards, nested wagers, tuples, bools, defaults).
SAMPLES: tuple[Any, ...] = (
    WagersLocked("cali_lowball", "paytable-1", (Wager(1, "ante", 500), Wager(1, "bonus", 500))),
    PhaseStarted("hole cards"),
    CardDealt(parse_card("As"), 1, "hole cards"),
    CardDealt(parse_card("Td"), "dealer", "hole cards"),
    DecisionMade(3, "discard", 0, parse_cards("Kc Qh")),
    Fault(FaultCode.SHOE_JAM, "card stuck at the gate", Device.SHOE, True),
    HandVoided(HAND, "supervisor-7", "misdeal", (Wager(2, "ante", 1000),), 150),
)


def sample_events(count: int) -> list[Any]:
    return [SAMPLES[index % len(SAMPLES)] for index in range(count)]


@pytest.fixture
def context() -> Iterator[zmq.Context[Any]]:
    context = zmq.Context()
    yield context
    context.destroy(linger=0)


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    journal = Journal(tmp_path / "state" / "journal.sqlite3", durability="batched")
    yield journal
    journal.close()


@pytest.fixture
def publisher(context: zmq.Context[Any], journal: Journal) -> Iterator[EventPublisher]:
    publisher = EventPublisher(context, table_id=TABLE, pub_endpoint="tcp://127.0.0.1:*",
                               replay_endpoint="tcp://127.0.0.1:*", journal=journal,
                               snapshot=lambda: {"state": "OPEN", "meter": 123456})
    yield publisher
    publisher.close()


def serve(pipe: zmq.Socket[bytes], publisher: EventPublisher,
          handle: Callable[[str, list[Any]], Any]) -> None:
    """A table's loop in a test's thread: the publisher's replay requests answered, and the
    test's ``(command, *args)`` over ``pipe``, each answered ``handle(command, args)``, until
    ``stop``."""
    poller = zmq.Poller()
    poller.register(pipe, zmq.POLLIN)
    for socket in publisher.sockets:
        poller.register(socket, zmq.POLLIN)
    while True:
        ready = dict(poller.poll())
        if any(socket in ready for socket in publisher.sockets):
            publisher.handle_replay()
        if pipe in ready:
            command, *args = pipe.recv_pyobj()
            if command == "stop":
                pipe.send_pyobj(None)
                return
            pipe.send_pyobj(handle(command, args))


class TableLoop:
    """A stand-in for the daemon's main loop: one thread owns the journal and the publisher,
    serves the ROUTER when it is readable, and takes commands from the test over an inproc
    pipe (``append`` events and publish them or not, ``heartbeat``)."""

    def __init__(self, context: zmq.Context[Any], path: Path) -> None:
        self._context = context
        self._path = path
        self._pipe = context.socket(zmq.PAIR)
        self._pipe.bind(f"inproc://table-loop-{id(self)}")
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self.pub_endpoint, self.replay_endpoint = self._reply()

    def call(self, *command: Any) -> Any:
        self._pipe.send_pyobj(command)
        return self._reply()

    def _reply(self) -> Any:
        if not self._pipe.poll(int(DEADLINE_S * 1000), zmq.POLLIN):
            raise AssertionError(f"the table loop did not answer (error: {self.error!r})")
        return self._pipe.recv_pyobj()

    def _run(self) -> None:
        pipe = self._context.socket(zmq.PAIR)
        pipe.connect(f"inproc://table-loop-{id(self)}")
        journal = Journal(self._path, durability="batched")
        publisher = EventPublisher(
            self._context, table_id=TABLE, pub_endpoint="tcp://127.0.0.1:*",
            replay_endpoint="tcp://127.0.0.1:*", journal=journal,
            snapshot=lambda: {"journaled": journal.last_seq})
        try:
            if journal.first_seq > 1:  # as the daemon does at start: not on a replay's turn
                publisher.find_archives()
            pipe.send_pyobj((publisher.pub_endpoint, publisher.replay_endpoint))

            def handle(command: str, args: list[Any]) -> Any:
                if command == "append":  # (events, publish: bool)
                    for event in args[0]:
                        record = journal.append(event, table_id=TABLE, hand_id=HAND)
                        if args[1]:
                            publisher.publish(record)
                        else:  # published, but lost on the way to this subscriber
                            publisher.last_seq = record.seq
                    return journal.last_seq
                if command == "heartbeat":  # (broken_at,), optional
                    return publisher.heartbeat("OPEN", broken_at=(args or [None])[0])
                raise AssertionError(f"no command {command!r} for the table loop")

            serve(pipe, publisher, handle)
        except BaseException as error:  # reported by the next call()
            self.error = error
            raise
        finally:
            publisher.close()
            journal.close()
            pipe.close(linger=0)

    def stop(self) -> None:
        if self._thread.is_alive() and self.error is None:
            self.call("stop")
        self._thread.join(DEADLINE_S)
        self._pipe.close(linger=0)


@pytest.fixture
def table_loop(context: zmq.Context[Any], tmp_path: Path) -> Iterator[TableLoop]:
    loop = TableLoop(context, tmp_path / "journal.sqlite3")
    yield loop
    loop.stop()


TS = datetime(2026, 11, 21, 23, 50, 0, 123456, tzinfo=UTC)


def strategy_for(hint: Any) -> st.SearchStrategy[Any]:
    """Values of an event field's type, derived from its type hint like the wire models are,
    so a new event class is covered by the round-trip test without editing it."""
    if hint is bool:
        return st.booleans()
    if hint is int:   # what the wire carries (a larger integer is refused: test_wire.py)
        return st.integers(-wire.MAX_EVENT_INT, wire.MAX_EVENT_INT)
    if hint is str:
        return st.text(max_size=20)
    if hint is float:
        return st.floats(allow_nan=False, allow_infinity=False)
    if hint is type(None):
        return st.none()
    if isinstance(hint, type) and issubclass(hint, StrEnum):
        return st.sampled_from(hint)
    if hint.__module__ == "controller.core.cards" and hint.__name__ == "Card":
        return st.sampled_from(DECK)
    if is_record_type(hint):
        return st.builds(hint, **{name: strategy_for(field)
                                  for name, field in field_hints(hint).items()})
    origin, args = get_origin(hint), get_args(hint)
    if origin is tuple:
        return st.lists(strategy_for(args[0]), max_size=5).map(tuple)
    if origin in (Union, types.UnionType):
        return st.one_of(*(strategy_for(arg) for arg in args))
    if origin is Literal:
        return st.sampled_from(args)
    raise TypeError(f"no test strategy for {hint!r}")


def next_message(socket: zmq.Socket[bytes], timeout: float = DEADLINE_S) -> list[bytes]:
    """The next multipart message on ``socket``; fail if none within the deadline."""
    if not socket.poll(int(timeout * 1000), zmq.POLLIN):
        raise AssertionError(f"nothing received within {timeout} s")
    return socket.recv_multipart()


def await_subscription(publisher: EventPublisher, sub: zmq.Socket[bytes],
                       timeout: float = DEADLINE_S) -> None:
    """Beat the ZeroMQ slow joiner: send heartbeats until ``sub`` receives one, then discard
    everything already queued, so the test starts with an empty SUB socket."""
    deadline = time.monotonic() + timeout
    while True:
        publisher.heartbeat("OPEN")
        if sub.poll(20, zmq.POLLIN):
            break
        if time.monotonic() > deadline:
            raise AssertionError("the subscription did not reach the publisher in time")
    while sub.poll(0, zmq.POLLIN):
        sub.recv_multipart()

"""The event records (controller/core/events.py) keep the API and behaviour the NamedTuples had,
compiled or pure: each is checked against a NamedTuple of the same name, fields and defaults.
The wire side (schema, bytes, round trips) is tested in tests/stream."""

from __future__ import annotations

import copy
import inspect
import pickle
from collections import namedtuple
from typing import Any, Union

import pytest

from controller.core import events
from controller.core.cards import Card, parse_card, parse_cards
from controller.core.events import (
    CardDealt,
    DecisionMade,
    HandShown,
    PhaseStarted,
    Record,
    Wager,
    WagerSettled,
    field_hints,
    is_record_type,
)
from controller.core.games.base import Decision, NextStep
from controller.core.vocabulary import Phase, WagerKey, WagerResult

RECORDS = sorted({*events.KINDS, Wager, Decision, NextStep}, key=lambda cls: cls.__name__)


def values_for(cls: type[Record]) -> tuple[Any, ...]:
    """Distinct values, one per field (of whatever type: a record checks none)."""
    return tuple(f"{cls.__name__}.{name}" for name in cls._fields)


def reference(cls: type[Record]) -> type[Any]:
    """A NamedTuple with the record's name, fields and defaults."""
    defaults = [parameter.default for parameter in inspect.signature(cls).parameters.values()
                if parameter.default is not inspect.Parameter.empty]
    return namedtuple(cls.__name__, cls._fields, defaults=defaults or None)


@pytest.mark.parametrize("cls", RECORDS, ids=lambda cls: cls.__name__)
def test_a_record_declares_each_field_once_in_order(cls: type[Any]) -> None:
    assert tuple(cls._hints) == cls._fields
    assert tuple(inspect.signature(cls).parameters) == cls._fields
    assert is_record_type(cls) and not issubclass(cls, tuple)


@pytest.mark.parametrize("cls", RECORDS, ids=lambda cls: cls.__name__)
def test_a_record_behaves_as_its_namedtuple(cls: type[Any]) -> None:
    values = values_for(cls)
    record, expected = cls(*values), reference(cls)(*values)
    assert repr(record) == repr(expected)
    if cls is not Decision:  # a Decision reads as it is keyed in ("discard:Kh")
        assert str(record) == str(expected)
    assert record._asdict() == expected._asdict()
    assert list(record._asdict()) == list(cls._fields)
    assert tuple(record) == tuple(expected) and len(record) == len(expected)
    assert [record[index] for index in range(-len(values), len(values))] == \
        [expected[index] for index in range(-len(values), len(values))]
    assert record[1:] == expected[1:]
    with pytest.raises(IndexError):
        record[len(values)]
    *_, last = record
    assert last == values[-1]
    assert cls(**dict(zip(cls._fields, values))) == record
    assert all(getattr(record, name) is value for name, value in zip(cls._fields, values))
    with pytest.raises(TypeError):
        cls(*values, "one too many")


def test_defaults_are_the_namedtuples() -> None:
    assert DecisionMade(3, "stand") == DecisionMade(3, "stand", 0, ())
    assert HandShown("dealer", (), "8-high") == HandShown("dealer", (), "8-high", False)
    assert Decision("raise") == Decision("raise", ())
    assert NextStep("settled") == NextStep("settled", None, (), ())
    with pytest.raises(TypeError):
        CardDealt(parse_card("As"), 1)  # type: ignore[call-arg]  # deliberately: no phase


@pytest.mark.parametrize("cls", RECORDS, ids=lambda cls: cls.__name__)
def test_a_record_is_immutable(cls: type[Any]) -> None:
    record = cls(*values_for(cls))
    for name in cls._fields:
        with pytest.raises(AttributeError, match="can't set attribute"):
            setattr(record, name, "changed")
        with pytest.raises(AttributeError, match="can't delete attribute"):
            delattr(record, name)
    with pytest.raises(AttributeError, match="has no attribute 'colour'"):
        record.colour = "red"
    with pytest.raises(AttributeError):
        del record.colour
    assert tuple(record) == values_for(cls)


def test_equality_and_hash_are_by_type_and_values() -> None:
    card = parse_card("As")
    dealt = CardDealt(card, 1, "hole cards")
    assert dealt == CardDealt(card, 1, "hole cards") and hash(dealt) == hash(
        CardDealt(card, 1, "hole cards"))
    assert not dealt != CardDealt(card, 1, "hole cards")
    assert dealt != CardDealt(card, 2, "hole cards")
    assert Wager(1, "ante", 500) != events.ProgressiveAwarded(1, "ante", 500)  # same shape
    assert dealt != (card, 1, "hole cards") and (card, 1, "hole cards") != dealt
    assert len({dealt, CardDealt(card, 1, "hole cards"), PhaseStarted("flop")}) == 2


def test_a_record_keeps_exactly_the_values_it_is_given() -> None:
    # As a NamedTuple did: compiled code must neither check nor convert (a bool stays a bool);
    # a value of the wrong type is the wire's to refuse (tests/stream/test_event_encoder.py).
    made = DecisionMade(True, 3, 0.0, ["list"])
    assert made.seat is True and made.decision == 3 and type(made.raised) is float
    assert made.cards == ["list"]


@pytest.mark.parametrize("cls", RECORDS, ids=lambda cls: cls.__name__)
def test_pickle_and_copy_give_an_equal_record(cls: type[Any]) -> None:
    record = cls(*values_for(cls))
    for other in (pickle.loads(pickle.dumps(record)), copy.copy(record), copy.deepcopy(record)):
        assert type(other) is cls and other == record


def test_nested_records_pickle() -> None:
    hand = HandShown(4, tuple(parse_cards("As 2d 3c 4h 5s")), "5-high", True)
    locked = events.WagersLocked("cali_lowball", "p1", (Wager(1, "ante", 500),))
    assert pickle.loads(pickle.dumps((hand, locked))) == (hand, locked)


def test_field_hints_are_the_declared_types() -> None:
    assert field_hints(CardDealt) == {"card": Card, "to": Union[int, str], "phase": Phase}
    assert field_hints(events.WagersLocked)["wagers"] == tuple[Wager, ...]
    assert field_hints(WagerSettled) == dict.fromkeys(WagerSettled._fields, int) | {
        "wager": WagerKey, "result": WagerResult, "player": str}
    assert field_hints(NextStep)["to"] == Union[int, str, None]


def test_docstrings_survive_compilation() -> None:
    # The wire schema describes each event by its docstring (tests/stream/test_schema_file.py).
    assert CardDealt.__doc__ == "A card from the shoe, assigned to its recipient by the deal order."
    assert DecisionMade.__doc__.startswith("A player's decision, keyed in by the dealer.")
    assert not PhaseStarted.__doc__

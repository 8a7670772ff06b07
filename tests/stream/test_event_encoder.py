"""The direct event encoder writes exactly the reference bytes, or steps aside.

:func:`controller.stream.wire.reference_encode` (pydantic validation, canonical JSON) defines an
event's bytes; :mod:`controller.stream.event_encoder` writes them without pydantic. For every event
class, on generated values, both give the same bytes; on anything the direct writer is not
sure of (values of another type, a time that is not UTC, a bad table id) it raises ``Unfit``
and :func:`controller.stream.wire.encode` gives the reference's result, error included.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.core import events
from controller.core.cards import parse_card
from controller.stream import event_encoder, wire

from tests.support.stream import HAND, SAMPLES, TABLE, TS, strategy_for

ALL_CLASSES = sorted(wire.EVENT_CLASSES.values(), key=lambda cls: cls.__name__)
WRITER = event_encoder.EnvelopeWriter(wire.EVENT_KINDS, wire.SCHEMA_VERSION)


def outcome(encode: Any, event: Any, **envelope: Any) -> tuple[str, Any]:
    """('bytes', message) or ('error', exception type and text)."""
    try:
        return "bytes", encode(event, **envelope)
    except (wire.WireError, UnicodeEncodeError) as error:
        return "error", (type(error), str(error))


@pytest.mark.parametrize("cls", ALL_CLASSES, ids=lambda cls: cls.__name__)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_same_bytes_as_the_reference_for_every_event_type(cls: type[Any], data: st.DataObject
                                                         ) -> None:
    event = data.draw(strategy_for(cls))
    envelope = dict(
        table_id=data.draw(st.from_regex(r"[A-Za-z0-9_-]{1,32}", fullmatch=True)),
        hand_id=data.draw(st.none() | st.text(min_size=1, max_size=64)),
        seq=data.draw(st.integers(1, 2**62)),
        ts=data.draw(st.datetimes(min_value=datetime(1970, 1, 1), timezones=st.just(UTC))))
    assert outcome(wire.encode, event, **envelope) == \
        outcome(wire.reference_encode, event, **envelope)


@pytest.mark.parametrize("event", SAMPLES, ids=lambda event: type(event).__name__)
def test_ordinary_events_take_the_direct_path(event: Any) -> None:
    direct = WRITER.encode(event, table_id=TABLE, seq=7, ts=event_encoder.timestamp(TS),
                           hand_id=HAND)
    assert direct == wire.reference_encode(event, table_id=TABLE, seq=7, ts=TS, hand_id=HAND)


ACE = parse_card("As")
ODD_VALUES = [
    events.DecisionMade("3", "stand", 0, ()),            # a seat as text
    events.DecisionMade(True, "stand", 0, ()),           # a bool where an int goes
    events.DecisionMade(3, "stand", 0.0, ()),            # a float where an int goes
    events.DecisionMade(3, "discard", 0, [ACE]),         # a list where a tuple goes
    events.DecisionMade(3, "discard", 0, ("As",)),       # card text where a Card goes
    events.CardDealt(ACE, 3.5, "hole cards"),            # a recipient of neither type
    events.CardDealt(ACE, 3, "\ud800"),                  # a lone surrogate
    ("not", "an", "event"),
]


@pytest.mark.parametrize("event", ODD_VALUES, ids=repr)
def test_odd_values_get_the_reference_answer(event: Any) -> None:
    with pytest.raises(event_encoder.Unfit):
        WRITER.encode(event, table_id=TABLE, seq=1, ts=event_encoder.timestamp(TS), hand_id=None)
    envelope = dict(table_id=TABLE, seq=1, ts=TS, hand_id=None)
    assert outcome(wire.encode, event, **envelope) == \
        outcome(wire.reference_encode, event, **envelope)


@pytest.mark.parametrize("envelope", [
    dict(table_id="bad id!", seq=1, ts=TS, hand_id=None),
    dict(table_id="", seq=1, ts=TS, hand_id=None),
    dict(table_id="T" * 33, seq=1, ts=TS, hand_id=None),
    dict(table_id=TABLE, seq=0, ts=TS, hand_id=None),
    dict(table_id=TABLE, seq=True, ts=TS, hand_id=None),
    dict(table_id=TABLE, seq=1, ts=TS, hand_id=""),
    dict(table_id=TABLE, seq=1, ts=TS, hand_id="h" * 65),
    dict(table_id=TABLE, seq=1, ts=TS.replace(tzinfo=None), hand_id=None),
    dict(table_id=TABLE, seq=1, ts=TS.astimezone(timezone(timedelta(hours=-5))), hand_id=None),
    dict(table_id=TABLE, seq=1, ts=TS.astimezone(timezone(timedelta(0))), hand_id=None),
], ids=repr)
def test_odd_envelopes_get_the_reference_answer(envelope: dict[str, Any]) -> None:
    assert outcome(wire.encode, SAMPLES[1], **envelope) == \
        outcome(wire.reference_encode, SAMPLES[1], **envelope)


def test_the_time_text_is_the_one_of_the_time_given() -> None:
    first = datetime(2026, 11, 21, 23, 50, tzinfo=UTC)
    second = first + timedelta(microseconds=1)
    assert event_encoder.timestamp(first) == "2026-11-21T23:50:00.000000Z"
    assert event_encoder.timestamp(second) == "2026-11-21T23:50:00.000001Z"
    assert event_encoder.timestamp(first) == "2026-11-21T23:50:00.000000Z"

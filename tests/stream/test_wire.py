"""The wire format: generated models, canonical bytes, round trips, errors that name the field."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from controller.core import events, table_events
from controller.core.cards import Card, parse_card
from controller.stream import wire

from tests.support.stream import HAND, SAMPLES, TABLE, TS, strategy_for

ALL_CLASSES = sorted(wire.EVENT_CLASSES.values(), key=lambda cls: cls.__name__)


def test_every_event_class_has_an_envelope() -> None:
    assert set(wire.EVENT_CLASSES.values()) == set(events.KINDS) | set(table_events.KINDS)
    assert set(wire.ENVELOPES) == set(events.KINDS.values()) | set(table_events.KINDS.values())


def test_encode_is_canonical_json() -> None:
    message = wire.encode(SAMPLES[0], table_id=TABLE, seq=42, ts=TS, hand_id=HAND)
    assert message == (
        b'{"data":{"game":"cali_lowball","paytable":"paytable-1","wagers":['
        b'{"amount":500,"player":"","seat":1,"wager":"ante"},'
        b'{"amount":500,"player":"","seat":1,"wager":"bonus"}]},'
        b'"hand_id":"CALI-01-000017","schema_version":%d,"seq":42,"table_id":"CALI-01",'
        b'"ts":"2026-11-21T23:50:00.123456Z","type":"wagers_locked"}' % wire.SCHEMA_VERSION)


def test_cards_travel_as_text() -> None:
    message = wire.encode(SAMPLES[4], table_id=TABLE, seq=1, ts=TS, hand_id=None)
    assert json.loads(message)["data"] == {"seat": 3, "decision": "discard", "raised": 0,
                                           "cards": ["Kc", "Qh"]}


@pytest.mark.parametrize("cls", ALL_CLASSES, ids=lambda cls: cls.__name__)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_round_trip_every_event_type(cls: type[Any], data: st.DataObject) -> None:
    event = data.draw(strategy_for(cls))
    table_id = data.draw(st.from_regex(r"[A-Za-z0-9_-]{1,32}", fullmatch=True))
    hand_id = data.draw(st.none() | st.text(min_size=1, max_size=64))
    seq = data.draw(st.integers(1, 2**62))
    ts = data.draw(st.datetimes(min_value=datetime(1970, 1, 1), timezones=st.just(UTC)))
    message = wire.encode(event, table_id=table_id, seq=seq, ts=ts, hand_id=hand_id)
    envelope = wire.decode(message)
    assert isinstance(envelope, wire.EnvelopeBase)
    assert wire.to_event(envelope) == event
    assert type(wire.to_event(envelope)) is cls
    assert (envelope.table_id, envelope.seq, envelope.ts, envelope.hand_id) == (
        table_id, seq, ts, hand_id)
    assert envelope.type == wire.EVENT_KINDS[cls]
    assert wire.dumps(envelope) == message  # one byte form per message
    assert TypeAdapter(wire.Envelope).validate_json(message) == envelope


def test_a_new_event_class_gets_a_wire_model_from_its_hints() -> None:
    class ChipsCounted(NamedTuple):
        """A new event nobody wrote a model for."""
        spot: int
        cards: tuple[Card, ...]
        stacks: tuple[events.Wager, ...]
        who: events.Recipient = "dealer"

    model = wire.data_model(ChipsCounted)
    value: Any = model.model_validate_json(
        '{"spot":2,"cards":["As"],"stacks":[{"seat":1,"wager":"ante","amount":5,"player":""}],'
        '"who":3}')
    assert value.cards == (parse_card("As"),)
    assert model.__doc__ == "A new event nobody wrote a model for."
    assert set(model.model_json_schema()["required"]) == {"spot", "cards", "stacks", "who"}


def test_a_field_type_without_a_wire_form_is_refused_by_name() -> None:
    class Odd(NamedTuple):
        blob: bytes

    with pytest.raises(TypeError, match=r"Odd\.blob"):
        wire.data_model(Odd)


GOOD = wire.encode(SAMPLES[3], table_id=TABLE, seq=7, ts=TS, hand_id=HAND)


@pytest.mark.parametrize("message, problem", [
    (b"{", "not JSON"),
    (b"[1]", "message: must be a JSON object"),
    (b"{}", "type: missing"),
    (GOOD.replace(b'"card_dealt"', b'"card_flipped"'), "type: unknown message type 'card_flipped'"),
    (GOOD.replace(b'"Td"', b'"td"'), "data.card: card 'td' must be written canonically as 'Td'"),
    (GOOD.replace(b'"Td"', b'"Xx"'), "data.card: unknown card 'Xx'"),
    (GOOD.replace(b'"Td"', b"10"), "data.card: a card is text"),
    (GOOD.replace(b'"seq":7', b'"seq":0'), "seq: Input should be greater than 0"),
    (GOOD.replace(b'"seq":7', b'"seq":"7"'), "seq: Input should be a valid integer"),
    (GOOD.replace(b'"schema_version":%d' % wire.SCHEMA_VERSION, b'"schema_version":99'),
     "schema_version:"),
    (GOOD.replace(b'"phase":"hole cards"', b'"phase":"first_deal"'), "data.phase: Input should be"),
    (GOOD.replace(b'Z"', b'+01:00"'), "ts: must be a UTC time"),
    (GOOD.replace(b'.123456Z"', b'"'), "ts: must be a UTC time"),
    (GOOD.replace(b'"table_id":"CALI-01"', b'"table_id":"CALI 01"'), "table_id:"),
    (GOOD.replace(b'"phase"', b'"colour":"red","phase"'), "data.colour: unknown key"),
    (GOOD.replace(b'"hand_id":"CALI-01-000017",', b""), "hand_id: Field required"),
    (GOOD.replace(b'"to":"dealer"', b'"to":true'), "data.to"),
    (GOOD.replace(b'"to":"dealer"', b'"to":9007199254740992'), "data.to"),   # 2**53
])
def test_malformed_messages_are_refused_naming_the_field(message: bytes, problem: str) -> None:
    with pytest.raises(wire.WireError) as caught:
        wire.decode(message)
    assert problem in str(caught.value)


def test_encode_refuses_an_event_with_a_wrongly_typed_field() -> None:
    with pytest.raises(wire.WireError, match="data.seat"):
        wire.encode(events.DecisionMade("3", "stand"), table_id=TABLE, seq=1, ts=TS,
                    hand_id=None)
    with pytest.raises(wire.WireError, match="is not an event type"):
        wire.encode(("not", "an", "event"), table_id=TABLE, seq=1, ts=TS, hand_id=None)


@pytest.mark.parametrize("amount", [2**53, -(2**53), 10**20])
def test_an_integer_no_json_reader_holds_exactly_is_refused_by_name(amount: int) -> None:
    """JavaScript reads integers exactly only up to 2**53 - 1, and the floor's views cast
    amounts to bigint: a number past the bound is the writer's error, never a message."""
    with pytest.raises(wire.WireError, match="data.amount: Input should be"):
        wire.encode(events.WagerSettled(1, "ante", amount, "win", 5), table_id=TABLE, seq=1,
                    ts=TS, hand_id=None)
    assert wire.decode(wire.encode(events.WagerSettled(1, "ante", 2**53 - 1, "win", 5),
                                   table_id=TABLE, seq=1, ts=TS, hand_id=None))


def test_ts_is_utc_with_a_trailing_z() -> None:
    eastern = TS.astimezone(timezone(timedelta(hours=-5)))
    with pytest.raises(wire.WireError, match="ts: must be a UTC time"):
        wire.encode(SAMPLES[1], table_id=TABLE, seq=1, ts=eastern, hand_id=None)
    with pytest.raises(wire.WireError, match="ts: must be a UTC time"):
        wire.encode(SAMPLES[1], table_id=TABLE, seq=1, ts=TS.replace(tzinfo=None), hand_id=None)
    whole_second = TS.replace(microsecond=0)
    message = wire.encode(SAMPLES[1], table_id=TABLE, seq=1, ts=whole_second, hand_id=None)
    assert b'"ts":"2026-11-21T23:50:00.000000Z"' in message


HEAD = "5d41a3c8f0e0d6b2c7a9e4f1b3d5c7e9a1b3c5d7e9f1a3b5c7d9e1f3a5b7c9d1"


def test_heartbeat_is_a_message_but_not_an_event() -> None:
    beat = wire.encode_heartbeat(table_id=TABLE, seq=41, hash=HEAD, broken_at=None, ts=TS,
                                 state="OPEN")
    assert json.loads(beat) == {"schema_version": wire.SCHEMA_VERSION, "table_id": TABLE,
                                "type": "heartbeat",
                                "ts": "2026-11-21T23:50:00.123456Z", "seq": 41, "hash": HEAD,
                                "hash_seq": 41, "journal_broken_at": None, "journal_verified_at_start": None,
                                "journal_verified_through": None, "state": "OPEN"}
    parsed = wire.decode(beat)
    assert isinstance(parsed, wire.Heartbeat) and parsed.seq == 41
    assert wire.topic_of(parsed) == b"surveillance.CALI-01.heartbeat"
    with pytest.raises(wire.WireError, match="not a journaled event"):
        wire.decode_event(beat)
    with pytest.raises(TypeError):
        wire.to_event(parsed)  # type: ignore[arg-type]  # deliberately: it carries no event
    with pytest.raises(wire.WireError, match="state"):
        wire.encode_heartbeat(table_id=TABLE, seq=41, hash=HEAD, broken_at=None, ts=TS,
                              state="ASLEEP")
    with pytest.raises(wire.WireError, match="hash"):
        wire.encode_heartbeat(table_id=TABLE, seq=41, hash="not-a-hash", broken_at=None, ts=TS,
                              state="OPEN")


def test_topics_are_table_then_type() -> None:
    envelope = wire.decode(GOOD)
    assert wire.topic_of(envelope) == b"surveillance.CALI-01.card_dealt"
    assert wire.topic_of(envelope).startswith(wire.topic(TABLE))
    assert wire.topic(TABLE) == b"surveillance.CALI-01."


def test_json_schema_covers_every_message_type() -> None:
    schema = wire.json_schema()
    mapping = schema["discriminator"]["mapping"]
    assert set(mapping) == set(wire.ENVELOPES) | {"heartbeat"}
    card = schema["$defs"]["CardDealtData"]["properties"]["card"]
    assert card["type"] == "string" and card["pattern"] == "^[A2-9TJQK][cdhs]$"
    envelope = schema["$defs"]["CardDealtEnvelope"]
    assert envelope["additionalProperties"] is False
    assert set(envelope["required"]) == {"schema_version", "table_id", "seq", "ts", "hand_id",
                                         "type", "data"}
    json.dumps(schema)  # serialisable as is


@pytest.mark.parametrize("request_bytes, problem", [
    (b"", "not JSON"),
    (b"\xff\xfe", "not JSON"),
    (b"[]", "must be a JSON object"),
    (b"{}", "request: missing (expected 'snapshot' or 'replay')"),
    (b'{"request":"everything"}', "request: unknown request 'everything'"),
    (b'{"request":"replay"}', "after: Field required"),
    (b'{"request":"replay","after":-1}', "after: Input should be greater than or equal to 0"),
    (b'{"request":"replay","after":true}', "after: Input should be a valid integer"),
    (b'{"request":"replay","after":0,"limit":0}', "limit: Input should be greater than 0"),
    (b'{"request":"snapshot","please":1}', "please: unknown key"),
])
def test_malformed_requests_are_refused_naming_the_field(request_bytes: bytes,
                                                         problem: str) -> None:
    with pytest.raises(wire.WireError) as caught:
        wire.parse_request(request_bytes)
    assert problem in str(caught.value)


def test_replies_parse() -> None:
    assert wire.decode_reply(wire.snapshot_reply(3, {"a": 1})) == wire.SnapshotReply(
        type="snapshot", seq=3, state={"a": 1})
    end, error, event = (wire.decode_reply(wire.replay_end(9)),
                         wire.decode_reply(wire.error_reply("no")), wire.decode_reply(GOOD))
    assert isinstance(end, wire.ReplayEnd) and end.last == 9
    assert isinstance(error, wire.ErrorReply) and error.reason == "no"
    assert isinstance(event, wire.EnvelopeBase) and event.seq == 7


def test_event_table_lists_every_type_and_field() -> None:
    table = wire.render_event_table()
    for name, cls in wire.EVENT_CLASSES.items():
        row = next(line for line in table.splitlines() if line.startswith(f"| `{name}` |"))
        fields: tuple[str, ...] = getattr(cls, "_fields")   # a record's or a NamedTuple's
        for field in fields:
            assert f"`{field}`:" in row
    assert ('`wagers`: list of {seat: int, wager: one of "ante", "xtra_bonus", "lowdown_bonus", '
            '"raise", "bonus", "progressive", amount: int, player: string}') in table
    assert '`card`: card ("As")' in table


def test_module_main_prints_schema_and_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert wire.main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out)["discriminator"]["propertyName"] == "type"
    assert wire.main(["table"]) == 0
    assert capsys.readouterr().out.startswith("| `type` |")
    assert wire.main(["nonsense"]) == 2


def test_event_envelope_union_refuses_a_heartbeat() -> None:
    adapter = TypeAdapter(wire.EventEnvelope)
    assert adapter.validate_json(GOOD).seq == 7
    with pytest.raises(ValueError):
        adapter.validate_json(wire.encode_heartbeat(table_id=TABLE, seq=1, hash=HEAD,
                                                    broken_at=None, ts=TS, state="OPEN"))

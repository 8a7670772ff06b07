"""The event stream's wire format: what integrators parse, what the journal stores and hashes.

Every journaled event travels as one JSON *envelope*::

    {"data": {...}, "hand_id": "CALI-01-000017", "schema_version": 3, "seq": 42,
     "table_id": "CALI-01", "ts": "2026-11-21T23:50:00.123456Z", "type": "card_dealt"}

The ``data`` models are generated from the event classes of :mod:`controller.core.events` (records)
and :mod:`controller.core.table_events` (NamedTuples), from their fields' type hints
(:func:`controller.core.events.field_hints`), so a new event class gets its wire form without
anyone writing a model by hand, and the schema cannot drift from the engine. Cards travel as
canonical text (``"As"``), nested records (``Wager``) as nested objects, a value of a
vocabulary (:mod:`controller.core.vocabulary`) as its text, which the schema lists.

The bytes are *canonical* JSON (sorted keys, no spaces, UTF-8): the journal hashes exactly
the bytes the publisher sends, so the same event always gives the same bytes and a subscriber
can recompute the journal's hash chain from what it received.

Besides events this module defines the messages that are not journaled: the heartbeat on the
PUB socket, and the snapshot/replay requests and replies of the ROUTER socket
(:mod:`controller.stream.publisher`). Every parse failure raises :class:`WireError` naming the field
and what was wrong. ``python -m controller.stream.wire schema`` prints the JSON Schema,
``python -m controller.stream.wire table`` the event table of ``docs/event-stream.md``.
"""

from __future__ import annotations

import json
import re
import sys
import types
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    Strict,
    TypeAdapter,
    ValidationError,
    WithJsonSchema,
    create_model,
)

from controller.errors import LowballError
from controller.stream import event_encoder

from controller.core import table_events
from controller.core import events as hand_events
from controller.core.canonical_json import canonical_json as canonical_json
from controller.core.cards import Card, parse_card
from controller.settings.validation import problems_of

#: The version every message is written with. 2: the vocabularies are enums in the schema and a
#: device's fault is a ``device_fault`` event (version 1 wrote it as a ``device_status``
#: ``fault:<code>``). 3: each wager, settlement and award names its ``player``
#: (:data:`ADDED_FIELDS`), and a linked table journals its pool (``pool_meter``,
#: ``pool_link``, ``jackpot_claimed``). Readers accept :data:`SCHEMA_VERSIONS`: a table's
#: journal outlives any one release.
SCHEMA_VERSION = 3
SCHEMA_VERSIONS = (1, 2, 3)
SchemaVersion = Literal[1, 2, 3]
HEARTBEAT = "heartbeat"
#: ROUTER replies; with ``heartbeat`` these names are reserved and no event may take them.
SNAPSHOT, REPLAY_END, ERROR = "snapshot", "replay_end", "error"
REPLAY_ARCHIVED, REPLAY_GAP = "replay_archived", "replay_gap"
#: The longest text a replay reply carries (an archived journal's name, a gap's reason).
MAX_REASON_CHARS = 2000
#: The most records one replay request is answered with (a bigger ``limit`` is cut to it):
#: a reply never outgrows the ROUTER's send queue, and one request never stalls the table.
MAX_REPLAY_BATCH = 1000

#: Event class -> wire name, hand and table events together.
EVENT_KINDS: dict[type, str] = {**hand_events.KINDS, **table_events.KINDS}
#: Wire name -> event class.
EVENT_CLASSES: dict[str, type] = {name: cls for cls, name in EVENT_KINDS.items()}
if len(EVENT_CLASSES) != len(EVENT_KINDS):  # pragma: no cover - guards a future rename
    raise RuntimeError("two event classes share one wire name")
if reserved := {HEARTBEAT, SNAPSHOT, REPLAY_END, ERROR} & EVENT_CLASSES.keys():  # pragma: no cover
    raise RuntimeError(f"event wire names {sorted(reserved)} are reserved for stream messages")


class WireError(LowballError, ValueError):
    """A message could not be read. ``problems`` holds one ``field: what was wrong`` each."""

    def __init__(self, problems: Iterable[str]):
        self.problems = tuple(problems)
        super().__init__("; ".join(self.problems))


# --- field types -------------------------------------------------------------------------------

def _card(value: Any) -> Card:
    if isinstance(value, Card):
        return value
    if not isinstance(value, str):
        raise ValueError(f"a card is text such as 'As', not {type(value).__name__}")
    card = parse_card(value)  # CardError (a ValueError) names what is wrong
    if str(card) != value:
        raise ValueError(f"card {value!r} must be written canonically as {str(card)!r}")
    return card


#: A card on the wire: canonical rank + suit text.
CardText = Annotated[
    Card,
    PlainValidator(_card, json_schema_input_type=str),
    PlainSerializer(str, return_type=str),
    WithJsonSchema({"type": "string", "pattern": "^[A2-9TJQK][cdhs]$",
                    "description": "a card: rank A 2-9 T J Q K, suit c d h s, e.g. 'As'"}),
]


def _utc(value: datetime) -> datetime:
    if value.tzinfo is None or value.utcoffset() != timedelta(0):
        raise ValueError("must be a UTC time ending in Z, e.g. 2026-11-21T23:50:00.123456Z")
    return value.astimezone(UTC)


def format_ts(value: datetime) -> str:
    """``2026-11-21T23:50:00.123456Z``: always microseconds, always Z (one text per instant)."""
    try:
        # The same text, kept from the last call: a transaction's records and its journal
        # row share one time, and isoformat costs microseconds each time.
        return event_encoder.timestamp(value)
    except event_encoder.Unfit:  # not an aware UTC datetime: _utc says what is wrong
        return _utc(value).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


UtcTime = Annotated[datetime, AfterValidator(_utc),
                    PlainSerializer(format_ts, return_type=str, when_used="json")]
#: Same rule as the table config's ``table.id``; a topic is ``<family>.<table_id>.<type>``.
TableId = Annotated[str, Field(min_length=1, max_length=32, pattern=r"^[A-Za-z0-9_-]+$")]
HandId = Annotated[str, Field(min_length=1, max_length=64)]
#: The largest seq a message may name: the journal keeps seqs as SQLite's 64-bit integers.
MAX_SEQ = 2**63 - 1
Seq = Annotated[int, Field(gt=0, le=MAX_SEQ)]
#: Every other integer of an event: see :data:`event_encoder.MAX_EVENT_INT`.
MAX_EVENT_INT = event_encoder.MAX_EVENT_INT
EventInt = Annotated[int, Field(ge=-MAX_EVENT_INT, le=MAX_EVENT_INT)]

_SCALARS = (str, bool, float)


def vocabulary(enum: type[StrEnum]) -> Any:
    """A field of a vocabulary: its members' texts on the wire and in the schema (``enum``).
    An event may carry a member or its text (the same string)."""
    return Annotated[enum, Strict(False)]


_CONFIG = ConfigDict(extra="forbid", frozen=True, strict=True)
#: model value -> event value; None when they are the same object (scalars, cards).
Converter = Callable[[Any], Any] | None


#: A record class (an event record or a NamedTuple): its values travel as objects.
_is_record = hand_events.is_record_type
_field_hints = hand_events.field_hints


def _wire_type(hint: Any, where: str) -> tuple[Any, Converter]:
    """The pydantic annotation for one field's type hint, and how to turn it back."""
    if hint is Card:
        return CardText, None
    if hint is int:
        return EventInt, None
    if hint in _SCALARS or hint is type(None):
        return hint, None
    if isinstance(hint, type) and issubclass(hint, StrEnum):
        return vocabulary(hint), None
    if _is_record(hint):
        model = data_model(hint)
        return model, _record_converter(hint)
    origin, args = get_origin(hint), get_args(hint)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        inner, convert = _wire_type(args[0], where)
        items = tuple.__class_getitem__((inner, ...))  # tuple[inner, ...], built at run time
        if convert is None:
            return items, None
        return items, lambda items: tuple(convert(item) for item in items)
    if origin is Literal:
        return hint, None
    if origin in (Union, types.UnionType):
        members = [_wire_type(arg, where) for arg in args]
        if any(convert is not None for _, convert in members):
            raise TypeError(f"{where}: a union of records has no wire form")
        return Union[tuple(annotation for annotation, _ in members)], None  # noqa: UP007
    raise TypeError(f"{where}: type {hint!r} has no wire form; add it to controller.stream.wire")


_DATA_MODELS: dict[type, type[BaseModel]] = {}
_CONVERTERS: dict[type, dict[str, Converter]] = {}


def data_model(cls: type) -> type[BaseModel]:
    """The pydantic model of one event class's fields, generated from their type hints.

    Every field is required on the wire (the encoder always writes them all), even where the
    class has a default: integrators get one shape per type, with no optional fields."""
    if cls in _DATA_MODELS:
        return _DATA_MODELS[cls]
    fields: dict[str, Any] = {}
    converters: dict[str, Converter] = {}
    for name, hint in _field_hints(cls).items():
        fields[name], converters[name] = _wire_type(hint, f"{cls.__name__}.{name}")
    doc = cls.__doc__ if cls.__doc__ and not cls.__doc__.startswith(f"{cls.__name__}(") else None
    definitions: dict[str, Any] = {name: (annotation, ...) for name, annotation in fields.items()}
    model: type[BaseModel] = create_model(f"{cls.__name__}Data", __config__=_CONFIG, __doc__=doc,
                         __module__=__name__, **definitions)
    _DATA_MODELS[cls], _CONVERTERS[cls] = model, converters
    return model


def _record_converter(cls: type) -> Callable[[BaseModel], Any]:
    def convert(model: BaseModel) -> Any:
        return cls(**{name: value if (convert_field := _CONVERTERS[cls][name]) is None
                      else convert_field(value)
                      for name, value in model})
    return convert


def _python_data(event: Any) -> Any:
    """An event as plain Python for strict validation: records become dicts, tuples and
    cards stay as they are."""
    if _is_record(type(event)):
        return {name: _python_data(value) for name, value in zip(event._fields, event)}
    if isinstance(event, tuple):
        return tuple(_python_data(item) for item in event)
    return event


# --- envelopes ---------------------------------------------------------------------------------

class EnvelopeBase(BaseModel):
    """Every journaled event's envelope. ``seq`` counts the table's events from 1 with no gap,
    for the table's whole life (the journal that continues a quarantined one goes on from its
    last seq); ``hand_id`` is null between hands."""

    model_config = _CONFIG

    schema_version: SchemaVersion
    table_id: TableId
    seq: Seq
    ts: UtcTime
    hand_id: HandId | None
    if TYPE_CHECKING:  # declared by each generated envelope (ENVELOPES), for the type checker
        type: str
        data: BaseModel


class Heartbeat(BaseModel):
    """Sent on the PUB socket every second; never journaled. ``seq`` is the last journaled
    seq (0 before the first), so a subscriber that has seen less knows it missed events even
    when the table is quiet; ``hash`` is that record's chain hash (64 zeros before the first),
    so a subscriber that kept the hash of a seq it has seen detects a rewritten history.
    ``journal_broken_at`` is null, or the first bad seq of a journal whose hash chain failed
    the daemon's check (at start, or while it ran): the table is then held, no hand can go on,
    and ``seq`` is the last seq before it (nothing from it on is the table's record).
    ``journal_verified_at_start`` is the seq through which the daemon verified the chain when
    it started, ``journal_verified_through`` the seq through which it has verified it since
    (it reads back what it journaled at every heartbeat); null from a table that does not
    say (a version 1 or 2 heartbeat). ``hash_seq`` is the seq whose chain hash ``hash`` is:
    ``seq`` itself, but on the table and CMS families while a hand is in play the hand's first
    record (``hand_started``), since the hash of a record after a card the family holds pins
    that card (a card record's hash is recomputed from a guess of it); null from a table that
    does not say (``hash`` is then ``seq``'s)."""

    model_config = _CONFIG

    schema_version: SchemaVersion
    table_id: TableId
    type: Literal["heartbeat"]
    ts: UtcTime
    seq: Annotated[int, Field(ge=0)]
    hash: Annotated[str, Field(pattern="^[0-9a-f]{64}$")]
    hash_seq: Annotated[int, Field(ge=0, le=MAX_SEQ)] | None = None
    journal_broken_at: Annotated[int, Field(gt=0)] | None
    journal_verified_at_start: Annotated[int, Field(ge=0, le=MAX_SEQ)] | None = None
    journal_verified_through: Annotated[int, Field(ge=0, le=MAX_SEQ)] | None = None
    state: Annotated[table_events.TableState, Strict(False)]  # a vocabulary()


def _envelope_model(name: str, cls: type) -> type[EnvelopeBase]:
    fields: dict[str, Any] = {"type": (Literal[name], ...), "data": (data_model(cls), ...)}
    return create_model(f"{cls.__name__}Envelope", __base__=EnvelopeBase, __module__=__name__,
                        **fields)


#: Wire name -> envelope model (``type: Literal[name]``, ``data: <generated model>``).
ENVELOPES: dict[str, type[EnvelopeBase]] = {
    name: _envelope_model(name, cls) for name, cls in EVENT_CLASSES.items()}

#: Any journaled event's envelope, discriminated on ``type``. (It and the unions below are
#: built at run time from ENVELOPES: types for pydantic, values for the type checker.)
EventEnvelope: Any = Annotated[Union[tuple(ENVELOPES.values())],  # noqa: UP007
                               Field(discriminator="type")]
#: Any message on the PUB socket: an event envelope or a heartbeat.
Envelope: Any = Annotated[Union[(*ENVELOPES.values(), Heartbeat)],  # noqa: UP007
                          Field(discriminator="type")]
_ENVELOPE: TypeAdapter[EnvelopeBase | Heartbeat] = TypeAdapter(Envelope)


def _problems(error: ValidationError, what: str = "type") -> list[str]:
    """One ``field: problem`` line per error, without pydantic's union tags in the path."""
    lines = []
    for line, detail in zip(problems_of(error), error.errors(include_url=False)):
        tag = (detail.get("ctx") or {}).get("tag")
        if detail["type"] == "union_tag_invalid":
            line = f"{what}: unknown {'message type' if what == 'type' else what} {tag!r}"
        elif detail["type"] == "union_tag_not_found":
            line = f"{what}: missing" + (" (every message names its type)"
                                         if what == "type" else "")
        elif detail["type"] == "json_invalid":
            line = f"not JSON: {detail['msg'].removeprefix('Invalid JSON: ')}"
        elif not detail["loc"]:
            line = f"message: must be a JSON object ({detail['msg']})"
        elif detail["loc"] and isinstance(detail["loc"][0], str) and detail["loc"][0] in _TAGS:
            line = line.removeprefix(f"{detail['loc'][0]}.")
        lines.append(line)
    return lines


def envelope_of(event: Any, *, table_id: str, seq: int, ts: datetime,
                hand_id: str | None) -> EnvelopeBase:
    """The validated envelope of ``event``; :class:`WireError` if a field has the wrong type."""
    try:
        model = ENVELOPES[EVENT_KINDS[type(event)]]
    except KeyError:
        raise WireError([f"{type(event).__name__} is not an event type"]) from None
    try:
        return model.model_validate({
            "schema_version": SCHEMA_VERSION, "table_id": table_id, "seq": seq, "ts": ts,
            "hand_id": hand_id, "type": EVENT_KINDS[type(event)],
            "data": _python_data(event)})
    except ValidationError as error:
        raise WireError(_problems(error)) from None


def dumps(message: BaseModel) -> bytes:
    """A model's canonical JSON bytes."""
    return canonical_json(message.model_dump(mode="json"))


def encode(event: Any, *, table_id: str, seq: int, ts: datetime, hand_id: str | None) -> bytes:
    """The canonical message bytes of ``event``: what is journaled, hashed and published.

    Written directly by :mod:`controller.stream.event_encoder` when every value is of its exact
    type; anything else goes through :func:`reference_encode`, which names what is wrong."""
    try:
        return _ENVELOPE_WRITER.encode(event, table_id=table_id, seq=seq,
                                       ts=event_encoder.timestamp(ts), hand_id=hand_id)
    except event_encoder.Unfit:
        return reference_encode(event, table_id=table_id, seq=seq, ts=ts, hand_id=hand_id)


def reference_encode(event: Any, *, table_id: str, seq: int, ts: datetime,
                     hand_id: str | None) -> bytes:
    """The definition of an event's bytes: the envelope validated by its pydantic model,
    dumped as canonical JSON; :class:`WireError` names a field of the wrong type."""
    return dumps(envelope_of(event, table_id=table_id, seq=seq, ts=ts, hand_id=hand_id))


_ENVELOPE_WRITER = event_encoder.EnvelopeWriter(EVENT_KINDS, SCHEMA_VERSION)


def encode_heartbeat(*, table_id: str, seq: int, hash: str, broken_at: int | None,
                     ts: datetime, state: str, verified_at_start: int | None = None,
                     verified_through: int | None = None, hash_seq: int | None = None) -> bytes:
    try:
        beat = Heartbeat.model_validate({"schema_version": SCHEMA_VERSION, "table_id": table_id,
                                         "type": HEARTBEAT, "ts": ts, "seq": seq,
                                         "hash": hash, "journal_broken_at": broken_at,
                                         "hash_seq": seq if hash_seq is None else hash_seq,
                                         "journal_verified_at_start": verified_at_start,
                                         "journal_verified_through": verified_through,
                                         "state": state})
    except ValidationError as error:
        raise WireError(_problems(error)) from None
    return dumps(beat)


#: Fields added to an event type since it was first journaled, with the value a record
#: journaled before them is read with (a table's journal outlives any one release).
ADDED_FIELDS: dict[str, dict[str, Any]] = {
    # the shoe's card count (0: not reported, the record predates it) and the pause mark
    "shoe_card": {"count": 0, "during_pause": False},
    # who played the seat (version 3): a record journaled before it names no player
    "wager_settled": {"player": ""},
    "progressive_awarded": {"player": ""},
    # the meter before the break, the hold until a supervisor confirms the meter, the
    # jackpot carried while it awaits verification, the last hand number used, and the
    # anchor of the archived records ("": none recorded, so none are served as verified)
    "journal_continued": {"verified_meter": None, "verified_meter_from": "none",
                          "meter_held": False, "pending_jackpots": [], "hand_number": 0,
                          "verified_hash": ""},
    # what signed a command, who sent it, the id its client gave it (not recorded then), and
    # the screen a supervisor's command came from
    "command_accepted": {"credential": "unrecorded", "client": "", "request_id": "",
                         "asked_from": ""},
    # whether a supervisor may burn the cards out of play and go on (none could then)
    "fault": {"burnable": False},
    # the dealer signed in at the table (none could sign in then)
    "hand_started": {"dealer": ""},
}
#: Lists of nested records that gained fields: event type -> (field, the nested record's added
#: fields with their value for an older record).
ADDED_NESTED_FIELDS: dict[str, tuple[str, dict[str, Any]]] = {
    "wagers_locked": ("wagers", {"player": ""}),
    "hand_voided": ("returned", {"player": ""}),
}


#: The status a version 1 ``device_status`` record gave a device's fault: ``fault:<code>``.
_V1_FAULT = "fault:"


def decode(message: bytes | str) -> EnvelopeBase | Heartbeat:
    """Parse any PUB message (event envelope or heartbeat); :class:`WireError` names what is
    wrong with a malformed one. An older record is read in today's form
    (:func:`_in_current_form`)."""
    return _validate(_ENVELOPE, message)


Message = TypeVar("Message")


def _validate(adapter: TypeAdapter[Message], message: bytes | str) -> Message:
    try:
        return adapter.validate_json(message)
    except ValidationError as error:
        upgraded = _in_current_form(message)
        if upgraded is not None:
            try:
                return adapter.validate_json(json.dumps(upgraded))
            except ValidationError:
                pass
        raise WireError(_problems(error)) from None


def _in_current_form(message: bytes | str) -> dict[str, Any] | None:
    """An envelope journaled by an older release, as data in today's form, or None when it is
    not one that differs:

    - a record journaled before a field of its type was added (:data:`ADDED_FIELDS`, and
      :data:`ADDED_NESTED_FIELDS` for the records in its lists) gets the field's documented
      value (a version 1 or 2 ``wager_settled`` reads with ``player`` "");
    - a version 1 ``device_status`` whose status is ``fault:<code>`` is the ``device_fault``
      it stands for (same seq, time and hand; its journaled bytes are unchanged).
    """
    try:
        data = json.loads(message)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("data"), dict):
        return None
    body, kind, changed = data["data"], data.get("type"), False
    if not isinstance(kind, str):
        return None
    status = body.get("status")
    if data.get("schema_version") == 1 and kind == "device_status" \
            and isinstance(status, str) and status.startswith(_V1_FAULT):
        kind = data["type"] = EVENT_KINDS[table_events.DeviceFault]
        body = data["data"] = {"device": body.get("device"),
                               "code": status.removeprefix(_V1_FAULT),
                               "detail": body.get("detail")}
        changed = True
    added = ADDED_FIELDS.get(kind)
    if added is not None and not all(name in body for name in added):
        body = data["data"] = {**added, **body}
        changed = True
    field, added = ADDED_NESTED_FIELDS.get(kind, ("", {}))
    items = body.get(field)
    if added and isinstance(items, list) and any(
            isinstance(item, dict) and not all(name in item for name in added)
            for item in items):
        data["data"] = {**body, field: [{**added, **item} if isinstance(item, dict) else item
                                        for item in items]}
        changed = True
    return data if changed else None


def type_as_written(message: bytes | str) -> str | None:
    """The envelope's ``type`` as the message was written (before any upgrade to today's
    form), or None if the message has none."""
    try:
        data = json.loads(message)
    except ValueError:
        return None
    kind = data.get("type") if isinstance(data, dict) else None
    return kind if isinstance(kind, str) else None


def decode_event(message: bytes | str) -> EnvelopeBase:
    """Parse a journaled event's envelope (a heartbeat is refused)."""
    envelope = decode(message)
    if isinstance(envelope, Heartbeat):
        raise WireError(["type: a heartbeat is not a journaled event"])
    return envelope


def to_event(envelope: EnvelopeBase) -> Any:
    """The event an envelope carries, equal to the one that was encoded."""
    if not isinstance(envelope, EnvelopeBase):
        raise TypeError(f"{type(envelope).__name__} carries no event")
    cls = EVENT_CLASSES[envelope.type]
    return _record_converter(cls)(envelope.data)


def json_schema() -> dict[str, Any]:
    """The JSON Schema of every PUB message (event envelopes and the heartbeat)."""
    schema = _ENVELOPE.json_schema(mode="serialization")
    schema["title"] = "lowball-table event stream message"
    return schema


# --- topics ------------------------------------------------------------------------------------

#: The topic families, each on its own sockets and (with CURVE) its own key allow-list:
#: surveillance sees every card live; table sees what the table shows (the dealer's screen,
#: the pit's live view: :mod:`controller.stream.table_family`); cms sees card identities only
#: after the hand settled (WAC 230-16-152, :mod:`controller.stream.cms_view`).
SURVEILLANCE, TABLE, CMS = "surveillance", "table", "cms"
FAMILIES = (SURVEILLANCE, TABLE, CMS)
#: The families that withhold the hand in play's card records until the hand is over: their
#: live stream skips those seqs, and a replay covers them without sending them.
WITHHOLDING = frozenset({TABLE, CMS})


def topic(table_id: str, message_type: str = "", family: str = SURVEILLANCE) -> bytes:
    """``b"surveillance.CALI-01.card_dealt"``; ``topic("CALI-01")`` is
    ``b"surveillance.CALI-01."``, the prefix a subscriber uses for everything one table
    publishes in that family."""
    if family not in FAMILIES:
        raise ValueError(f"unknown topic family {family!r} (families: {', '.join(FAMILIES)})")
    return f"{family}.{table_id}.{message_type}".encode()


def topic_of(envelope: EnvelopeBase | Heartbeat, family: str = SURVEILLANCE) -> bytes:
    """The ZeroMQ topic frame of a message: ``<family>.<table_id>.<type>`` (subscribers
    filter by prefix)."""
    return topic(envelope.table_id, envelope.type, family)


# --- snapshot / replay (ROUTER) ----------------------------------------------------------------

class SnapshotRequest(BaseModel):
    """``{"request": "snapshot"}``: the table state now and the seq it reflects."""

    model_config = _CONFIG
    request: Literal["snapshot"]


class ReplayRequest(BaseModel):
    """``{"request": "replay", "after": N, "limit": M}``: journaled messages with seq > N, at
    most ``limit`` (and at most :data:`MAX_REPLAY_BATCH`) of them."""

    model_config = _CONFIG
    request: Literal["replay"]
    after: Annotated[int, Field(ge=0, le=MAX_SEQ)]
    limit: Annotated[int, Field(gt=0, le=MAX_SEQ)] | None = None


Request = Annotated[Union[SnapshotRequest, ReplayRequest],  # noqa: UP007
                    Field(discriminator="request")]
_REQUEST = TypeAdapter(Request)


#: The keys a snapshot or replay request may hold: a refusal names no other key as sent.
_REQUEST_FIELDS = frozenset({"request", "after", "limit"})
#: Client text a refusal may repeat as it is (anything else is described by its length).
_NAME_LIKE = re.compile(r"[a-z_]{1,32}")


def _client_text(text: str) -> str:
    """A request name or key a client sent, as a refusal (answered, journaled and published
    on both families) may say it: a short name as written, anything else by its length."""
    return repr(text) if _NAME_LIKE.fullmatch(text) else f"(text of {len(text)} characters)"


def parse_request(message: bytes) -> SnapshotRequest | ReplayRequest:
    """Parse a ROUTER request; :class:`WireError` names what is wrong with a malformed one,
    repeating none of the client's text but known field names and short names."""
    try:
        return _REQUEST.validate_json(message)
    except ValidationError as error:
        problems = []
        for line, detail in zip(_problems(error, what="request"),
                                error.errors(include_url=False)):
            location = [part for part in detail["loc"] if part not in ("snapshot", "replay")]
            if detail["type"] == "union_tag_invalid":
                tag = str((detail.get("ctx") or {}).get("tag"))
                line = f"request: unknown request {_client_text(tag)}"
            elif location and isinstance(location[0], str) \
                    and location[0] not in _REQUEST_FIELDS:
                key = location[0] if _NAME_LIKE.fullmatch(location[0]) else \
                    f"(a key of {len(location[0])} characters)"
                line = f"{key}: unknown key (not allowed here)"
            problems.append(line + (" (expected 'snapshot' or 'replay')"
                                    if line.startswith("request: ") else ""))
        raise WireError(problems) from None


class SnapshotReply(BaseModel):
    """The table state (``state``, as the daemon describes it) as of event ``seq``: apply
    live events with a greater seq only."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["snapshot"]
    seq: Annotated[int, Field(ge=0)]
    state: dict[str, Any]


class ReplayEnd(BaseModel):
    """Ends a replay. ``last`` is the seq of the last message sent (``after`` if none): ask
    again after it until a replay sends nothing."""

    model_config = _CONFIG
    type: Literal["replay_end"]
    last: Annotated[int, Field(ge=0)]


class ReplayArchived(BaseModel):
    """The records with seqs ``first`` to ``last`` that follow in this reply come from
    ``archived``, the journal a quarantine set aside (its file, under the table's state
    directory), read-only: the chain the table verified before it broke."""

    model_config = _CONFIG
    type: Literal["replay_archived"]
    archived: Annotated[str, Field(max_length=MAX_REASON_CHARS)]
    first: Annotated[int, Field(ge=1, le=MAX_SEQ)]
    last: Annotated[int, Field(ge=1, le=MAX_SEQ)]


class ReplayGap(BaseModel):
    """The seqs ``first`` to ``last`` are not served, and never will be by this table:
    ``reason`` says why (records of an archived journal past its first bad record, which no
    one can vouch for, or an archived journal that cannot be read) and where they are kept."""

    model_config = _CONFIG
    type: Literal["replay_gap"]
    first: Annotated[int, Field(ge=1, le=MAX_SEQ)]
    last: Annotated[int, Field(ge=1, le=MAX_SEQ)]
    reason: Annotated[str, Field(max_length=MAX_REASON_CHARS)]


class ErrorReply(BaseModel):
    """A request was refused; ``reason`` names what was wrong with it."""

    model_config = _CONFIG
    type: Literal["error"]
    reason: str


Reply: Any = Annotated[Union[(SnapshotReply, ReplayEnd, ReplayArchived,  # noqa: UP007
                              ReplayGap, ErrorReply, *ENVELOPES.values())],
                       Field(discriminator="type")]
AnyReply = SnapshotReply | ReplayEnd | ReplayArchived | ReplayGap | ErrorReply | EnvelopeBase
_REPLY: TypeAdapter[AnyReply] = TypeAdapter(Reply)
#: Discriminator values, which pydantic puts first in an error's location.
_TAGS = frozenset({*ENVELOPES, HEARTBEAT, SNAPSHOT, REPLAY_END, REPLAY_ARCHIVED, REPLAY_GAP,
                   ERROR, "snapshot", "replay"})


def snapshot_reply(seq: int, state: Mapping[str, Any]) -> bytes:
    return canonical_json({"type": SNAPSHOT, "seq": seq, "state": state})


def replay_end(last: int) -> bytes:
    return canonical_json({"type": REPLAY_END, "last": last})


def replay_archived(archived: str, first: int, last: int) -> bytes:
    return canonical_json({"type": REPLAY_ARCHIVED, "archived": archived[:MAX_REASON_CHARS],
                           "first": first, "last": last})


def replay_gap(first: int, last: int, reason: str) -> bytes:
    return canonical_json({"type": REPLAY_GAP, "first": first, "last": last,
                           "reason": reason[:MAX_REASON_CHARS]})


def error_reply(reason: str) -> bytes:
    return canonical_json({"type": ERROR, "reason": reason})


def decode_reply(message: bytes) -> AnyReply:
    """Parse a ROUTER reply: snapshot, replay_end, replay_archived, replay_gap, error, or a
    replayed event envelope (an older record in today's form, as :func:`decode` reads it)."""
    return _validate(_REPLY, message)


# --- documentation -----------------------------------------------------------------------------

def _describe(hint: Any) -> str:
    if hint is Card:
        return 'card ("As")'
    if isinstance(hint, type) and issubclass(hint, StrEnum):
        return "one of " + ", ".join(json.dumps(member.value) for member in hint)
    if _is_record(hint):
        inner = ", ".join(f"{name}: {_describe(field)}"
                          for name, field in _field_hints(hint).items())
        return f"{{{inner}}}"
    origin, args = get_origin(hint), get_args(hint)
    if origin is tuple:
        return f"list of {_describe(args[0])}"
    if origin in (Union, types.UnionType):
        return " or ".join(_describe(arg) for arg in args)
    if origin is Literal:
        return " | ".join(json.dumps(arg) for arg in args)
    return {int: "int", str: "string", bool: "bool", float: "number",
            type(None): "null"}.get(hint, repr(hint))


def render_event_table() -> str:
    """The markdown table of every event type and its data fields (docs/event-stream.md)."""
    lines = ["| `type` | event class | `data` fields |", "|---|---|---|"]
    for name, cls in sorted(EVENT_CLASSES.items()):
        fields = "<br>".join(f"`{field}`: {_describe(hint)}"
                             for field, hint in _field_hints(cls).items())
        lines.append(f"| `{name}` | `{cls.__module__}.{cls.__name__}` | {fields} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    command = (sys.argv[1:] if argv is None else argv) or ["schema"]
    if command == ["schema"]:
        print(json.dumps(json_schema(), indent=2, sort_keys=True))
    elif command == ["table"]:
        print(render_event_table())
    else:
        print("usage: python -m controller.stream.wire [schema | table]", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

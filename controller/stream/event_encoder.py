"""The canonical bytes of an event envelope, written straight from the event.

:func:`controller.stream.wire.encode` is the definition: validate the envelope with its pydantic
model (strict), dump it, and write canonical JSON (sorted keys, no spaces, UTF-8). That costs
tens of microseconds per record, and a card's transaction carries several records, every
one of them on the path from the shoe to the subscriber.

This module writes the same bytes directly. For each event class it builds, once, a writer
from its fields' type hints (the same hints the wire models are generated from); a writer
checks every value's exact type as it writes it. Whatever it is not certain of (a value of
another type, a float, a time that is not UTC, a table id outside the wire's pattern) makes
it give up with :class:`Unfit`, and :func:`controller.stream.wire.encode` takes the pydantic path,
which either encodes the value or names what is wrong with it. So the fast path can only
ever produce the reference bytes or step aside; ``tests/stream/test_event_encoder.py``
checks every event class against the reference on generated values.
"""

from __future__ import annotations

import re
import types
from collections.abc import Callable
from datetime import datetime, timedelta
from enum import StrEnum
from json.encoder import encode_basestring
from operator import attrgetter
from typing import Any, Literal, Union, get_args, get_origin

from controller.core.cards import DECK, Card
from controller.core.events import field_hints, is_record_type
from controller.errors import LowballError

#: The text of a value, or :class:`Unfit`.
Writer = Callable[[Any], str]
_ZERO = timedelta(0)
#: Every integer of an event (amounts in cents, seats, counts) is within what every JSON reader
#: holds exactly (JavaScript's safe integers, well inside PostgreSQL's bigint): an event naming
#: a larger number is refused by name, never published to spoil a reader downstream. A real
#: table's figures are far inside it (2**53 cents is 90 trillion dollars).
MAX_EVENT_INT = 2**53 - 1
#: ``table_id`` of the wire envelope (controller.stream.wire.TableId): checked once per id.
_TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")
_MAX_HAND_ID = 64
#: A daemon writes one table's records; a test may write a few tables'.
_MAX_TABLE_IDS = 16


class Unfit(LowballError):
    """The fast path is not certain of this value; use the reference encoder."""


def _unfit(value: Any) -> str:
    raise Unfit


def _exact(kind: type, write: Callable[[Any], str]) -> Writer:
    def writer(value: Any) -> str:
        if type(value) is not kind:
            raise Unfit
        return write(value)
    return writer


_CARD_TEXTS = {card: f'"{card}"' for card in DECK}


def _card(value: Any) -> str:
    text = _CARD_TEXTS.get(value) if type(value) is Card else None
    if text is None:
        raise Unfit
    return text


def _bool(value: Any) -> str:
    if type(value) is not bool:
        raise Unfit
    return "true" if value else "false"


def _none(value: Any) -> str:
    if value is not None:
        raise Unfit
    return "null"


def _literal(values: tuple[Any, ...]) -> Writer:
    texts = {(type(value), value): _SCALARS[type(value)](value) for value in values}

    def writer(value: Any) -> str:
        try:
            return texts[type(value), value]
        except (KeyError, TypeError):  # another value, or one that is not even hashable
            raise Unfit from None
    return writer


def _vocabulary(enum: type[StrEnum]) -> Writer:
    """A member of ``enum``, or its text (a member is a str that hashes as its text)."""
    texts = {member.value: encode_basestring(member.value) for member in enum}

    def writer(value: Any) -> str:
        if type(value) is not enum and type(value) is not str:
            raise Unfit
        text = texts.get(value)
        if text is None:
            raise Unfit
        return text
    return writer


def _union(members: tuple[Writer, ...]) -> Writer:
    def writer(value: Any) -> str:
        for write in members:
            try:
                return write(value)
            except Unfit:
                continue
        raise Unfit
    return writer


def _items(inner: Writer) -> Writer:
    def writer(value: Any) -> str:
        if type(value) is not tuple:
            raise Unfit
        return "[" + ",".join([inner(item) for item in value]) + "]"
    return writer


def _event_int(value: Any) -> str:
    # past the bound the reference encoder says what is wrong
    if type(value) is not int or not -MAX_EVENT_INT <= value <= MAX_EVENT_INT:
        raise Unfit
    return int.__repr__(value)


_SCALARS: dict[Any, Writer] = {
    Card: _card,
    int: _event_int,
    str: _exact(str, encode_basestring),
    bool: _bool,
    type(None): _none,
    float: _unfit,  # json's float text and allow_nan rules: left to the reference encoder
}


def _writer(hint: Any, where: str) -> Writer:
    if hint in _SCALARS:
        return _SCALARS[hint]
    if isinstance(hint, type) and issubclass(hint, StrEnum):
        return _vocabulary(hint)
    if is_record_type(hint):
        return object_writer(hint)
    origin, args = get_origin(hint), get_args(hint)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return _items(_writer(args[0], where))
    if origin is Literal:
        return _literal(args)
    if origin in (Union, types.UnionType):
        return _union(tuple(_writer(arg, where) for arg in args))
    return _unfit  # the reference encoder says what is wrong with it


_OBJECT_WRITERS: dict[type, Writer] = {}


def object_writer(cls: type) -> Writer:
    """The writer of one record class (an event record or a NamedTuple): a JSON object with
    every field, keys sorted."""
    if cls in _OBJECT_WRITERS:
        return _OBJECT_WRITERS[cls]
    hints = field_hints(cls)
    order = list(cls._fields)  # type: ignore[attr-defined]
    fields = sorted((name, order.index(name), _writer(hints[name], f"{cls.__name__}.{name}"))
                    for name in order)
    keys = [encode_basestring(name) + ":" for name, _, _ in fields]
    plan = tuple(zip(keys, (index for _, index, _ in fields), (write for _, _, write in fields)))
    # A NamedTuple is the tuple of its values; a record's values are read in one call.
    values_of: Callable[[Any], Any] | None = None
    if not issubclass(cls, tuple):
        values_of = attrgetter(*order) if len(order) > 1 else \
            lambda value, get=attrgetter(order[0]): (get(value),)

    def writer(value: Any) -> str:
        kind = type(value)  # (compared by name: mypy would make ``value`` an ``object``)
        if kind is not cls:
            raise Unfit
        values = value if values_of is None else values_of(value)
        return "{" + ",".join([key + write(values[index]) for key, index, write in plan]) + "}"

    _OBJECT_WRITERS[cls] = writer
    return writer


#: (time, text) of the last time written (one tuple, read once: safe across threads).
_last_time: tuple[Any, str] = (None, "")


def timestamp(value: Any) -> str:
    """``2026-11-21T23:50:00.123456Z`` for an aware UTC datetime; :class:`Unfit` otherwise.
    The records of one transaction share one time: the last one's text is kept."""
    global _last_time
    last = _last_time
    if value is last[0]:
        return last[1]
    if type(value) is not datetime or value.tzinfo is None or value.utcoffset() != _ZERO:
        raise Unfit
    text = value.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"
    _last_time = (value, text)
    return text


class EnvelopeWriter:
    """Writes the envelopes of one table's records; remembers the table id it checked."""

    def __init__(self, kinds: dict[type, str], schema_version: int):
        self._kinds = kinds
        self._schema_version = schema_version
        self._table_ids: dict[str, str] = {}

    def _table_id(self, table_id: Any) -> str:
        text = self._table_ids.get(table_id) if type(table_id) is str else None
        if text is None:
            if type(table_id) is not str or not _TABLE_ID.fullmatch(table_id):
                raise Unfit
            if len(self._table_ids) >= _MAX_TABLE_IDS:
                self._table_ids.clear()
            text = self._table_ids[table_id] = encode_basestring(table_id)
        return text

    def encode(self, event: Any, *, table_id: str, seq: int, ts: str,
               hand_id: str | None) -> bytes:
        """The envelope's canonical bytes; ``ts`` is already :func:`timestamp` text."""
        kind = self._kinds.get(type(event))
        if kind is None or type(seq) is not int or seq <= 0:
            raise Unfit
        if hand_id is None:
            hand = "null"
        elif type(hand_id) is str and 0 < len(hand_id) <= _MAX_HAND_ID:
            hand = encode_basestring(hand_id)
        else:
            raise Unfit
        data = object_writer(type(event))(event)
        text = (f'{{"data":{data},"hand_id":{hand},"schema_version":{self._schema_version},'
                f'"seq":{seq},"table_id":{self._table_id(table_id)},"ts":"{ts}",'
                f'"type":"{kind}"}}')
        try:
            return text.encode()
        except UnicodeEncodeError:  # a lone surrogate: the reference encoder decides
            raise Unfit from None

"""Checkpoints: the table's whole state at one seq, so a start replays only what follows.

Between hands the daemon writes down everything the table and the daemon hold that the journal
would otherwise have to be replayed for (:func:`capture`): the table's state, settings and
fingerprint, hand number, meters, pending jackpot, wagers, fault, lamps, the shoe's count and
last card, the devices down, the last settlement, the pool link and meter, and the alarm book.
It is canonical JSON, stored beside the chain in the journal's file and bound to the record it
follows (:meth:`controller.stream.journal.Journal.write_checkpoint`). A hand in play is never
in one: a checkpoint is taken only between hands (:func:`due`), so the hand in play at a start
is rebuilt from its own records, which all follow the newest checkpoint.

At start (:func:`newest_sound`) the newest checkpoint that is sound is restored into a new
table: its hash, its link to the record at its seq, its format, its table and every field are
checked, and one that fails any check is refused with a reason that names its seq, and the one
before it is tried. What is restored equals what replaying the journal up to that seq gives
(tests/journal/test_checkpoint_start.py).

docs/journal.md says when checkpoints are written and what a start checks.
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import UTC, datetime
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from controller.core.canonical_json import canonical_json
from controller.core.cards import parse_card
from controller.core.table import PendingJackpot, Table
from controller.core.table_settings import MAX_SPOTS, GameSettings, SettingsError
from controller.core.table_states import TableState
from controller.core.vocabulary import LinkStatus, SpotLamp
from controller.daemon.alarm_book import AlarmBook
from controller.errors import LowballError
from controller.stream import wire
from controller.stream.journal import Checkpoint, Journal, chain_hash, shown

#: The checkpoint's own format: a checkpoint of another is refused (and an older one, or the
#: journal from its first record, taken instead).
FORMAT = 1
#: Between hands, a checkpoint at least every this many records (a table that deals no hand
#: but journals device reports, refusals or the pool's messages for days).
EVERY_RECORDS = 5000
#: The checkpoints a start tries, newest first, before it replays the journal from its first
#: record.
TRIED = 3
#: The ``ts`` the events inside a checkpoint are encoded with (they keep only their fields).
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_TS = wire.format_ts(_EPOCH)
#: The fields of :class:`controller.core.table.Table` a checkpoint holds; ``hand`` is None in
#: every one (between hands). A field added to the table fails a test until it is here.
TABLE_FIELDS = frozenset({
    "table_id", "settings", "state", "hand", "hand_id", "hand_number", "meter", "meter_held",
    "wagers", "players", "fault", "jackpot", "lamps", "last_shoe_card", "shoe_count",
    "hand_first_count", "out_of_play", "shoe_trouble", "devices_down", "last_settled_hand",
    "last_settlement", "last_awards", "pool_link", "pool_shown", "seated", "dealer",
    "last_void"})


class CheckpointRefused(LowballError, ValueError):
    """A checkpoint the start does not use (not an error of the table's: an older checkpoint,
    or the journal from its first record, is used instead)."""


class Restored(NamedTuple):
    """A sound checkpoint, restored: the table and the alarm book as they were at ``seq``."""
    checkpoint: Checkpoint
    table: Table
    alarm_book: AlarmBook


def due(table: Table, checkpointed_hand: str | None, records_since: int) -> bool:
    """Whether the daemon writes a checkpoint now: between hands, once the hand last
    checkpointed is over (a new hand id has come and gone) or after :data:`EVERY_RECORDS`
    records without one."""
    return table.hand is None and (table.hand_id != checkpointed_hand
                                   or records_since >= EVERY_RECORDS)


def capture(table: Table, alarm_book: AlarmBook) -> bytes:
    """The checkpoint's state: the table between hands and the alarm book, canonical JSON."""
    if table.hand is not None:
        raise ValueError(f"hand {table.hand_id} is in play: a checkpoint is taken between hands")
    table_id = table.table_id

    def record(event: Any) -> Any:
        return None if event is None else _record_data(event, table_id)

    jackpot = table.jackpot
    state = {
        "format": FORMAT, "schema_version": wire.SCHEMA_VERSION, "table_id": table_id,
        "settings": table.settings.text, "fingerprint": table.fingerprint,
        "state": str(table.state), "hand_id": table.hand_id, "hand_number": table.hand_number,
        "meter": table.meter, "meter_held": table.meter_held,
        "wagers": [[spot, dict(wagers)] for spot, wagers in sorted(table.wagers.items())],
        "players": [[spot, player] for spot, player in sorted(table.players.items())],
        "fault": record(table.fault),
        "jackpot": None if jackpot is None else {
            "hand_id": jackpot.hand_id, "seats": list(jackpot.seats), "amount": jackpot.amount,
            "meter_after_reset": jackpot.meter_after_reset, "claimed": record(jackpot.claimed)},
        "lamps": [[spot, str(lamp)] for spot, lamp in sorted(table.lamps.items())],
        "last_shoe_card": None if table.last_shoe_card is None else [
            table.last_shoe_card[0], str(table.last_shoe_card[1]), table.last_shoe_card[2],
            table.last_shoe_card[3]],
        "shoe_count": table.shoe_count, "hand_first_count": table.hand_first_count,
        "out_of_play": [list(card) for card in table.out_of_play],
        "shoe_trouble": list(table.shoe_trouble),
        "devices_down": sorted(table.devices_down),
        "last_settled_hand": table.last_settled_hand,
        "last_settlement": [record(event) for event in table.last_settlement],
        "last_awards": [record(event) for event in table.last_awards],
        "pool_link": None if table.pool_link is None else str(table.pool_link),
        "pool_shown": record(table.pool_shown),
        "seated": [[spot, player] for spot, player in sorted(table.seated.items())],
        "dealer": table.dealer,
        "last_void": None if table.last_void is None else [record(table.last_void[0]),
                                                            table.last_void[1]],
        "alarms": [[seq, by] for seq, by in alarm_book.entries()],
    }
    return canonical_json(state)


def newest_sound(journal: Journal, table_id: str,
                 refused: Callable[[int, str], None]) -> Restored | None:
    """The newest of the journal's last :data:`TRIED` checkpoints that is sound, restored;
    ``refused(seq, why)`` is told of each one refused on the way. None: replay the journal
    from its first record."""
    for checkpoint in journal.checkpoints(TRIED):
        try:
            table, book = restore(checkpoint, journal.hash_at(checkpoint.seq), table_id)
        except CheckpointRefused as why:
            refused(checkpoint.seq, str(why))
            continue
        return Restored(checkpoint, table, book)
    return None


def restore(checkpoint: Checkpoint, record_hash: str | None,
            table_id: str) -> tuple[Table, AlarmBook]:
    """The table and alarm book ``checkpoint`` holds, checked against the hash of the journal
    record at its seq (``record_hash``; None if there is no such record);
    :class:`CheckpointRefused` naming what is wrong."""
    if record_hash is None:
        raise CheckpointRefused(f"no sound journal record at its seq {checkpoint.seq}")
    if checkpoint.prev_hash != record_hash:
        raise CheckpointRefused("its prev_hash is not the hash of the journal record at its seq")
    if type(checkpoint.state) is not bytes \
            or checkpoint.hash != chain_hash(record_hash, checkpoint.state):
        raise CheckpointRefused("its hash does not match prev_hash + state (the state was altered)")
    try:
        state = json.loads(checkpoint.state)
    except (ValueError, UnicodeDecodeError):
        raise CheckpointRefused("its state is not JSON") from None
    reader = _Reader(state, "checkpoint")
    if (found := reader.get("format", int)) != FORMAT:
        raise CheckpointRefused(f"its format is {found}, this program reads format {FORMAT}")
    if (found := reader.get("schema_version", int)) != wire.SCHEMA_VERSION:
        raise CheckpointRefused(f"its events are of wire schema {found}, this program writes "
                      f"{wire.SCHEMA_VERSION}")
    if (found_table := reader.get("table_id", str)) != table_id:
        raise CheckpointRefused(f"it is table {shown(found_table, 64)!r}'s, not {table_id!r}'s")
    try:
        return _restored(reader, table_id), _book(reader)
    except CheckpointRefused:
        raise
    except (ValueError, TypeError, KeyError, SettingsError, wire.WireError) as error:
        raise CheckpointRefused(f"its state does not restore: {shown(str(error), 200)}") from None


def _restored(reader: _Reader, table_id: str) -> Table:
    try:
        settings = GameSettings.from_document(json.loads(reader.get("settings", str)))
    except ValueError as error:
        raise CheckpointRefused(f"its settings do not read: {shown(str(error), 200)}") from None
    if settings.fingerprint != reader.get("fingerprint", str):
        raise CheckpointRefused("its settings' fingerprint is not the fingerprint of its settings")
    table = Table(table_id, settings)

    def event(value: Any, where: str) -> Any:
        return None if value is None else _event(value, table_id, where)

    table.state = TableState(reader.get("state", str))
    table.hand_id = reader.get("hand_id", str, optional=True)
    table.hand_number = reader.count("hand_number")
    table.meter = reader.count("meter")
    table.meter_held = reader.get("meter_held", bool)
    table.wagers = defaultdict(dict)
    for spot, wagers in reader.pairs("wagers"):
        table.wagers[_spot(spot)] = {_text(name): _amount(amount)
                                     for name, amount in _mapping(wagers).items()}
    table.players = {_spot(spot): _text(player) for spot, player in reader.pairs("players")}
    table.fault = event(reader.get("fault", dict, optional=True), "fault")
    jackpot = reader.get("jackpot", dict, optional=True)
    if jackpot is not None:
        jackpot_reader = _Reader(jackpot, "jackpot")
        table.jackpot = PendingJackpot(
            jackpot_reader.get("hand_id", str),
            tuple(_spot(seat) for seat in jackpot_reader.get("seats", list)),
            jackpot_reader.count("amount"), jackpot_reader.count("meter_after_reset"),
            event(jackpot_reader.get("claimed", dict, optional=True), "jackpot.claimed"))
    table.lamps = {_spot(spot): SpotLamp(_text(lamp)) for spot, lamp in reader.pairs("lamps")}
    last = reader.get("last_shoe_card", list, optional=True)
    if last is not None:
        if len(last) != 4:
            raise CheckpointRefused("last_shoe_card: not (shoe seq, card, tag, count)")
        table.last_shoe_card = (_amount(last[0]), parse_card(last[1]), _text(last[2]),
                                _amount(last[3]))
    table.shoe_count = reader.count("shoe_count", optional=True)
    table.hand_first_count = reader.count("hand_first_count", optional=True)
    table.out_of_play = [(_text(card), _amount(count)) for card, count in
                         reader.pairs("out_of_play")]
    table.shoe_trouble = [_text(text) for text in reader.get("shoe_trouble", list)]
    table.devices_down = {_text(device) for device in reader.get("devices_down", list)}
    table.last_settled_hand = reader.get("last_settled_hand", str, optional=True)
    table.last_settlement = [event(value, "last_settlement")
                             for value in reader.get("last_settlement", list)]
    table.last_awards = [event(value, "last_awards") for value in reader.get("last_awards", list)]
    link = reader.get("pool_link", str, optional=True)
    table.pool_link = None if link is None else LinkStatus(link)
    table.pool_shown = event(reader.get("pool_shown", dict, optional=True), "pool_shown")
    # (a checkpoint of a table before seating, dealers and the void summary has none of them)
    if reader.get("seated", list, optional=True) is not None:
        table.seated = {_spot(spot): _text(player) for spot, player in reader.pairs("seated")}
    table.dealer = reader.get("dealer", str, optional=True) or ""
    void = reader.get("last_void", list, optional=True)
    if void is not None:
        if len(void) != 2:
            raise CheckpointRefused("last_void: not (the void, the cards out)")
        table.last_void = (event(void[0], "last_void"), _amount(void[1]))
    return table


def _book(reader: _Reader) -> AlarmBook:
    book = AlarmBook()
    book.restore((_amount(seq), _text(by)) for seq, by in reader.pairs("alarms"))
    return book


def _record_data(event: Any, table_id: str) -> dict[str, Any]:
    """An event as a checkpoint holds it: its wire type and data (the envelope's own fields
    are the checkpoint's)."""
    envelope = json.loads(wire.encode(event, table_id=table_id, seq=1,
                                      ts=_EPOCH, hand_id=None))
    return {"type": envelope["type"], "data": envelope["data"]}


def _event(value: Any, table_id: str, where: str) -> Any:
    """The event a checkpoint holds (see :func:`_record_data`), parsed as the wire parses
    one."""
    if not isinstance(value, dict) or set(value) != {"type", "data"}:
        raise CheckpointRefused(f"{where}: not an event")
    message = canonical_json({"schema_version": wire.SCHEMA_VERSION, "table_id": table_id,
                              "seq": 1, "ts": _TS, "hand_id": None, **value})
    try:
        return wire.to_event(wire.decode_event(message))
    except wire.WireError as error:
        raise CheckpointRefused(f"{where}: {shown(str(error), 200)}") from None


class _Reader:
    """A checkpoint's object read field by field, each of the type it must be."""

    def __init__(self, value: Any, where: str) -> None:
        if not isinstance(value, dict):
            raise CheckpointRefused(f"{where}: not an object")
        self.value, self.where = value, where

    def get(self, key: str, kind: type, optional: bool = False) -> Any:
        if key not in self.value:
            raise CheckpointRefused(f"{self.where}: {key} missing")
        found = self.value[key]
        if found is None and optional:
            return None
        if type(found) is not kind:
            raise CheckpointRefused(f"{self.where}: {key} is not a {kind.__name__}")
        return found

    def count(self, key: str, optional: bool = False) -> Any:
        found = self.get(key, int, optional)
        return found if found is None else _amount(found)

    def pairs(self, key: str) -> Iterator[tuple[Any, Any]]:
        for pair in self.get(key, list):
            if type(pair) is not list or len(pair) != 2:
                raise CheckpointRefused(f"{self.where}: {key} holds something not a pair")
            yield pair[0], pair[1]


def _amount(value: Any) -> int:
    if type(value) is not int or not 0 <= value <= wire.MAX_SEQ:
        raise CheckpointRefused(f"{shown(repr(value), 40)} is not a count")
    return value


def _spot(value: Any) -> int:
    if type(value) is not int or not 1 <= value <= MAX_SPOTS:
        raise CheckpointRefused(f"{shown(repr(value), 40)} is not a spot")
    return value


def _text(value: Any) -> str:
    if type(value) is not str or len(value) > 4096:
        raise CheckpointRefused(f"{shown(repr(value), 40)} is not a text")
    return value


def _mapping(value: Any) -> dict[str, Any]:
    if type(value) is not dict:
        raise CheckpointRefused(f"{shown(repr(value), 40)} is not an object")
    return value

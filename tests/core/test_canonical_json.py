"""One canonical JSON: the journal's records, a command's journaled arguments and a
configuration's fingerprint are all written by :func:`controller.core.canonical_json`."""

from __future__ import annotations

import hashlib
import json

import pytest

from controller.core.canonical_json import canonical_json
from controller.core.table_events import ConfigApplied
from controller.settings.table_config import build_table, default_config_path, load_config
from controller.stream.table_commands import parse_command, refused_arguments


def test_the_bytes_are_pinned() -> None:
    assert canonical_json({"z": [1, True, None], "a": "Jos\u00e9 \u2665", "m": {"b": 2, "a": 1}}) \
        == '{"a":"Jos\u00e9 \u2665","m":{"a":1,"b":2},"z":[1,true,null]}'.encode()


def test_nan_has_no_canonical_form() -> None:
    with pytest.raises(ValueError):
        canonical_json({"rate": float("nan")})


def test_a_commands_arguments_are_journaled_in_the_wires_form() -> None:
    place = parse_command({"command": "place", "spot": 3, "wager": "ante", "amount": 1000,
                           "player": "Jos\u00e9"})
    assert place.arguments() == '{"amount":1000,"player":"Jos\u00e9","spot":3,"wager":"ante"}'
    assert place.arguments().encode() == canonical_json(json.loads(place.arguments()))


def test_a_refused_commands_arguments_are_journaled_in_the_wires_form() -> None:
    shown = refused_arguments({"command": "place", "player": "Ren\u00e9e", "amount": "x"})
    assert shown == '{"amount":"x","player":"Ren\u00e9e"}'


def test_the_journaled_config_hashes_to_its_fingerprint() -> None:
    table = build_table(load_config(default_config_path()))
    opened = [event for event in table.command(parse_command({"command": "open"}),
                                               "dealer", "dealer")
              if type(event) is ConfigApplied]
    assert opened
    assert hashlib.sha256(opened[0].config.encode()).hexdigest() == opened[0].fingerprint

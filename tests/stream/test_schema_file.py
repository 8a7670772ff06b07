"""The checked-in JSON Schema (docs/schema/events.schema.json) is the one the models generate,
so integrators who validate against the file validate against what the table sends."""

from __future__ import annotations

import json
from pathlib import Path

from controller.stream import wire

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "docs" / "schema" / "events.schema.json"
REGENERATE = ("regenerate it: `.venv/bin/python -m controller.stream.wire schema > "
              "docs/schema/events.schema.json`, review the diff (a change that could break a "
              "parser also needs wire.SCHEMA_VERSION raised) and commit it")


def test_schema_file_matches_the_models() -> None:
    assert SCHEMA.is_file(), f"{SCHEMA.relative_to(ROOT)} is missing: {REGENERATE}"
    checked_in = json.loads(SCHEMA.read_text())
    assert checked_in == wire.json_schema(), (
        f"{SCHEMA.relative_to(ROOT)} differs from the pydantic models: {REGENERATE}")


def test_schema_file_is_the_generators_exact_output() -> None:
    # Byte for byte what the documented command writes, so regenerating gives no noise diff.
    expected = json.dumps(wire.json_schema(), indent=2, sort_keys=True) + "\n"
    assert SCHEMA.read_text() == expected, f"formatting differs: {REGENERATE}"


def test_schema_names_every_event_type_and_the_heartbeat() -> None:
    mapping = json.loads(SCHEMA.read_text())["discriminator"]["mapping"]
    assert set(mapping) == set(wire.EVENT_CLASSES) | {wire.HEARTBEAT}

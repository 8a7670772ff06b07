"""The integrator documents stay true: docs/asyncapi.json describes every event type with the
checked-in schema, and the messages in docs/integration.md are real, complete and parse.

The AsyncAPI document is JSON (no YAML parser is a dependency of this project); AsyncAPI
tools read JSON and YAML alike."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from controller.cli.demo import CMS_EVENTS, CMS_REPLAY
from controller.settings.table_config import Stream
from controller.stream import cms_view, wire

DOCS = Path(__file__).resolve().parents[2] / "docs"
ASYNCAPI = DOCS / "asyncapi.json"
GUIDE = DOCS / "integration.md"
FIX = ("edit docs/asyncapi.json by hand: one channel `<family>.{table_id}.<type>` per family "
       "and one message "
       "`<type>` per event type, the payload a $ref to schema/events.schema.json#/$defs/"
       "<Name>Envelope (see an existing one)")


@pytest.fixture(scope="module")
def asyncapi() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(ASYNCAPI.read_text())
    return document


def resolve(document: dict[str, Any], ref: str) -> Any:
    """A $ref into this document (``#/...``) or into a file beside it (``file#/...``)."""
    target, _, pointer = ref.partition("#")
    node = json.loads((ASYNCAPI.parent / target).read_text()) if target else document
    for part in filter(None, pointer.split("/")):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        return ([node["$ref"]] if isinstance(node.get("$ref"), str) else []) + \
            [ref for value in node.values() for ref in refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in refs(value)]
    return []


def test_asyncapi_is_an_asyncapi_2_6_document_with_the_five_servers(
        asyncapi: dict[str, Any]) -> None:
    assert asyncapi["asyncapi"] == "2.6.0"
    assert {"title", "version", "description"} <= asyncapi["info"].keys()
    assert asyncapi["info"]["version"] == str(wire.SCHEMA_VERSION)
    defaults = Stream()
    assert {name: server["url"] for name, server in asyncapi["servers"].items()} == {
        "events": defaults.events, "replay": defaults.replay, "commands": defaults.commands,
        "cms_events": CMS_EVENTS, "cms_replay": CMS_REPLAY}
    assert all(server["protocol"] == "zmq" for server in asyncapi["servers"].values())


def test_asyncapi_has_a_channel_and_a_message_for_every_event_type(
        asyncapi: dict[str, Any]) -> None:
    channels, messages = asyncapi["channels"], asyncapi["components"]["messages"]
    for family, server in ((wire.SURVEILLANCE, "events"), (wire.CMS, "cms_events")):
        for name in [*wire.EVENT_CLASSES, wire.HEARTBEAT]:
            channel = channels.get(f"{family}.{{table_id}}.{name}")
            assert channel is not None, f"no {family} channel for {name}: {FIX}"
            assert channel["subscribe"]["message"] == {"$ref": f"#/components/messages/{name}"}
            assert channel["servers"] == [server]
            model = wire.ENVELOPES[name].__name__ if name in wire.ENVELOPES else "Heartbeat"
            assert messages[name]["payload"] == {
                "$ref": f"schema/events.schema.json#/$defs/{model}"}, FIX
        topics = {key.split(".", 2)[2] for key in channels
                  if key.startswith(f"{family}.{{table_id}}.")}
        assert topics == {*wire.EVENT_CLASSES, wire.HEARTBEAT}, "a channel for a type that is gone"
    for name in cms_view.CARD_TYPES:
        assert "held" in channels[f"cms.{{table_id}}.{name}"]["description"]


def test_every_reference_resolves_and_ids_are_unique(asyncapi: dict[str, Any]) -> None:
    for ref in refs(asyncapi):
        assert resolve(asyncapi, ref) is not None, ref
    operations = [channel[verb]["operationId"] for channel in asyncapi["channels"].values()
                  for verb in ("publish", "subscribe") if verb in channel]
    assert len(operations) == len(set(operations))


def test_asyncapi_replay_schemas_are_the_models(asyncapi: dict[str, Any]) -> None:
    schemas = asyncapi["components"]["schemas"]
    for model in (wire.SnapshotRequest, wire.ReplayRequest, wire.SnapshotReply, wire.ReplayEnd,
                  wire.ReplayArchived, wire.ReplayGap, wire.ErrorReply):
        assert schemas[model.__name__] == model.model_json_schema(), (
            f"{model.__name__} changed: update components.schemas in docs/asyncapi.json "
            f"with its model_json_schema()")
    assert str(wire.MAX_REPLAY_BATCH) in asyncapi["channels"]["replay"]["description"]


def test_asyncapi_describes_sequence_heartbeat_snapshot_and_replay(
        asyncapi: dict[str, Any]) -> None:
    text = asyncapi["info"]["description"]
    for word in ("seq", "gap", "heartbeat", "snapshot", "replay", "cents"):
        assert word in text.lower(), word
    assert "heartbeat" in \
        asyncapi["channels"]["surveillance.{table_id}.heartbeat"]["description"].lower()


def guide_blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)\n```", GUIDE.read_text(), re.S)


def test_the_guides_worked_hand_is_complete_gapless_and_parses() -> None:
    (block,) = guide_blocks("jsonl")
    messages: list[Any] = [wire.decode_event(line) for line in block.splitlines()]
    seqs = [message.seq for message in messages]
    assert seqs == list(range(seqs[0], seqs[-1] + 1))
    types = [message.type for message in messages]
    assert types.count("hand_started") == 1 and types.count("hand_settled") == 1
    for line in block.splitlines():   # canonical bytes, as published
        assert wire.dumps(wire.decode_event(line)).decode() == line
    settled = next(m for m in messages if m.type == "hand_settled")
    nets = sum(m.data.net for m in messages if m.type == "wager_settled")
    assert settled.data.players_net == nets == -settled.data.house_result


def test_the_guides_other_messages_parse() -> None:
    for block in guide_blocks("json"):
        assert wire.decode(block).table_id == "TCL-01"


def test_the_guides_watch_view_is_what_watch_prints_for_that_hand() -> None:
    import io

    from controller.cli.watch import Output

    (block,) = guide_blocks("jsonl")
    (view,) = re.findall(r"```\n(#\d+ .*?)\n```", GUIDE.read_text(), re.S)
    out = io.StringIO()
    output = Output(as_json=False, verbose=False, out=out)
    for line in block.splitlines():
        output.event(wire.decode_event(line))
    assert out.getvalue().rstrip("\n") == view, (
        "docs/integration.md section 8: paste what watch prints for the example hand")

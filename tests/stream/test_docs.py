"""docs/event-stream.md stays in step with the code."""

from __future__ import annotations

import hashlib
import re
import sqlite3
from pathlib import Path

from controller.stream import wire
from controller.stream.journal import Journal

from tests.support.stream import TABLE, sample_events

DOC = Path(__file__).resolve().parents[2] / "docs" / "event-stream.md"


def test_doc_lists_every_event_type() -> None:
    text = DOC.read_text()
    for name in wire.EVENT_CLASSES:
        assert f"| `{name}` |" in text, f"docs/event-stream.md lacks event type {name}"


def test_doc_event_table_is_the_generated_one() -> None:
    assert wire.render_event_table() in DOC.read_text(), (
        "docs/event-stream.md section 2 is out of date: paste the output of "
        "`python -m controller.stream.wire table`")


def test_doc_examples_parse() -> None:
    text = DOC.read_text()
    envelope = re.search(r'```json\n(\{"data".*?)\n```', text, re.S)
    beat = re.search(r'```json\n(\{"hash".*?)\n```', text, re.S)
    assert envelope is not None and beat is not None
    assert wire.decode(envelope.group(1).replace("\n ", "")).type == "card_dealt"
    assert isinstance(wire.decode(beat.group(1)), wire.Heartbeat)


def test_doc_chain_check_snippet_matches_the_journal(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    with Journal(path, durability="batched") as journal:
        journal.append_all(sample_events(9), table_id=TABLE, hand_id=None)
    prev = "0" * 64
    for seq, message, prev_hash, hash_ in sqlite3.connect(path).execute(
            "SELECT seq, message, prev_hash, hash FROM journal ORDER BY seq"):
        assert prev_hash == prev and hash_ == hashlib.sha256(prev.encode() + message).hexdigest()
        prev = hash_
    assert seq == 9

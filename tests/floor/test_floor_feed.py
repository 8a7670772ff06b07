"""One table's feed against a real daemon (in a thread, no devices): it follows the CMS
stream from a resume point, and refuses a journal that ends before what the floor stored."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
import zmq

from controller.floor.config import FloorTable
from controller.floor.feed import FeedError, TableFeed
from controller.stream.journal import Journal, journal_path

from tests.support.curve import SecureTable
from tests.support.waits import DEADLINE_S



@pytest.fixture
def table(tmp_path: Path) -> Iterator[tuple[SecureTable, zmq.Context[Any]]]:
    context = zmq.Context()
    made = SecureTable(tmp_path, context, None)
    commands = context.socket(zmq.REQ)
    commands.setsockopt(zmq.LINGER, 0)
    commands.connect(made.stream.commands)
    commands.send_json({"command": "open"})         # journals the opening: a few records
    assert commands.poll(int(DEADLINE_S * 1000)) and cast(dict[str, Any], commands.recv_json())["ok"]
    commands.close(0)
    yield made, context
    made.close()
    context.destroy(linger=0)


def feed_of(table: SecureTable, context: zmq.Context[Any], resume_after: int) -> TableFeed:
    assert table.stream.cms_events is not None and table.stream.cms_replay is not None
    entry = FloorTable(id=table.daemon.table.table_id, cms_events=table.stream.cms_events,
                       cms_replay=table.stream.cms_replay)
    return TableFeed(context, entry, None, resume_after, timeout_s=5)


def take_until(feed: TableFeed, count: int) -> list[Any]:
    rows: list[Any] = []
    deadline = time.monotonic() + DEADLINE_S
    while len(rows) < count and time.monotonic() < deadline:
        rows += feed.take(100, wait_s=0.05)
    return rows


def test_a_feed_resumes_after_its_resume_point(table: tuple[SecureTable, zmq.Context[Any]],
                                               tmp_path: Path) -> None:
    secure, context = table
    with Journal.open_readonly(journal_path(tmp_path / "state")) as journal:
        last = journal.last_seq
    assert last >= 3
    feed = feed_of(secure, context, resume_after=2)
    try:
        rows = take_until(feed, last - 2)
        assert [row.seq for row in rows] == list(range(3, last + 1))
        assert feed.resume_point() == last
    finally:
        feed.close()


def test_a_journal_that_ends_before_the_store_is_refused(table: tuple[SecureTable, zmq.Context[Any]]
                                                         ) -> None:
    secure, context = table
    feed = feed_of(secure, context, resume_after=10**6)
    try:
        with pytest.raises(FeedError, match="journal ends at seq .* floor stored it up to "
                                            "seq 1000000"):
            deadline = time.monotonic() + DEADLINE_S
            while time.monotonic() < deadline:
                feed.take(100, wait_s=0.05)
    finally:
        feed.close()

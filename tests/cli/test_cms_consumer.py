"""examples/cms_consumer.py, run as a CMS developer would run it: history by replay, live
events, gaps filled, per-spot results, the meter and the journal's hash chain all agree with
the table's own journal."""

from __future__ import annotations

import ast
import re
import signal
import sys
from pathlib import Path
from typing import Any

import zmq

from controller.cli.watch import net_by_seat
from controller.settings.scenario import load_scenario
from controller.stream import wire
from controller.stream.journal import Journal

from tests.support.archives import ARCHIVED_SEQ, successor
from tests.support.rig import RigFactory, scenarios_for
from tests.support.stream import TABLE, TableLoop, sample_events
from tests.support.tools import ROOT, ToolFactory, journal_records, run_tool
from tests.support.waits import wait_for

CONSUMER = "examples/cms_consumer.py"


def cents(text: str) -> int:
    sign = -1 if text.startswith("-") else 1
    return sign * int(text.lstrip("+-$").replace(",", "").replace(".", ""))


def summary_of(lines: list[str]) -> str:
    return next(line for line in lines if line.startswith("summary: "))


def totals(line: str) -> dict[int, int]:
    return {int(spot): cents(amount)
            for spot, amount in re.findall(r"spot (\d) ([+-]?\$[\d,]+\.\d\d)",
                                           line.split("totals:")[1])}


def test_the_example_uses_only_pyzmq_and_the_standard_library() -> None:
    tree = ast.parse((ROOT / CONSUMER).read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert imported - set(sys.stdlib_module_names) - {"__future__"} == {"zmq"}


def test_history_and_live_hands_agree_with_the_journal(tools: ToolFactory,
                                                       rig_factory: RigFactory) -> None:
    rig = rig_factory("three_card_lowball")
    assert rig.ask({"command": "open"})["ok"]
    first, second = scenarios_for("three_card_lowball", 2)
    rig.play(load_scenario(first))                      # before the consumer: history
    wait_for(lambda: rig.status()["hand"] is None, "hand 1 to end")
    consumer = tools(CONSUMER, "--connect", rig.stream.events, "--replay", rig.stream.replay,
                     "--family", "surveillance")
    consumer.wait_for(lambda line: line.startswith("synced: table TCL-01"))
    consumer.wait_for(lambda line: line.startswith("live: table TCL-01"))
    rig.play(load_scenario(second))                     # while it listens: live
    consumer.wait_for(lambda line: " hand TCL-01-000002 settled" in line)
    consumer.process.send_signal(signal.SIGTERM)
    assert consumer.finish() == 0

    records = journal_records(rig.tmp_path / "state")
    summary = summary_of(consumer.out)
    last = re.search(r"last seq (\d+)", summary)
    assert last is not None, summary
    last_seq = int(last[1])
    with Journal.open_readonly(rig.tmp_path / "state" / "journal.sqlite3") as journal:
        chain = {record.seq: record.hash for record in journal.records()}
    assert f"chain hash {chain[last_seq]}" in summary
    assert "2 hands settled" in summary and "0 gaps filled" in summary

    events: list[Any] = [wire.decode_event(r.message) for r in records if r.seq <= last_seq]
    assert totals(summary) == net_by_seat(events)      # the example's sums, the journal's
    meter = [e.data.amount for e in events if e.type == "meter_changed"][-1]
    assert f"meter ${meter // 100:,}.{meter % 100:02d}" in summary

    settled_lines = [line for line in consumer.out if re.match(r"#\d+ settled ", line)]
    assert len(settled_lines) == sum(e.type == "wager_settled" for e in events)
    for line, event in zip(settled_lines, [e for e in events if e.type == "wager_settled"]):
        assert line.startswith(f"#{event.seq} settled {event.hand_id} spot {event.data.seat} "
                               f"{event.data.wager} ")


def test_missed_messages_are_replayed_and_the_chain_still_holds(
        tools: ToolFactory, table_loop: TableLoop, tmp_path: Path) -> None:
    table_loop.call("append", sample_events(3), True)             # history: seq 1-3
    consumer = tools(CONSUMER, "--connect", table_loop.pub_endpoint, "--replay",
                     table_loop.replay_endpoint, "--table", TABLE, "--count", "9",
                     "--family", "surveillance")
    consumer.wait_for(lambda line: line.startswith("live: table CALI-01"),
                      between=lambda: table_loop.call("heartbeat"))
    table_loop.call("append", sample_events(2), True)             # 4, 5
    table_loop.call("append", sample_events(1), False)            # 6 lost
    table_loop.call("append", sample_events(1), True)             # 7: reveals the gap
    table_loop.call("append", sample_events(2), False)            # 8, 9 lost at the end
    table_loop.call("heartbeat")                                  # says 9
    assert consumer.finish() == 0
    assert "gap: seq 6-6 did not arrive; filled from replay" in consumer.out
    assert "gap: seq 8-9 did not arrive; filled from replay" in consumer.out
    with Journal.open_readonly(tmp_path / "journal.sqlite3") as journal:
        report = journal.verify()
    assert report.ok and report.last_seq == 9
    summary = summary_of(consumer.out)
    assert f"9 events, 0 hands settled, last seq 9, chain hash {report.last_hash}, " \
           "2 gaps filled" in summary


def test_a_silent_table_is_warned_about(tools: ToolFactory, table_loop: TableLoop) -> None:
    consumer = tools(CONSUMER, "--connect", table_loop.pub_endpoint, "--replay",
                     table_loop.replay_endpoint, "--table", TABLE, "--silence", "0.3",
                     "--family", "surveillance")
    consumer.wait_for(lambda line: line.startswith("live: table CALI-01"),
                      between=lambda: table_loop.call("heartbeat"))
    consumer.wait_for(lambda line: line.startswith("WARNING: no heartbeat from table CALI-01"))
    table_loop.call("heartbeat")
    consumer.wait_for(lambda line: line == "table CALI-01 heard again")


def test_an_unreachable_table_is_reported() -> None:
    result = run_tool(CONSUMER, "--connect", "tcp://127.0.0.1:1", "--replay",
                      "tcp://127.0.0.1:1", "--timeout", "0.5")
    assert result.returncode == 2
    assert "no answer from tcp://127.0.0.1:1 within 0.5 s" in result.stderr
    assert "summary" not in result.stdout


def test_the_documented_command_line_is_the_examples() -> None:
    guide = (Path(ROOT) / "docs" / "integration.md").read_text()
    assert ("python examples/cms_consumer.py --connect tcp://127.0.0.1:5558 "
            "--replay tcp://127.0.0.1:5559") in guide


def test_a_quarantined_journals_successor_is_followed_from_before_it(
        tools: ToolFactory, tmp_path: Path) -> None:
    """The new journal starts at the archived journal's last seq + 1: a consumer asking for
    the history from seq 0 is told the archived seqs are not served (here the archive is not
    there), gets journal_continued, and chains on from it."""
    path = tmp_path / "continued" / "journal.sqlite3"
    successor(path, 3).close()
    context = zmq.Context()
    loop = TableLoop(context, path)
    try:
        consumer = tools(CONSUMER, "--connect", loop.pub_endpoint, "--replay",
                         loop.replay_endpoint, "--table", TABLE, "--count", "6",
                         "--family", "surveillance")
        consumer.wait_for(lambda line: line.startswith("live: table CALI-01"),
                          between=lambda: loop.call("heartbeat"))
        loop.call("append", sample_events(2), True)
        assert consumer.finish() == 0
    finally:
        loop.stop()
        context.destroy(linger=0)
    with Journal.open_readonly(path) as journal:
        report = journal.verify()
    assert report.ok and report.last_seq == ARCHIVED_SEQ + 6
    assert any(line.startswith(f"#{ARCHIVED_SEQ + 1} journal continued after a quarantine")
               for line in consumer.out)
    # the archived journal it names is not there: its seqs are told, once, never skipped
    lost = [line for line in consumer.out if line.startswith("LOST: ")]
    assert len(lost) == 1 and lost[0].startswith(f"LOST: seq 1-{ARCHIVED_SEQ} are not served"), \
        lost
    assert f"6 events, 0 hands settled, last seq {ARCHIVED_SEQ + 6}, chain hash " \
           f"{report.last_hash}, 0 gaps filled" in summary_of(consumer.out)

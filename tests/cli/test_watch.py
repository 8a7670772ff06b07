"""``lowball-table watch`` as surveillance runs it: a subprocess against a real daemon (hands
played from scenario files through simulated devices) or a table loop that loses messages on
purpose. What it prints is checked against the journal."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.cli.watch import VERBOSE_ONLY
from controller.settings.scenario import load_scenario
from controller.stream import wire
from controller.stream.journal import JournalRecord

from tests.support.rig import Rig, RigFactory, scenarios_for
from tests.support.stream import TABLE, TableLoop, sample_events
from tests.support.tools import Tool, ToolFactory, journal_records, run_tool, watch_argv
from tests.support.waits import DEADLINE_S
from tests.support.waits import wait_for


def dollars(cents: int) -> str:
    """Written independently of the code under test: $1,234.56, -$1.50."""
    return ("-" if cents < 0 else "") + f"${abs(cents) // 100:,}.{abs(cents) % 100:02d}"


def seq_of(line: str) -> int | None:
    match = re.match(r"#(\d+) ", line)
    return int(match[1]) if match else None


def header_seq(line: str) -> int:
    match = re.search(r"seq (\d+)", line)
    assert match is not None, line
    return int(match[1])


def watch_rig(tools: ToolFactory, rig: Rig, *args: str) -> Tool:
    return tools(*watch_argv("--connect", rig.stream.events, "--replay", rig.stream.replay,
                             *args))


def watch_loop(tools: ToolFactory, loop: TableLoop, *args: str) -> Tool:
    return tools(*watch_argv("--connect", loop.pub_endpoint, "--replay", loop.replay_endpoint,
                             "--table", TABLE, *args))


def play_hand(rig: Rig, path: Path) -> None:
    rig.play(load_scenario(path))
    wait_for(lambda: rig.status()["hand"] is None, "the hand to end")


def expected_text(record: JournalRecord) -> list[str]:
    """What a surveillance line must show for this record, beyond its seq."""
    envelope = wire.decode_event(record.message)
    data: Any = envelope.data      # Any: each kind's own fields
    if envelope.type == "card_dealt":
        to = f"seat {data.to}" if isinstance(data.to, int) else data.to
        return [str(data.card), to]
    if envelope.type == "decision_made":
        return [f"seat {data.seat}", data.decision] + [str(card) for card in data.cards]
    if envelope.type == "wager_settled":
        return [f"seat {data.seat}", data.wager, dollars(data.amount), data.result,
                dollars(data.net).replace("$", "+$") if data.net > 0 else dollars(data.net)]
    if envelope.type == "hand_settled":
        return [dollars(abs(data.players_net)), dollars(abs(data.house_result))]
    if envelope.type == "fault":
        return ["FAULT", data.code]
    return []


# --- live --------------------------------------------------------------------------------------

def test_live_view_prints_every_card_decision_and_settlement_of_a_played_hand(
        tools: ToolFactory, rig_factory: RigFactory) -> None:
    rig = rig_factory("cali_lowball")
    assert rig.ask({"command": "open"})["ok"]
    watch = watch_rig(tools, rig)
    start = header_seq(watch.wait_for(lambda line: line.startswith("watching table")))
    play_hand(rig, scenarios_for("cali_lowball", 1)[0])
    records = [r for r in journal_records(rig.tmp_path / "state") if r.seq > start]
    shown = [r for r in records if r.type not in VERBOSE_ONLY]
    watch.wait_for(lambda line: seq_of(line) == shown[-1].seq)
    lines = {seq: line for line in watch.out if (seq := seq_of(line)) is not None}
    assert sorted(lines) == [r.seq for r in shown]        # each once, nothing hidden shown
    types = {r.type for r in shown}
    assert {"card_dealt", "decision_made", "wager_settled", "hand_settled"} <= types
    for record in shown:
        for text in expected_text(record):
            assert text in lines[record.seq], (record.type, text, lines[record.seq])
    order = [seq for line in watch.out if (seq := seq_of(line)) is not None]
    assert order == sorted(order)


def test_json_lines_are_the_published_envelopes_with_gapless_seq(tools: ToolFactory,
                                                                 rig_factory: RigFactory) -> None:
    rig = rig_factory("three_card_lowball")
    assert rig.ask({"command": "open"})["ok"]
    watch = watch_rig(tools, rig, "--json")
    start = header_seq(watch.wait_for(lambda line: line.startswith("watching table"),
                                      stream="err"))
    play_hand(rig, scenarios_for("three_card_lowball", 1)[0])
    records = [r for r in journal_records(rig.tmp_path / "state") if r.seq > start]
    watch.wait_for(lambda line: wire.decode_event(line).seq == records[-1].seq)
    assert [line.encode() for line in watch.out] == [r.message for r in records]
    assert [wire.decode_event(line).seq for line in watch.out] == \
        list(range(start + 1, records[-1].seq + 1))


def test_verbose_shows_lamps_and_meters_too(tools: ToolFactory, rig_factory: RigFactory) -> None:
    rig = rig_factory("three_card_lowball")
    watch = watch_rig(tools, rig, "--verbose", "--count", "6")
    watch.wait_for(lambda line: line.startswith("watching table"))
    assert rig.ask({"command": "open"})["ok"]      # opening lights lamps and shows the meter
    assert watch.finish() == 0
    events = [line for line in watch.out if seq_of(line) is not None]
    assert len(events) == 6
    assert any("lamp spot" in line for line in events)
    assert any(re.search(r"config [0-9a-f]{12} applied \(table opened\)", line)
               for line in events)
    assert any(re.search(r"meter \$[\d,]+\.\d\d", line) for line in events)


# --- gaps --------------------------------------------------------------------------------------

def test_missed_messages_are_filled_from_replay_and_said_so(tools: ToolFactory,
                                                            table_loop: TableLoop) -> None:
    table_loop.call("append", sample_events(3), True)            # history: seq 1-3
    watch = watch_loop(tools, table_loop)
    header = watch.wait_for(lambda line: line.startswith("watching table"),
                            between=lambda: table_loop.call("heartbeat"))
    assert header_seq(header) == 3
    table_loop.call("append", sample_events(2), True)            # 4, 5 arrive
    table_loop.call("append", sample_events(3)[2:], False)       # 6 lost on the way
    table_loop.call("append", sample_events(1), True)            # 7 arrives: 6 is missing
    table_loop.call("append", sample_events(2), False)           # 8, 9 lost; the table is quiet
    table_loop.call("heartbeat")                                 # says seq 9
    watch.wait_for(lambda line: seq_of(line) == 9)
    lines = watch.out[watch.out.index(header) + 1:]
    assert lines == [
        lines[0], lines[1], "(filled seq 6 from replay)", lines[3], lines[4],
        "(filled seq 8-9 from replay)", lines[6], lines[7]]
    assert [seq_of(line) for line in lines if seq_of(line)] == [4, 5, 6, 7, 8, 9]
    assert "card As to seat 1 (hole cards)" in lines[3]   # seq 6, recovered from the journal


def test_count_stops_after_n_events_and_timeout_bounds_it(tools: ToolFactory,
                                                          table_loop: TableLoop) -> None:
    watch = watch_loop(tools, table_loop, "--json", "--count", "4")
    watch.wait_for(lambda line: line.startswith("watching table"), stream="err",
                   between=lambda: table_loop.call("heartbeat"))
    table_loop.call("append", sample_events(6), True)
    assert watch.finish() == 0
    assert [wire.decode_event(line).seq for line in watch.out] == [1, 2, 3, 4]



def test_count_not_reached_within_the_timeout_exits_1(tools: ToolFactory,
                                                      table_loop: TableLoop) -> None:
    watch = watch_loop(tools, table_loop, "--count", "99", "--timeout", "2")
    watch.wait_for(lambda line: line.startswith("watching table"),
                   between=lambda: table_loop.call("heartbeat"))
    table_loop.call("append", sample_events(2), True)
    assert watch.finish() == 1
    assert "only 2 of 99 events within 2 s" in watch.err[-1]


def test_a_wrong_table_id_is_reported(table_loop: TableLoop) -> None:
    result = run_tool(*watch_argv("--connect", table_loop.pub_endpoint, "--replay",
                                  table_loop.replay_endpoint, "--table", "NOPE", "--timeout",
                                  "0.5"))
    assert result.returncode == 2
    assert "no heartbeat of table NOPE arrived" in result.stderr


def test_silence_is_reported_and_the_return_of_the_table_too(tools: ToolFactory,
                                                             table_loop: TableLoop) -> None:
    watch = watch_loop(tools, table_loop, "--silence", "0.3")
    watch.wait_for(lambda line: line.startswith("watching table"),
                   between=lambda: table_loop.call("heartbeat"))
    watch.wait_for(lambda line: line.startswith("WARNING: no heartbeat from table CALI-01"))
    table_loop.call("heartbeat")
    watch.wait_for(lambda line: line.startswith("table CALI-01 heard again"))


# --- recall and one hand -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def paused_table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    """Two hands played and a third stopped mid-deal by a controller restart: PAUSED."""
    rig = Rig(tmp_path_factory.mktemp("paused"), "three_card_lowball")
    try:
        assert rig.ask({"command": "open"})["ok"]
        first, second, third = scenarios_for("three_card_lowball", 3)
        play_hand(rig, first)
        play_hand(rig, second)
        scenario = load_scenario(third)
        rig.start_hand(scenario)
        rig.deal_one()
        rig.stop_daemon()
        rig.start_daemon()
        assert rig.status()["state"] == "PAUSED"
        yield rig
    finally:
        rig.close()


def hands_of(rig: Rig) -> dict[str, list[Any]]:
    hands: dict[str, list[Any]] = {}
    for record in journal_records(rig.tmp_path / "state"):
        if record.hand_id is not None:
            hands.setdefault(record.hand_id, []).append(record)
    return hands


def test_recall_prints_the_last_hands_in_full_while_paused(paused_table: Rig) -> None:
    rig = paused_table
    hands = hands_of(rig)
    assert len(hands) == 3
    first, second, third = hands
    result = run_tool(*watch_argv("--connect", rig.stream.events, "--replay", rig.stream.replay,
                                  "--recall", "2"))
    assert result.returncode == 0, result.stderr
    out = result.stdout.splitlines()
    assert "hand TCL-01-000003, in progress" in out[0] and "table PAUSED" in out[0]
    headers = [line for line in out if line.startswith("=== hand")]
    assert [h.split()[2] for h in headers] == [first, second, third]
    assert "settled" in headers[0] and "settled" in headers[1] and "IN PROGRESS" in headers[2]
    seqs = [seq_of(line) for line in out if seq_of(line) is not None]
    assert seqs == [r.seq for hand in (first, second, third) for r in hands[hand]]
    for hand in (first, second):
        settled: Any = wire.decode_event(next(r.message for r in hands[hand]
                                         if r.type == "hand_settled"))
        block = out[out.index(headers[[first, second].index(hand)]):]
        footer = next(line for line in block if line.strip().startswith("net by seat"))
        nets = _cents(footer)
        assert sum(nets) == settled.data.players_net
    # The restart fault of the paused hand is part of its recall.
    assert any("FAULT controller_restart" in line or "restarted" in line for line in out)


def _cents(footer: str) -> list[int]:
    return [(-1 if sign == "-" else 1) * int(amount.replace(",", "").replace(".", ""))
            for sign, amount in re.findall(r"([+-]?)\$([\d,]+\.\d\d)", footer)]


def test_recall_json_is_exactly_the_journaled_messages(paused_table: Rig) -> None:
    rig = paused_table
    hands = hands_of(rig)
    result = run_tool(*watch_argv("--connect", rig.stream.events, "--replay", rig.stream.replay,
                                  "--recall", "1", "--json"))
    assert result.returncode == 0, result.stderr
    last_two = list(hands)[-2:]   # the last complete hand and the one in progress
    assert result.stdout.encode().splitlines() == [r.message for hand in last_two
                                                   for r in hands[hand]]
    assert "=== hand" in result.stderr


def test_one_hand_step_by_step(paused_table: Rig) -> None:
    rig = paused_table
    hands = hands_of(rig)
    first = next(iter(hands))
    result = run_tool(*watch_argv("--connect", rig.stream.events, "--replay", rig.stream.replay,
                                  "--hand", first))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"=== hand {first} (#1, three_card_lowball")
    assert [seq_of(line) for line in lines if seq_of(line)] == [r.seq for r in hands[first]]
    for record in hands[first]:
        line = next(line for line in lines if seq_of(line) == record.seq)
        for text in expected_text(record):
            assert text in line, (text, line)


def test_an_unknown_hand_is_refused_naming_the_hands_there_are(paused_table: Rig) -> None:
    rig = paused_table
    result = run_tool(*watch_argv("--connect", rig.stream.events, "--replay", rig.stream.replay,
                                  "--hand", "TCL-01-999999"))
    assert result.returncode == 1
    assert "no hand 'TCL-01-999999'" in result.stderr
    assert "hands TCL-01-000001 to TCL-01-000003 are in the journal" in result.stderr


# --- errors ------------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def test_an_unreachable_daemon_is_reported_within_the_timeout() -> None:
    events, replay = f"tcp://127.0.0.1:{free_port()}", f"tcp://127.0.0.1:{free_port()}"
    result = run_tool(*watch_argv("--connect", events, "--replay", replay, "--timeout", "0.5"),
                      timeout=DEADLINE_S)
    assert result.returncode == 2
    assert f"no answer from the table's replay socket {replay} within 0.5 s" in result.stderr
    assert "is the daemon running" in result.stderr


@pytest.mark.parametrize("option, endpoint", [("--connect", "localhost:5555"),
                                               ("--replay", "tcp://127.0.0.1"),
                                               ("--connect", "http://127.0.0.1:5555")])
def test_a_malformed_endpoint_is_refused(option: str, endpoint: str) -> None:
    result = run_tool(*watch_argv(option, endpoint, "--timeout", "0.5"))
    assert result.returncode == 2
    assert f"bad endpoint for {option}: {endpoint!r}" in result.stderr


def test_bad_options_are_refused_by_the_parser() -> None:
    result = run_tool(*watch_argv("--recall", "0"))
    assert result.returncode == 2 and "expected a whole number >= 1" in result.stderr
    result = run_tool(*watch_argv("--recall", "2", "--hand", "X"))
    assert result.returncode == 2 and "not allowed with" in result.stderr


def test_a_card_read_during_a_pause_is_shown_even_without_verbose() -> None:
    import io
    from datetime import UTC, datetime

    from controller.core.cards import parse_card
    from controller.cli.watch import Output
    from controller.core.table_events import ShoeCard

    out = io.StringIO()
    output = Output(as_json=False, verbose=False, out=out, err=io.StringIO())
    for seq, during_pause in ((7, False), (8, True)):
        message = wire.encode(ShoeCard(parse_card("Kc"), 3, "", 3, during_pause),
                              table_id=TABLE, seq=seq, ts=datetime.now(UTC),
                              hand_id="CALI-01-000001")
        output.event(wire.decode_event(message))
    [shown] = out.getvalue().splitlines()
    assert seq_of(shown) == 8
    assert "shoe read Kc DURING A PAUSE (card 3 of the shoe, shoe #3" in shown


def test_each_seat_is_shown_with_the_player_its_record_names() -> None:
    from controller.cli.watch import describe

    settled = {"seat": 1, "wager": "ante", "amount": 1000, "result": "win", "net": 1000}
    assert describe("wager_settled", {**settled, "player": "P-7"}) == \
        "SETTLED seat 1 (P-7) ante $10.00: win, net +$10.00"
    assert describe("wager_settled", {**settled, "player": ""}) == \
        "SETTLED seat 1 ante $10.00: win, net +$10.00"
    assert describe("progressive_awarded", {"seat": 2, "award": "jackpot", "amount": 500000,
                                            "player": "P-8"}) == \
        "PROGRESSIVE seat 2 (P-8) jackpot: $5,000.00"
    wagers = [{"seat": 1, "wager": "ante", "amount": 500, "player": "P-7"},
              {"seat": 1, "wager": "bonus", "amount": 100, "player": "P-7"},
              {"seat": 3, "wager": "ante", "amount": 500, "player": ""}]
    assert describe("wagers_locked", {"wagers": wagers}) == \
        "wagers locked: seat 1 (P-7) ante $5.00, bonus $1.00; seat 3 ante $5.00"
    assert "returned seat 1 (P-7) ante $5.00, bonus $1.00; seat 3 ante $5.00;" in describe(
        "hand_voided", {"hand_id": "T-1", "by": "S", "reason": "r", "returned": wagers,
                        "contributions_reversed": 0})

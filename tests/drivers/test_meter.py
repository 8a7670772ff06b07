"""The progressive meter: Alpha packets, integer-cent money, coalesced writes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from drivers.alpha import (
    PacketError,
    PacketParser,
    TextWrite,
    checksum,
    write_text_packet,
)
from drivers.config import MeterConfig
from drivers.meter import AlphaMeter, Coalescer, meter_text
from simulators.clock import ManualClock
from simulators.meter import AlphaSignModel

from tests.support.drivers import make_transport, poll_until


@pytest.mark.parametrize("cents, text", [
    (0, "$0.00"), (5, "$0.05"), (100, "$1.00"), (1234567, "$12,345.67"),
    (100000000, "$1,000,000.00"),
])
def test_meter_text(cents: int, text: str) -> None:
    assert meter_text(cents) == text


@pytest.mark.parametrize("bad, error", [(12.5, TypeError), (True, TypeError), ("5", TypeError),
                                        (-1, ValueError)])
def test_meter_text_refuses(bad: Any, error: type) -> None:
    with pytest.raises(error):
        meter_text(bad)


def test_packet_bytes() -> None:
    packet = write_text_packet("$12,345.67")
    body = b"\x02AA$12,345.67\x03"
    assert packet == b"\x00" * 5 + b"\x01Z00" + body + f"{checksum(body):04X}".encode() + b"\x04"
    assert checksum(body) == sum(body)


def test_packet_round_trip_and_bad_checksum() -> None:
    packet = write_text_packet("JACKPOT T3 $5.00")
    assert PacketParser().feed(packet) == [TextWrite("Z", "00", "A", "JACKPOT T3 $5.00")]
    broken = packet[:-5] + b"0000\x04"
    [error] = PacketParser().feed(broken)
    assert isinstance(error, PacketError) and "bad checksum" in error.reason


@pytest.mark.parametrize("text", ["caf\u00e9", "tab\there", "x" * 126])
def test_packet_text_refused(text: str) -> None:
    with pytest.raises(ValueError):
        write_text_packet(text)


def test_coalescer_rate_and_last_value() -> None:
    clock = ManualClock()
    coalescer: Coalescer[int] = Coalescer(0.25)
    taken = []
    for step in range(1000):  # an offer every 10 ms for 10 s
        coalescer.offer(step)
        value = coalescer.take(clock())
        if value is not None:
            taken.append((clock(), value))
        clock.advance(0.01)
    while (value := coalescer.take(clock())) is None:
        clock.advance(0.01)
    taken.append((clock(), value))
    assert len(taken) <= 10 * 4 + 2
    assert all(b[0] - a[0] >= 0.25 - 1e-9 for a, b in zip(taken, taken[1:], strict=False))
    assert taken[-1][1] == 999
    assert coalescer.take(clock.advance(10)) is None


@pytest.fixture
def meter_rig(transport_kind: str) -> Iterator[tuple[Any, AlphaMeter]]:
    sim = make_transport(transport_kind, AlphaSignModel(), name="meter").start()
    meter = AlphaMeter(MeterConfig(port=sim.url, reconnect_initial_s=0.05,
                                   reconnect_max_s=0.2))
    meter.start()
    assert meter.wait_connected(10)
    yield sim, meter
    meter.stop()
    sim.stop()


def test_meter_shows_amount(meter_rig: tuple[Any, AlphaMeter]) -> None:
    sim, meter = meter_rig
    meter.show_amount(1234567)
    poll_until(lambda: sim.device.text == "$12,345.67")
    assert sim.device.errors == []


def test_burst_is_coalesced_and_last_value_wins(meter_rig: tuple[Any, AlphaMeter]) -> None:
    sim, meter = meter_rig
    for cents in range(100_000, 100_200):
        meter.show_amount(cents)
    poll_until(lambda: sim.device.text == "$1,001.99")
    assert meter.writes < 10


def test_jackpot_holds_until_reset(meter_rig: tuple[Any, AlphaMeter]) -> None:
    sim, meter = meter_rig
    meter.show_amount(500_00)
    meter.show_jackpot("TABLE 3", 500_00)
    poll_until(lambda: sim.device.text == "JACKPOT TABLE 3 $500.00")
    meter.show_amount(1_00)  # the meter reseeds; the sign keeps the hit
    meter.show_amount(2_00)
    meter.reset_jackpot()
    poll_until(lambda: sim.device.text == "$2.00")
    assert "$1.00" not in [text for _, text in sim.device.writes]


def test_bad_amount_raises_in_the_caller(meter_rig: tuple[Any, AlphaMeter]) -> None:
    sim, meter = meter_rig
    with pytest.raises(TypeError):
        meter.show_amount(12.34)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        meter.show_jackpot("T\u00e9", 1)


def test_meter_survives_a_pulled_cable(meter_rig: tuple[Any, AlphaMeter]) -> None:
    sim, meter = meter_rig
    meter.show_amount(42_00)
    poll_until(lambda: sim.device.text == "$42.00")
    sim.disconnect()
    sim.reconnect()
    meter.show_amount(43_00)  # the write that finds the cable gone is retried after reconnect
    poll_until(lambda: sim.device.text == "$43.00")

"""Fuzzed wire input, frame parsers: LBS1 shoe frames, USB shoe reports, spot-controller lines.

Each test runs one :mod:`bench.fuzz` target (its docstring states the properties) with a
suite-sized number of inputs; ``python -m bench.fuzz`` runs the same targets with many more.
The number of inputs tried is printed (``pytest -s``) and must reach the requested count.
"""

from __future__ import annotations

import pytest

from bench import fuzz

EXAMPLES = {
    "lbs1_stream": 400,
    "lbs1_bitflip": 600,
    "lbs1_random": 600,
    "usb_reports": 1000,
    "spot_lines": 400,
}


@pytest.mark.slow
@pytest.mark.parametrize("target", sorted(EXAMPLES))
def test_parser_never_raises_and_accepts_only_good_frames(target: str) -> None:
    tried = fuzz.TARGETS[target](EXAMPLES[target])
    print(f"fuzz {target}: {tried} inputs tried")
    # Hypothesis stops early only when it has exhausted the input space.
    assert tried >= EXAMPLES[target] * 0.9


def test_a_valid_frame_after_each_kind_of_damage_is_read() -> None:
    """The worked cases behind the properties, so a failure here reads plainly."""
    from drivers.lbs1 import Frame, FrameParser, encode_frame, encode_overlong

    good = encode_frame(7, "C", "AS,04A1B2C3")
    flipped = bytearray(good)
    flipped[5] ^= 0x01
    for damage in (b"\x00\xff junk \x03\x02", good[:-2], good[:4], bytes(flipped),
                   encode_overlong(3), encode_frame(8, "C", "KD", crc=0x1234)):
        parser = FrameParser()
        frames = [item for item in parser.feed(damage + good) if isinstance(item, Frame)]
        assert frames == [Frame(7, "C", "AS,04A1B2C3")], damage

"""A clock tests can step: the simulators' models take ``now`` from whoever drives them."""

from __future__ import annotations


class ManualClock:
    def __init__(self, start: float = 0.0) -> None:
        self._now = start

    def __call__(self) -> float:
        return self._now

    def advance(self, seconds: float) -> float:
        if seconds < 0:
            raise ValueError("time does not run backwards")
        self._now += seconds
        return self._now

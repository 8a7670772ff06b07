"""A table whose supervisors have PINs ([security.supervisor_pins]), for the PIN tests of the
daemon and of the console."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tests.support.rig as rigs
from controller.settings.pins import hash_pin
from tests.support.rig import Rig

SUPERVISORS = {"Sam Reyes": "sam-credential-0123456789"}
PIN = "482913"


class PinRig(Rig):
    """A :class:`Rig` whose table config gives its supervisors PINs (name -> PIN)."""

    def __init__(self, tmp_path: Path, game: str, pins: dict[str, str], **options: Any) -> None:
        self.pins = {name: hash_pin(pin) for name, pin in pins.items()}
        super().__init__(tmp_path, game, **options)

    def start_daemon(self) -> None:
        made = rigs.demo_config

        def with_pins(*args: Any, **kwargs: Any) -> Any:
            loaded = made(*args, **kwargs)
            security = loaded.config.security.model_copy(update={"supervisor_pins": self.pins})
            return loaded.model_copy(update={"config": loaded.config.model_copy(
                update={"security": security})})

        rigs.demo_config = with_pins
        try:
            super().start_daemon()
        finally:
            rigs.demo_config = made

"""The console's docs stay true: every screenshot they show exists and every one kept is
shown; the shipped console config loads."""

from __future__ import annotations

import re
from pathlib import Path

from controller.console.config import load_console_config

ROOT = Path(__file__).resolve().parents[2]
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)]+)\)")


def test_every_screenshot_shown_exists_and_every_one_kept_is_shown() -> None:
    shown = set()
    for doc in (ROOT / "README.md", ROOT / "docs" / "operators.md", ROOT / "docs" / "floor.md"):
        for target in IMAGE.findall(doc.read_text()):
            path = (doc.parent / target).resolve()
            assert path.is_file(), f"{doc.name} shows {target}, which does not exist"
            shown.add(path)
    kept = set((ROOT / "docs" / "screens").glob("*.png"))
    assert kept and kept <= shown, f"not shown: {sorted(p.name for p in kept - shown)}"


def test_the_shipped_console_config_loads() -> None:
    loaded = load_console_config(ROOT / "config" / "console.toml")
    assert loaded.config.host == "127.0.0.1" and loaded.table.config.table.id == "TCL-01"

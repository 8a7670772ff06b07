"""Writable copies of the shipped table configs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from controller.settings.table_config import shipped_config_dir


SHIPPED = shipped_config_dir()


@pytest.fixture
def table_dir(tmp_path: Path) -> Path:
    for name in ("paytables.toml", "three-card-lowball.toml", "cali-lowball.toml"):
        shutil.copy(SHIPPED / name, tmp_path / name)
    return tmp_path


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))

"""``mypy --strict`` over the whole tree: every module of every top-level package.

:data:`STRICT` names what is checked, and it is every package the project ships or runs:
each must pass with no error (third-party packages without type hints are the only place
for a targeted ``# type: ignore``, with its reason). A new module is checked the day it is
written; a package added at the top of the tree is added here. ``tests/`` is checked with
them (:data:`CHECKED`), under the same rules: a test's own ``# type: ignore[code]`` is only
for a value it means to be wrong (a hostile input), and says so.

mypy keeps its cache in the virtual environment, so a run after the first reads only what
changed (a few seconds).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Checked with ``mypy --strict``: the top-level packages, every module under them.
STRICT = ("controller", "drivers", "simulators", "bench")
#: What ``mypy --strict`` runs over: the packages and the tests that exercise them.
CHECKED = (*STRICT, "tests")


def test_every_package_of_the_tree_is_checked() -> None:
    packages = {path.parent.name for path in ROOT.glob("*/__init__.py")} - {"tests"}
    assert packages == set(STRICT), f"packages {sorted(packages)}, checked {sorted(STRICT)}"


@pytest.mark.slow
def test_mypy_strict_passes() -> None:
    cache = Path(sys.prefix) / ".mypy_cache"
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
         "--cache-dir", str(cache), *CHECKED],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
        env={**os.environ, "MYPY_FORCE_COLOR": "0"})
    assert done.returncode == 0, f"mypy --strict:\n{done.stdout}{done.stderr}"


def test_every_package_ships_py_typed() -> None:
    """PEP 561: an installed ``controller``, ``drivers`` or ``simulators`` carries its type
    hints to the projects that import it (``py.typed`` beside each package, and in the
    package data, so that the wheel holds it)."""
    with open(ROOT / "pyproject.toml", "rb") as file:
        setuptools = tomllib.load(file)["tool"]["setuptools"]
    packages = [pattern.rstrip("*") for pattern in setuptools["packages"]["find"]["include"]]
    assert packages
    for package in packages:
        assert (ROOT / package / "py.typed").is_file(), f"{package}/py.typed is missing"
        assert "py.typed" in setuptools["package-data"].get(package, []), (
            f"pyproject.toml's package-data does not ship {package}/py.typed")

"""``mypy --strict`` over the parts of the tree that are fully typed.

:data:`STRICT` names what is checked: a package or module listed here must pass with no error
(third-party packages without type hints are the only place for a targeted ``# type: ignore``,
with its reason). :data:`NOT_YET` names what is still on its way to strict, each with why; a
module leaves it for :data:`STRICT` once it passes. Modules outside both lists but imported by
a checked one are read for their types (``--follow-imports=silent``): their own errors are
not reported here.

mypy keeps its cache in the virtual environment, so a run after the first reads only what
changed (a few seconds).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Checked with ``mypy --strict``: packages (every module under them) and single modules.
STRICT = (
    "drivers",
    "simulators",
    "bench",
    "controller/errors.py",
    "controller/build_info.py",
    "controller/core/cards.py",
    "controller/core/money.py",
    "controller/core/rankings",
    "controller/core/vocabulary.py",
    "controller/core/canonical_json.py",
    "controller/core/commands.py",
    "controller/core/table_settings.py",
    "controller/core/table_states.py",
    "controller/core/lamps.py",
    "controller/core/table_view.py",
    "controller/daemon/command_channel.py",
    "controller/daemon/pool_link.py",
    "controller/floor",
    "controller/console",
    "controller/cli",
    "controller/stream/client.py",
    "controller/stream/publisher.py",
    "controller/stream/journal.py",
    "controller/stream/command_client.py",
    "controller/stream/command_replies.py",
    "controller/stream/pool_channel.py",
)

#: Inside a package of :data:`STRICT`, but not checked yet: module -> why.
NOT_YET = {
    "bench/pipeline.py": "being rewritten on the command channel's CommandClient",
    "bench/power_loss.py": "being rewritten on the command channel's CommandClient",
    "bench/floor_rig.py": "its TableProcess extends bench/pipeline.py's DaemonProcess",
}


def test_the_lists_name_files_that_exist() -> None:
    missing = [name for name in (*STRICT, *NOT_YET) if not (ROOT / name).exists()]
    assert not missing, f"no such file or package: {missing}"


def test_mypy_strict_passes() -> None:
    cache = Path(sys.prefix) / ".mypy_cache"
    exclude = "^(" + "|".join(name.replace(".", r"\.") for name in NOT_YET) + ")$"
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
         "--cache-dir", str(cache), "--exclude", exclude, *STRICT],
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

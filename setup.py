"""Build: the pure game core (cards, events, money, rankings, engines) compiled with mypyc.

mypyc compiles the very same ``.py`` files the pure-Python install runs; nothing is duplicated.
``LOWBALL_PURE_PYTHON=1 pip install -e .`` (or ``make pure``) skips compilation: every module
then runs as plain Python. Everything else (project metadata, dependencies) is in pyproject.toml.
"""

import os
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

#: The hot, pydantic-free core. Other modules import these as usual and stay Python. The
#: events, the hand's and the table's, are native record classes (controller/core/records.py
#: says how they keep the type hints and docstrings the wire schema is generated from, which
#: compiled classes lose). The engines read the table settings on every hand: compiled, that is
#: a native attribute access instead of a lookup through the Python API.
COMPILED = [
    "controller/core/cards.py",
    "controller/core/records.py",
    "controller/core/events.py",
    "controller/core/table_events.py",
    "controller/core/table_settings.py",
    "controller/core/rankings/_tables.py",
    "controller/core/rankings/ace_to_five.py",
    "controller/core/rankings/three_card.py",
    "controller/core/games/base.py",
    "controller/core/games/cali_lowball.py",
    "controller/core/games/three_card_lowball.py",
    "controller/core/games/house_way.py",
    "controller/par/three_card_lowball.py",
]


class BuildPyWithConfig(build_py):
    """Ship ``config/`` inside the package as ``controller/shipped_config`` (wheels only; a
    checkout finds ``config/`` beside the package)."""

    def run(self):
        super().run()
        target = Path(self.build_lib) / "controller" / "shipped_config"
        shutil.copytree(Path(__file__).parent / "config", target, dirs_exist_ok=True)


def extensions():
    if os.environ.get("LOWBALL_PURE_PYTHON", "") not in ("", "0"):
        return []
    from mypyc.build import mypycify

    return mypycify(COMPILED, opt_level=os.environ.get("MYPYC_OPT_LEVEL", "3"))


setup(ext_modules=extensions(), cmdclass={"build_py": BuildPyWithConfig})

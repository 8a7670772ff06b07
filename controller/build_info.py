"""Whether the game core runs compiled (mypyc, see setup.py), and whether a compiled module is
older than its source.

With an editable install (``pip install -e .``, which ``make`` does) the compiled modules sit
beside their ``.py`` files, and Python imports a compiled module in preference to its source:
after an edit, the old compiled code would go on running, silently, until the core is built
again. ``make test``, ``make run`` and ``make bench`` rebuild it when a core source changed;
the tests check this module first and stop (tests/conftest.py) if anything is still stale.

This module is plain Python and never compiled. Nothing calls it at run time: in a wheel
installed on a table PC the files' times say nothing about how they were built.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def compiled_modules() -> list[Path]:
    """The compiled modules of the package (``controller/core/games/base.cpython-311-...so``)."""
    return sorted(PACKAGE.rglob("*.so"))


def stale_compiled_modules() -> list[str]:
    """Sources (``controller/core/games/base.py``) edited after their compiled module was built."""
    # mypyc compiles the modules together into one shared library beside the package
    # (``<hash>__mypyc.cpython-311-...so``); each module's own .so only loads it, and may keep
    # its old time when a rebuild did not need to touch it. A build is as recent as its newest.
    shared = [path.stat().st_mtime for path in PACKAGE.parent.glob("*__mypyc*.so")]
    stale = []
    for module in compiled_modules():
        source = module.with_name(module.name.split(".")[0] + ".py")
        if source.exists() and source.stat().st_mtime > max([module.stat().st_mtime, *shared]):
            stale.append(str(source.relative_to(PACKAGE.parent)))
    return stale


def describe() -> str:
    """One line for the test report: compiled or pure Python."""
    modules = compiled_modules()
    if not modules:
        return "game core: pure Python"
    return f"game core: compiled with mypyc ({len(modules)} modules)"

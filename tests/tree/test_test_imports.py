"""No test module imports another test module: what tests share lives in :mod:`tests.support`.

A helper imported from a test module runs that module's imports and fixtures in its importer,
and binds the two files' places together; the one way to stand up a table, the config builders
and the waits are in ``tests/support``. Imports are read with :mod:`ast`, so a relative import
(``from .conftest import ...``) or one inside a function counts too.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def imported_modules(source: str, path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in ``source``, read as the file ``path``."""
    package = path.relative_to(TESTS.parent).with_suffix("").parts[:-1]
    found = []
    for node in ast.walk(ast.parse(source, str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1]) if node.level else ""
            module = ".".join(part for part in (base, node.module or "") if part)
            if node.module is None:   # from . import x: x is a module
                found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, module))
    return found


def is_test_module(module: str) -> bool:
    """A module of ``tests`` outside ``tests.support`` (the package ``tests`` itself is none)."""
    parts = module.split(".")
    return parts[0] == "tests" and len(parts) > 1 and parts[1] != "support"


def test_no_test_module_imports_another_test_module() -> None:
    offenders = [f"{path.relative_to(TESTS.parent)}:{line}: imports {module}"
                 for path in sorted(TESTS.rglob("*.py"))
                 for line, module in imported_modules(path.read_text(), path)
                 if is_test_module(module)]
    assert not offenders, "import it from tests.support instead:\n" + "\n".join(offenders)


def test_relative_nested_and_package_imports_are_read() -> None:
    source = ("from .conftest import TABLE\n"
              "from . import test_wire\n"
              "def f() -> None:\n"
              "    from tests.daemon.test_daemon import wait_for\n"
              "from tests.support.waits import wait_for\n"
              "import tests.support.rig\n")
    modules = [module for _, module in imported_modules(source, TESTS / "stream" / "x.py")]
    assert [module for module in modules if is_test_module(module)] == [
        "tests.stream.conftest", "tests.stream.test_wire", "tests.daemon.test_daemon"]

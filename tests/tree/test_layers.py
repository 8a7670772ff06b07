"""The import contract: every module of the project sits in one layer, and a layer imports only
the layers below it (ARCHITECTURE.md draws them).

Every ``.py`` file under ``controller/``, ``drivers/`` and ``simulators/`` is read, not a list:
a new module is covered the day it is written. Each import statement (including those inside
functions) is checked against its layer's rule:

==============  ===================================================  ==========================
layer           may import from the project                          third-party packages
==============  ===================================================  ==========================
errors          nothing                                              none
core            core, errors                                         none
par             core, par, errors                                    numpy
drivers         drivers, core (cards, vocabulary), errors            serial, usb, pydantic,
                                                                     structlog
settings        core, settings, errors, drivers.config               pydantic
stream          core, settings, stream, errors                       pydantic, zmq, structlog,
                                                                     prometheus_client
daemon          core, settings, stream, daemon, errors, drivers      pydantic, zmq, structlog,
                                                                     prometheus_client
console         core, settings, stream, console, errors              pydantic, zmq, structlog,
                                                                     starlette, uvicorn
floor           core, settings, stream, par, floor, errors           pydantic, zmq, structlog,
                                                                     psycopg, starlette,
                                                                     uvicorn, prometheus_client
cli             everything                                           everything
simulators      simulators, drivers, core, stream, errors            serial, usb, zmq
==============  ===================================================  ==========================

The simulators may import the stream layer for its one client of the command channel
(:class:`controller.stream.command_client.CommandClient`, which the simulated dealer uses).

The standard library is open to every layer (``sys.stdlib_module_names``). The core is also
imported for real in a fresh interpreter, which must load nothing outside the standard library.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TREES = ("controller", "drivers", "simulators")

#: layer -> (project layers it may import, third-party top-level packages it may import)
RULES: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "errors": (frozenset(), frozenset()),
    "build_info": (frozenset(), frozenset()),
    "core": (frozenset({"core", "errors"}), frozenset()),
    "par": (frozenset({"core", "par", "errors"}), frozenset({"numpy"})),
    "drivers": (frozenset({"drivers", "core", "errors"}),
                frozenset({"serial", "usb", "pydantic", "structlog"})),
    "settings": (frozenset({"core", "settings", "errors", "drivers.config"}),
                 frozenset({"pydantic"})),
    "stream": (frozenset({"core", "settings", "stream", "errors"}),
               frozenset({"pydantic", "zmq", "structlog", "prometheus_client"})),
    "daemon": (frozenset({"core", "settings", "stream", "daemon", "errors", "drivers"}),
               frozenset({"pydantic", "zmq", "structlog", "prometheus_client"})),
    "console": (frozenset({"core", "settings", "stream", "console", "errors"}),
                frozenset({"pydantic", "zmq", "structlog", "starlette", "uvicorn"})),
    "floor": (frozenset({"core", "settings", "stream", "par", "floor", "errors"}),
              frozenset({"pydantic", "zmq", "structlog", "psycopg", "starlette", "uvicorn",
                         "prometheus_client"})),
    "simulators": (frozenset({"simulators", "drivers", "core", "stream", "errors"}),
                   frozenset({"serial", "usb", "zmq"})),
}
#: The command line wires everything together: it may import any layer and package.
UNRULED = {"cli"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> str:
    """``controller.core.table`` -> ``core``; ``drivers.lbs1`` -> ``drivers``."""
    parts = module.split(".")
    if parts[0] != "controller":
        return parts[0]
    if len(parts) == 1:
        return "errors"  # the package's empty __init__ imports nothing
    return parts[1]


def imports_of(path: Path) -> list[str]:
    """Every module an import statement in ``path`` names (absolute; relative resolved)."""
    tree = ast.parse(path.read_text(), str(path))
    package = module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" \
        else module_name(path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            if base == "__future__":
                continue
            found.append(base)
            # ``from controller.stream import wire`` imports the module controller.stream.wire
            if base.split(".")[0] in TREES:
                found += [f"{base}.{alias.name}" for alias in node.names
                          if (ROOT / Path(*base.split("."), alias.name)).exists()
                          or (ROOT / Path(*base.split("."), alias.name + ".py")).exists()]
    return found


def allowed(importer: str, imported: str) -> bool:
    layer = layer_of(importer)
    if layer in UNRULED:
        return True
    project_layers, packages = RULES[layer]
    top = imported.split(".")[0]
    if top in TREES:
        if imported in ("controller", "drivers", "simulators"):
            return True
        target = layer_of(imported)
        if target == "drivers" and "drivers.config" in project_layers:
            return imported == "drivers.config" or imported.startswith("drivers.config.")
        return target in project_layers
    return top in sys.stdlib_module_names or top in packages


def project_modules() -> list[Path]:
    return sorted(path for tree in TREES for path in (ROOT / tree).rglob("*.py"))


def crossings() -> set[tuple[str, str]]:
    found = set()
    for path in project_modules():
        importer = module_name(path)
        assert layer_of(importer) in RULES or layer_of(importer) in UNRULED, (
            f"{path.relative_to(ROOT)} is in no layer: put it in one of "
            f"{', '.join(sorted(RULES))} or give its folder a rule here")
        for imported in imports_of(path):
            if not allowed(importer, imported):
                found.add((importer, imported))
    return found


def test_every_module_imports_only_the_layers_below_it() -> None:
    found = crossings()
    assert not found, "imports across the layer rules:\n" + "\n".join(
        f"  {importer} imports {imported}" for importer, imported in sorted(found))


@pytest.mark.parametrize("importer, imported, verdict", [
    ("controller.core.table", "controller.core.cards", True),
    ("controller.core.table", "pydantic", False),
    ("controller.core.table", "controller.stream.wire", False),
    ("controller.stream.wire", "controller.daemon.loop", False),
    ("controller.settings.table_config", "drivers.config", True),
    ("controller.settings.table_config", "drivers.shoe", False),
    ("drivers.lbs1", "controller.core.cards", True),
    ("drivers.lbs1", "zmq", False),
    ("controller.par.three_card_lowball", "numpy", True),
    ("controller.cli.run", "controller.daemon.loop", True),
])
def test_the_rules_themselves(importer: str, imported: str, verdict: bool) -> None:
    assert allowed(importer, imported) is verdict


def test_importing_the_core_loads_only_the_standard_library() -> None:
    core = [module_name(path) for path in project_modules()
            if layer_of(module_name(path)) in ("core", "par", "errors")]
    code = ("import sys\nbefore = set(sys.modules)\n"
            + "".join(f"import {module}\n" for module in core)
            + "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
            + "print(sorted(m for m in new - set(sys.stdlib_module_names)"
              " if not m.startswith('_') and not m.endswith('__mypyc')"
              " and m not in ('controller', 'numpy')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert ast.literal_eval(done.stdout) == []

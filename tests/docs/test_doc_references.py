"""The docs name only what the project has, and "What is where" names every module.

Docs drift: a guide citing a rules file the project does not ship, a docstring pointing at a
doc nobody wrote, a module left out of ARCHITECTURE.md's map. These tests read the docs
(README.md, ARCHITECTURE.md, CHANGELOG.md, docs/**/*.md) and the comments and docstrings of
``controller/`` (and of ``drivers/``, ``simulators/``, ``bench/`` and ``examples/``), and
fail naming each reference that does not resolve:

- a markdown link or image (``[text](docs/x.md#anchor)``): the file, and the heading the
  anchor names, exist;
- a project path (``controller/stream/journal.py``, ``docs/install.md``, ``tests/x.py::test_y``,
  a glob such as ``tests/redteam/test_redteam7*.py``): it exists, and so does the test named;
- a module path inside ``controller/`` written short (``core/table.py``);
- a dotted module (``controller.core.table``, ``bench.pipeline``,
  ``controller.errors.LowballError``): the module exists, and a name after it is its name.

Only project-relative paths are checked: a path preceded by ``/``, ``~``, ``$`` or another
path's characters (``/var/lib/lowball-table/...``, ``<this tree>/bench/...``, a URL) is a
place on a machine, not a file of this project.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Files another piece of work adds, linked already; checked like any once they exist.
PENDING: set[str] = set()

TOP = r"(?:controller|drivers|simulators|bench|tests|docs|config|systemd|examples)"
#: A project path: it starts at a top-level folder, with nothing path-like before it.
PROJECT_PATH = re.compile(rf"(?<![\w./~$<>@:-]){TOP}/[\w./*<>-]*[\w*/>](?:::\w+)?")
#: A module of controller/ written from inside it (``core/table.py``).
SHORT_PATH = re.compile(
    r"(?<![\w./~$<>@:-])(?:core|daemon|stream|console|floor|settings|par|cli)/[\w/]*\w\.py\b")
#: A dotted module name, and what follows it.
DOTTED = re.compile(r"(?<![\w.])(?:controller|drivers|simulators|bench)(?:\.\w+)+")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.MULTILINE)
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def doc_files() -> list[Path]:
    docs = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", ROOT / "CHANGELOG.md"]
    return docs + sorted((ROOT / "docs").rglob("*.md"))


def python_files() -> list[Path]:
    """The shipped code and its tools: controller/, drivers/, simulators/, bench/, examples/."""
    return sorted(path for top in ("controller", "drivers", "simulators", "bench", "examples")
                  for path in (ROOT / top).rglob("*.py") if "__pycache__" not in path.parts)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as ``-``."""
    text = re.sub(r"[`*]|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", text))


def anchors(doc: Path) -> set[str]:
    text = FENCE.sub("", doc.read_text())
    return {slug(heading) for heading in HEADING.findall(text)}


#: A placeholder in a path: ``paytable-N.json``, ``NAME.key``, ``shoe-<name>.log`` (any file
#: that fits will do).
PLACEHOLDER = re.compile(r"<[^<>/]+>|(?<![A-Za-z])[A-Z]+(?![A-Za-z])")


def exists(relative: str) -> bool:
    relative = relative.rstrip("/")
    if relative in PENDING and not (ROOT / relative).exists():
        return True
    relative = PLACEHOLDER.sub("*", relative)
    if "*" in relative:
        return any(ROOT.glob(relative))
    return (ROOT / relative).exists()


def defines_test(path: str, name: str) -> bool:
    """Whether the test module at ``path`` defines ``name`` (a function, class or fixture)."""
    source = (ROOT / path).read_text()
    return re.search(rf"^\s*(?:async\s+)?(?:def|class)\s+{name}\b", source, re.MULTILINE) \
        is not None


def module_of(parts: list[str]) -> tuple[Path, int] | None:
    """The longest leading run of ``parts`` that is a module or package of the project, and
    how many parts it takes (at least two: ``controller`` alone names nothing)."""
    for count in range(len(parts), 1, -1):
        base = ROOT.joinpath(*parts[:count])
        if base.with_suffix(".py").is_file():
            return base.with_suffix(".py"), count
        if (base / "__init__.py").is_file():
            return base / "__init__.py", count
    return None


def dotted_problem(name: str) -> str | None:
    parts = name.split(".")
    found = module_of(parts)
    if found is None:
        return f"{name}: no such module"
    module, count = found
    if count < len(parts):
        attribute = parts[count]
        package = module.parent
        if module.name == "__init__.py" and ((package / f"{attribute}.py").is_file()
                                             or (package / attribute).is_dir()):
            return None
        if not re.search(rf"\b{attribute}\b", module.read_text()):
            return f"{name}: {module.relative_to(ROOT)} has no {attribute}"
    return None


def path_problems(text: str) -> Iterator[str]:
    """Every project path, short path and dotted module in ``text`` that does not resolve."""
    for match in PROJECT_PATH.finditer(text):
        path, _, name = match[0].partition("::")
        path = path.removesuffix("**").rstrip(".")  # **bold** text around a path
        if "..." in path:  # elided: base.cpython-311-...so
            continue
        if not exists(path):
            yield f"{path}: no such file"
        elif name and path.endswith(".py") and "*" not in path and not defines_test(path, name):
            yield f"{path}::{name}: no such test"
    for match in SHORT_PATH.finditer(text):
        if not (ROOT / "controller" / match[0]).is_file():
            yield f"{match[0]}: no such module in controller/"
    for match in DOTTED.finditer(text):
        problem = dotted_problem(match[0])
        if problem is not None:
            yield problem


def link_problems(doc: Path) -> Iterator[str]:
    text = doc.read_text()
    for target in LINK.findall(FENCE.sub("", text)):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        linked = (doc.parent / file).resolve() if file else doc
        relative = linked.relative_to(ROOT).as_posix() if linked.is_relative_to(ROOT) else file
        if not linked.exists():
            if relative not in PENDING:
                yield f"link {target}: no such file"
            continue
        if anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            yield f"link {target}: no heading {anchor!r} in {relative}"


def comments_and_docstrings(path: Path) -> Iterator[tuple[int, str]]:
    source = path.read_text()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring is not None and node.body:
                yield node.body[0].lineno, docstring


@pytest.mark.parametrize("doc", doc_files(), ids=lambda path: path.relative_to(ROOT).as_posix())
def test_a_doc_names_only_files_modules_and_headings_that_exist(doc: Path) -> None:
    """Origin: "SPEC" cited where no such file is in the project, docs/journal.md cited from
    the held mark before anyone wrote it."""
    assert doc.is_file(), f"{doc.relative_to(ROOT)} is missing"
    problems = [*link_problems(doc), *path_problems(doc.read_text())]
    assert not problems, f"{doc.relative_to(ROOT)}:\n  " + "\n  ".join(problems)


def test_the_comments_and_docstrings_of_the_code_name_only_what_exists() -> None:
    problems = [f"{path.relative_to(ROOT)}:{line}: {problem}"
                for path in python_files()
                for line, text in comments_and_docstrings(path)
                for problem in path_problems(text)]
    assert not problems, "\n".join(problems)


def test_no_doc_or_docstring_cites_a_rules_file_the_project_does_not_ship() -> None:
    """The product's rules are the house's; a reader of the project finds them in its docs
    (docs/operators.md, docs/configuration.md, docs/par-sheets.md), not in a "SPEC" file."""
    generated = sorted((ROOT / "docs").rglob("*.json"))  # the schema carries docstrings
    cited = [f"{path.relative_to(ROOT)}"
             for path in [*doc_files(), *python_files(), *generated]
             if re.search(r"\bSPEC\b", path.read_text())]
    assert not cited, f"cite the project's own docs instead of SPEC: {cited}"


def what_is_where() -> dict[str, str]:
    """ARCHITECTURE.md's "What is where": each row's path, and the row's text."""
    text = (ROOT / "ARCHITECTURE.md").read_text()
    section = text.partition("\n## What is where\n")[2].partition("\n## ")[0]
    assert section, "ARCHITECTURE.md has no \"What is where\" section"
    rows = {}
    for line in section.splitlines():
        match = re.match(r"^\|\s*`([^`]+)`\s*\|(.*)\|\s*$", line)
        if match:
            rows[match[1]] = match[2]
    return rows


def test_what_is_where_names_every_module_and_folder_of_controller() -> None:
    """Origin: daemon/withdrawals, stream/transport_identity, event_encoder, live_view,
    core/player_key*, floor/store, feed, migrations and pool_hits were missing from the map."""
    rows = what_is_where()
    missing = []
    controller = ROOT / "controller"
    for path in sorted(controller.rglob("*")):
        relative = path.relative_to(controller)
        if "__pycache__" in relative.parts or path.name == "__init__.py" \
                or (path.is_file() and path.suffix != ".py") or path.name.startswith("."):
            continue
        if len(relative.parts) == 1:
            if path.is_file() and f"controller/{path.name}" not in rows:
                missing.append(f"controller/{path.name}: no row")
            elif path.is_dir() and f"controller/{path.name}/" not in rows:
                missing.append(f"controller/{path.name}/: no row")
            continue
        row = rows.get(f"controller/{relative.parts[0]}/", "")
        name = f"`{path.name}/`" if path.is_dir() else f"`{path.stem}`"
        if name not in row:
            missing.append(f"{path.relative_to(ROOT)}: {name} not in the row of "
                           f"controller/{relative.parts[0]}/")
    assert not missing, "ARCHITECTURE.md, What is where:\n  " + "\n  ".join(missing)


def test_what_is_where_names_no_module_that_is_gone() -> None:
    controller = ROOT / "controller"
    gone = []
    for path, row in what_is_where().items():
        if not exists(path):
            gone.append(f"{path}: no such file")
        elif path.startswith("controller/") and path.endswith("/"):
            folder = ROOT / path
            for name in re.findall(r"`(\w+)/?`", row):
                if not any(folder.rglob(f"{name}.py")) and not any(folder.rglob(name)):
                    gone.append(f"{path}: `{name}` is no module or folder there")
    assert not gone, f"What is where names what {controller.name}/ does not hold: {gone}"

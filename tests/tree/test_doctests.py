"""Every example in a docstring of the project runs, and shows what it says.

The examples are read from the source files (module, class, function and method docstrings,
nested ones included), not from the imported objects: a module compiled with mypyc keeps no
docstring a doctest finder could see. Each example runs in the namespace of the module as
imported, so the compiled core is what the examples exercise where it is built.
"""

from __future__ import annotations

import ast
import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TREES = ("controller", "drivers", "simulators", "bench")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def docstrings(path: Path) -> list[tuple[str, int, str]]:
    """(qualified name, line, docstring) of every docstring in ``path`` holding an example."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}.{child.name}"
                text = ast.get_docstring(child, clean=False)
                if text and ">>>" in text:
                    found.append((name, child.body[0].lineno, text))
                visit(child, name)

    module = module_name(path)
    text = ast.get_docstring(tree, clean=False)
    if text and ">>>" in text:
        found.append((module, 1, text))
    visit(tree, module)
    return found


def modules_with_examples() -> list[Path]:
    return sorted(path for tree in TREES for path in (ROOT / tree).rglob("*.py")
                  if ">>>" in path.read_text(encoding="utf-8"))


def test_the_project_has_examples_to_run() -> None:
    assert len(modules_with_examples()) >= 5


@pytest.mark.parametrize("path", modules_with_examples(),
                         ids=lambda path: str(path.relative_to(ROOT)))
def test_docstring_examples(path: Path) -> None:
    module = importlib.import_module(module_name(path))
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = [parser.get_doctest(text, dict(vars(module)), name, str(path), line)
             for name, line, text in docstrings(path)]
    examples = sum(len(test.examples) for test in tests)
    assert examples, f"{path.name} mentions '>>>' outside any docstring example"
    report: list[str] = []
    for test in tests:
        runner.run(test, out=report.append)
    results = runner.summarize(verbose=False)
    assert results.failed == 0, "".join(report)
    assert results.attempted == examples

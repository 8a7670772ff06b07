"""One exception root: every exception the project defines is a
:class:`controller.errors.LowballError`, and callers tell errors apart by class and fields.

Every module of the project is imported and every exception class it defines is checked, so
a new one is covered the day it is written.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import Any

import pytest

from controller.core.cards import parse_card
from controller.core.games import DuplicateCard, IllegalAction, WagerError
from controller.errors import LowballError

from tests.support.table import SetupFactory

ROOT = Path(__file__).resolve().parents[2]
TREES = ("controller", "drivers", "simulators", "bench")


def project_modules() -> list[str]:
    names = []
    for tree in TREES:
        for path in sorted((ROOT / tree).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__main__":
                continue
            if parts[-1] == "__init__":
                parts.pop()
            names.append(".".join(parts))
    return names


def exception_classes() -> list[type[BaseException]]:
    found = []
    for name in project_modules():
        module = importlib.import_module(name)
        found += [cls for _, cls in inspect.getmembers(module, inspect.isclass)
                  if issubclass(cls, BaseException) and cls.__module__ == module.__name__]
    return found


def test_every_exception_the_project_defines_derives_from_the_root() -> None:
    classes = exception_classes()
    assert len(classes) >= 25, classes
    strays = [f"{cls.__module__}.{cls.__qualname__}" for cls in classes
              if not issubclass(cls, LowballError)]
    assert not strays, f"not LowballError: {strays}"


def drawn_tree() -> str:
    """The exception tree as controller/errors.py draws it: each public class under its base,
    its builtin base in brackets, its module."""
    from controller import errors
    classes = [cls for cls in exception_classes() if not cls.__name__.startswith("_")]
    lines = ["    LowballError"]

    def walk(parent: type[BaseException], depth: int) -> None:
        for cls in sorted((cls for cls in classes if parent in cls.__bases__),
                          key=lambda cls: (cls.__module__, cls.__name__)):
            builtins = [base.__name__ for base in cls.__bases__
                        if not issubclass(base, LowballError)]
            lines.append("    " * (depth + 1) + cls.__name__ +
                         (f" ({', '.join(builtins)})" if builtins else "") +
                         f"  {cls.__module__}")
            walk(cls, depth + 1)

    walk(errors.LowballError, 1)
    return "\n".join(lines)


def test_the_root_modules_docstring_draws_the_whole_tree() -> None:
    from controller import errors
    tree = drawn_tree()
    assert errors.__doc__ is not None and tree in errors.__doc__, (
        "controller/errors.py's docstring does not draw the exception tree as it is; "
        "put this in its place:\n" + tree)


def test_a_duplicate_card_is_told_by_its_class_and_fields(cali_setup: SetupFactory) -> None:
    from controller.core.games import ENGINES

    hand = ENGINES["cali_lowball"](cali_setup(), {1: {"ante": 100, "xtra_bonus": 100}})
    card = parse_card("As")
    hand.deal(card)
    with pytest.raises(DuplicateCard) as raised:
        hand.deal(card)
    assert isinstance(raised.value, IllegalAction) and isinstance(raised.value, ValueError)
    assert (raised.value.card, raised.value.holder) == (card, 1)


@pytest.mark.parametrize("wagers, seat", [
    ({9: {"ante": 100, "xtra_bonus": 100}}, 9),
    ({"x": {"ante": 100, "xtra_bonus": 100}}, "x"),
    ({2: {"ante": 100, "xtra_bonus": 50}}, 2),
    ({3: {"ante": 100}}, 3),
    ({4: {"ante": -1, "xtra_bonus": 100}}, 4),
    ({}, None),
])
def test_a_wager_error_names_its_seat_as_a_field(cali_setup: SetupFactory, wagers: dict[Any, Any],
                                                 seat: int | str | None) -> None:
    from controller.core.games import ENGINES

    with pytest.raises(WagerError) as raised:
        ENGINES["cali_lowball"](cali_setup(), wagers)
    assert raised.value.seat == seat

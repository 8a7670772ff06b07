"""The one representation of every event, the hand's and the table's: :class:`Record`.

Events are declared once each, as compact classes with annotated fields and a docstring (the
NamedTuple-class form), in :mod:`controller.core.declared`; :mod:`controller.core.record_gen`
generates from them the record classes of :mod:`controller.core.events` and
:mod:`controller.core.table_events`, which the compiled build (setup.py) makes native mypyc
classes. An engine creates about a hundred events a hand, and a compiled record costs a fifth
of a NamedTuple made with ``tuple.__new__``. A record keeps the NamedTuple API the rest of the
code uses: ``_fields``, ``_asdict()``, ``_replace()``, the same ``repr``, iteration and
unpacking, ``len``, indexing, pickling, defaults, and immutability (setting or deleting an
attribute raises AttributeError). It is not a tuple: it equals (and hashes as) a record of
the same type with equal values only, never a plain tuple, and has no ordering.

- Every field is typed ``Any`` for mypy: a record stores exactly what it is given, as a
  NamedTuple did (compiled code would otherwise check and convert each value: a bool given
  as an int would come back an int). Values of the wrong type are the wire's to refuse.
- The declared field types are ``_hints``, the annotation text of the declaration: the
  compiled build drops class annotations, and the wire schema (controller/stream/wire.py) is
  generated from the field types. :func:`field_hints` resolves them, as
  :func:`typing.get_type_hints` resolves annotations, for records and NamedTuples alike.
- Docstrings are ``__doc__ = ...`` assignments: the compiled build drops class docstrings,
  and the wire schema carries them as descriptions (hence ``misc``, mypy's objection to
  redefining ``__doc__``, is off for this file and the generated ones).
- ``__init__`` sets each field with ``object.__setattr__`` (``__setattr__`` refuses): compiled,
  that is a plain store into the object; pure Python, it is a call per field, the price of
  immutability without a tuple (a pure-Python hand costs about twice what it did).
"""

# mypy: disable-error-code="misc"

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, ClassVar, TypeVar, get_args, get_type_hints

R = TypeVar("R", bound="Record")


class Record:
    """An immutable record with named fields and the API of a NamedTuple (see the module's
    docstring). A subclass is ``@final`` and declares ``__slots__`` and ``_fields`` (the field
    names, in order), ``_hints`` (their types, as annotation text), each field as an ``Any``
    attribute, and an ``__init__`` setting every field with ``object.__setattr__``: the events'
    are generated (:mod:`controller.core.record_gen`), a few others are written by hand."""

    __slots__ = ()
    #: A class attribute (not, as mypy has it, an instance one), kept by the compiled build.
    __doc__: ClassVar[str | None]
    _fields: ClassVar[tuple[str, ...]] = ()
    _hints: ClassVar[dict[str, str]] = {}

    def __setattr__(self, name: str, value: object) -> None:
        if name in self._fields:
            raise AttributeError("can't set attribute")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __delattr__(self, name: str) -> None:
        if name in self._fields:
            raise AttributeError("can't delete attribute")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _astuple(self) -> tuple[Any, ...]:
        """The values, in field order."""
        return tuple([getattr(self, name) for name in self._fields])

    def _asdict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._fields}

    def _replace(self: R, **changes: Any) -> R:
        """A new record of the same type with ``changes`` in place of those fields' values
        (ValueError naming any that is no field), as a NamedTuple's ``_replace``."""
        values = [changes.pop(name, getattr(self, name)) for name in self._fields]
        if changes:
            raise ValueError(f"Got unexpected field names: {list(changes)!r}")
        cls: Any = type(self)  # a record class, whose __init__ takes its fields
        rebuilt: R = cls(*values)
        return rebuilt

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._astuple() == other._astuple()

    def __hash__(self) -> int:
        return hash((type(self), self._astuple()))

    def __repr__(self) -> str:
        values = ", ".join([f"{name}={getattr(self, name)!r}" for name in self._fields])
        return f"{type(self).__name__}({values})"

    def __iter__(self) -> Iterator[Any]:
        return iter(self._astuple())

    def __len__(self) -> int:
        return len(self._fields)

    def __getitem__(self, index: Any) -> Any:  # an int or a slice, as for a tuple
        return self._astuple()[index]

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), self._astuple()


def is_record_type(hint: object) -> bool:
    """Whether ``hint`` is a record class: a :class:`Record`, or a NamedTuple (a NamedTuple-class
    declaration, as in :mod:`controller.core.declared`)."""
    return isinstance(hint, type) and (
        issubclass(hint, Record) or (issubclass(hint, tuple) and hasattr(hint, "_fields")))


def field_hints(cls: type) -> dict[str, Any]:
    """The type of each field of a record class, in field order: a :class:`Record`'s
    ``_hints`` resolved exactly as :func:`typing.get_type_hints` resolves a NamedTuple's
    annotations (in the class's module)."""
    name, module = cls.__name__, cls.__module__
    if issubclass(cls, Record):
        holder = type(name, (), {"__annotations__": dict(cls._hints), "__module__": module})
        return get_type_hints(holder)
    return get_type_hints(cls)



def kinds_of(union: object) -> dict[type, str]:
    """Each event type of ``union`` -> its name on the wire (``CardDealt`` -> ``card_dealt``)."""
    return {cls: re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower()
            for cls in get_args(union)}

"""The event modules are generated from their declarations (controller/core/declared/) and are
up to date; every event, the hand's and the table's, is the same kind of record."""

from __future__ import annotations

from types import ModuleType

import pytest

from controller.core import events, record_gen, table_events
from controller.core.declared import events as declared_events
from controller.core.declared import table_events as declared_table_events
from controller.core.records import Record, field_hints

PAIRS = [(events, declared_events), (table_events, declared_table_events)]

def test_the_generated_modules_are_up_to_date() -> None:
    assert record_gen.stale() == [], "run: python -m controller.core.record_gen"

@pytest.mark.parametrize("generated, declared", PAIRS, ids=["hand", "table"])
def test_each_declaration_is_a_record_with_its_name_fields_defaults_and_doc(
        generated: ModuleType, declared: ModuleType) -> None:
    assert [cls.__name__ for cls in generated.KINDS] == [cls.__name__ for cls in declared.KINDS]
    assert list(generated.KINDS.values()) == list(declared.KINDS.values())
    for cls, spec in zip(generated.KINDS, declared.KINDS):
        assert issubclass(cls, Record) and not issubclass(cls, tuple)
        assert cls._fields == spec._fields
        hints = field_hints(cls)
        for name, hint in spec.__annotations__.items():
            if hasattr(hint, "__forward_arg__"):  # a class declaration: the same text
                assert cls._hints[name] == hint.__forward_arg__
            else:  # the functional form: the same type
                assert hints[name] == hint
        assert list(cls._hints) == list(spec._fields)
        assert cls(*spec._fields)._asdict() == spec(*spec._fields)._asdict()
        if spec._field_defaults:
            required = spec._fields[:len(spec._fields) - len(spec._field_defaults)]
            assert cls(*required)._asdict() == spec(*required)._asdict()
        if spec.__doc__.startswith(f"{spec.__name__}("):  # the NamedTuple's own, not declared
            assert not cls.__doc__
        else:
            assert cls.__doc__ == spec.__doc__

def test_both_forms_of_declaration_are_declared() -> None:
    assert table_events.ShoeCard._fields == declared_table_events.ShoeCard._fields
    assert "count" in table_events.RefusalsCounted._fields

def test_a_table_event_behaves_as_a_hand_event() -> None:
    opened = table_events.TableOpened("T1", "cali_lowball", "p1", "approved")
    assert opened == table_events.TableOpened("T1", "cali_lowball", "p1", "approved")
    assert opened != ("T1", "cali_lowball", "p1", "approved")
    with pytest.raises(AttributeError, match="can't set attribute"):
        opened.game = "three_card_lowball"

def test_a_declaration_holds_only_fields_and_a_docstring() -> None:
    source = ("from typing import NamedTuple\n\n"
              "class Odd(NamedTuple):\n    spot: int\n\n    def twice(self) -> int:\n"
              "        return 2 * self.spot\n")
    with pytest.raises(record_gen.DeclarationError, match=r"here\.py:3 Odd: line 6"):
        record_gen.generate(source, "here.py")

def test_a_declaration_becomes_a_record_class_and_the_rest_is_kept() -> None:
    source = ('from __future__ import annotations\n\nfrom typing import NamedTuple\n\n'
              'from controller.core.cards import Card\n\n\n'
              'class ChipsCounted(NamedTuple):\n    """Chips on a spot."""\n\n'
              '    spot: int\n    cards: tuple[Card, ...] = ()\n')
    generated = record_gen.generate(source, "new.py")
    assert generated.startswith(record_gen.header("new.py"))
    assert generated[len(record_gen.header("new.py")):] == """\
from __future__ import annotations

from typing import Any, final

from controller.core.records import Record
from controller.core.cards import Card


@final
class ChipsCounted(Record):
    __doc__ = \"\"\"Chips on a spot.\"\"\"

    __slots__ = ("spot", "cards")
    _fields = ("spot", "cards")
    _hints = {"spot": "int", "cards": "tuple[Card, ...]"}
    spot: Any
    cards: Any

    def __init__(self, spot: Any, cards: Any = ()) -> None:
        object.__setattr__(self, "spot", spot)
        object.__setattr__(self, "cards", cards)
"""

def test_the_functional_form_becomes_a_record_class_with_the_docstring_after_it() -> None:
    source = ('from typing import NamedTuple\n\n'
              'Counted = NamedTuple("Counted", [("spot", int), ("count", int)])\n'
              'Counted.__doc__ = (\n    """Chips counted on a spot.""")\n\n'
              'TOTAL = 1\n')
    generated = record_gen.generate(source, "new.py")[len(record_gen.header("new.py")):]
    assert generated == """\
from typing import Any, final

@final
class Counted(Record):
    __doc__ = \"\"\"Chips counted on a spot.\"\"\"

    __slots__ = ("spot", "count")
    _fields = ("spot", "count")
    _hints = {"spot": "int", "count": "int"}
    spot: Any
    count: Any

    def __init__(self, spot: Any, count: Any) -> None:
        object.__setattr__(self, "spot", spot)
        object.__setattr__(self, "count", count)

TOTAL = 1
"""

def test_a_functional_declaration_names_its_fields_as_pairs() -> None:
    source = 'from typing import NamedTuple\n\nOdd = NamedTuple("Odd", [("spot", int), "count"])\n'
    with pytest.raises(record_gen.DeclarationError, match=r"new\.py:3 Odd: line 3: a field is"):
        record_gen.generate(source, "new.py")

def test_a_record_replaces_fields_as_a_named_tuple_does() -> None:
    accepted = table_events.CommandAccepted("open", "{}", "dealer 1", "dealer")
    signed = accepted._replace(credential="own", request_id="r-1")
    assert type(signed) is table_events.CommandAccepted
    assert signed._asdict() == {**accepted._asdict(), "credential": "own", "request_id": "r-1"}
    assert accepted.credential == "none"  # the original is unchanged
    with pytest.raises(ValueError, match=r"unexpected field names: \['role_claimed'\]"):
        accepted._replace(role_claimed="supervisor")

"""The event modules are generated from their declarations (controller/core/declared/) and are
up to date; every event, the hand's and the table's, is the same kind of record."""

from __future__ import annotations

import pytest

from controller.core import events, record_gen, table_events
from controller.core.declared import events as declared_events
from controller.core.declared import table_events as declared_table_events
from controller.core.records import Record

PAIRS = [(events, declared_events), (table_events, declared_table_events)]

def test_the_generated_modules_are_up_to_date():
    assert record_gen.stale() == [], "run: python -m controller.core.record_gen"

@pytest.mark.parametrize("generated, declared", PAIRS, ids=["hand", "table"])
def test_each_declaration_is_a_record_with_its_name_fields_defaults_and_doc(generated, declared):
    assert [cls.__name__ for cls in generated.KINDS] == [cls.__name__ for cls in declared.KINDS]
    assert list(generated.KINDS.values()) == list(declared.KINDS.values())
    for cls, spec in zip(generated.KINDS, declared.KINDS):
        assert issubclass(cls, Record) and not issubclass(cls, tuple)
        assert cls._fields == spec._fields
        assert cls._hints == {name: getattr(hint, "__forward_arg__", hint)  # the same text
                              for name, hint in spec.__annotations__.items()}
        assert cls(*spec._fields)._asdict() == spec(*spec._fields)._asdict()
        if spec._field_defaults:
            required = spec._fields[:len(spec._fields) - len(spec._field_defaults)]
            assert cls(*required)._asdict() == spec(*required)._asdict()
        if spec.__doc__.startswith(f"{spec.__name__}("):  # the NamedTuple's own, not declared
            assert not cls.__doc__
        else:
            assert cls.__doc__ == spec.__doc__

def test_a_table_event_behaves_as_a_hand_event():
    opened = table_events.TableOpened("T1", "cali_lowball", "p1", "approved")
    assert opened == table_events.TableOpened("T1", "cali_lowball", "p1", "approved")
    assert opened != ("T1", "cali_lowball", "p1", "approved")
    with pytest.raises(AttributeError, match="can't set attribute"):
        opened.game = "three_card_lowball"  # type: ignore[misc]

def test_a_declaration_holds_only_fields_and_a_docstring():
    source = ("from typing import NamedTuple\n\n"
              "class Odd(NamedTuple):\n    spot: int\n\n    def twice(self) -> int:\n"
              "        return 2 * self.spot\n")
    with pytest.raises(record_gen.DeclarationError, match=r"here\.py:3 Odd: line 6"):
        record_gen.generate(source, "here.py")

def test_a_declaration_becomes_a_record_class_and_the_rest_is_kept():
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

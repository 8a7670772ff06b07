"""Every event, declared once: a compact class with annotated fields and a docstring (or, for
a field mypy refuses in a class, such as ``count``, the functional NamedTuple form).

These modules are the source of :mod:`controller.core.events` and
:mod:`controller.core.table_events`: ``python -m controller.core.record_gen`` generates them,
each declaration a record class (:class:`controller.core.records.Record`) which the compiled
build makes native, everything else copied as it is. Edit here, then regenerate;
tests/core/test_record_gen.py fails while a generated module is stale. Nothing imports these
modules at run time.
"""

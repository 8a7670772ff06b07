"""What the tests share: the one way to stand up a table, the config builders and the waits.

Test modules import from here, never from one another (``tests/tree/test_test_imports.py``).
"""

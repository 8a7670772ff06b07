"""Text read from a journal file another process may have written: as stored, never failing.

The daemon writes every message as a BLOB and every text as UTF-8; SQLite checks neither. What
another process stored instead (text that is not UTF-8, a message of another storage class, a
name with control characters) is read here as it is, so that the check that meets it finds the
record altered where it is, and a reason, a log line or a terminal shows it safely.
"""

from __future__ import annotations

import sqlite3

#: What reading a file another process may have written raises: SQLite's errors, and
#: ``UnicodeDecodeError`` when SQLite's own message quotes text of the file that is not UTF-8
#: (a schema entry's name), which Python's sqlite3 then cannot decode.
READ_ERRORS = (sqlite3.Error, UnicodeDecodeError)


def shown(text: str | bytes, most: int) -> str:
    """Text read from the file, as a reason, a log line or a terminal may carry it: at most
    ``most`` characters, ASCII, every other character (a control, a byte that is not UTF-8)
    escaped as Python writes it.

    >>> shown("Page 5: never used", 80), shown(b"t\\xff\\x1b[2J", 80), shown("x" * 9, 4)
    ('Page 5: never used', 't\\\\xff\\\\x1b[2J', 'xxxx...')
    """
    if isinstance(text, bytes):  # as text read as stored: a byte not UTF-8, a lone surrogate
        text = text.decode("utf-8", "surrogateescape")
    escaped = "".join(c if c.isascii() and c.isprintable() else
                      f"\\x{ord(c) - 0xDC00:02x}" if "\udc80" <= c <= "\udcff" else
                      ascii(c)[1:-1] for c in text[:most])
    return escaped + ("..." if len(text) > most else "")


def as_stored_text(stored: bytes) -> str:
    """Text as SQLite holds it, valid UTF-8 or not (each byte that is not: a lone surrogate,
    which no hash, seq or event type the daemon wrote contains)."""
    return stored.decode("utf-8", "surrogateescape")


def _stored_bytes(text: str) -> bytes:
    """The bytes SQLite holds for ``text`` read by :func:`as_stored_text` (bytes that are not
    UTF-8 come back as they are)."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no byte escaped: there is no other way to write it
        return text.encode("utf-8", "surrogatepass")


def as_stored(message: object) -> bytes:
    """A record's message as read from the file. The daemon writes every message as a BLOB;
    a message of another storage class (TEXT, which SQLite's ``||`` makes of any edit, a
    number, NULL) was put there by another process, and is read as bytes that begin with its
    type's name between NULs: never a message's JSON, never the bytes its hash was made of,
    so every check finds the record altered where it is, and none fails on a type.

    >>> as_stored(b'{"seq":1}'), as_stored('{"seq":1}')
    (b'{"seq":1}', b'\\x00str\\x00{"seq":1}')
    """
    if type(message) is bytes:
        return message
    text = _stored_bytes(message) if isinstance(message, str) else \
        repr(message).encode("ascii", "backslashreplace")
    return b"\0" + type(message).__name__.encode("ascii") + b"\0" + text

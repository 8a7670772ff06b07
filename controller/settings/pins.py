"""A supervisor's PIN: what she keys in on a touch screen instead of her 43-character credential.

A PIN is :data:`MIN_DIGITS` to :data:`MAX_DIGITS` digits. The table config keeps only its
scrypt hash (:func:`hash_pin`), one per supervisor under ``[security.supervisor_pins]``; the
daemon checks a PIN against the hash of the supervisor the command names (``by``), and locks
that supervisor's PIN after :data:`controller.daemon.pin_locks.FAILURES` wrong ones (her
credential still signs). A PIN is short, so what bounds a guesser is the lock-out, at the console
and at the table, not the hash: the hash (scrypt, 4 MiB a check) keeps a copied config from
giving up its PINs at once, yet a check stays short enough for the daemon's loop (one check
took 43 ms at the least, 62 ms in the median, of 15 on a loaded two-core machine; the daemon
checks at most FAILURES wrong ones per supervisor per lock-out).

The hash is written ``scrypt:N:R:P:SALT:HASH`` (N, R, P: scrypt's cost, block size and
parallelism, fixed at :data:`COST`; SALT 16 bytes and HASH 32 bytes, in hex), so a config
says how its hashes were made.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

MIN_DIGITS, MAX_DIGITS = 6, 12
#: scrypt's N, r and p: 2**12 * 8 * 128 bytes = 4 MiB of memory per check.
COST = (2**12, 8, 1)
_MAXMEM = 32 * 1024 * 1024
#: A PIN's hash as a config holds it.
PIN_HASH_PATTERN = (rf"^scrypt:{COST[0]}:{COST[1]}:{COST[2]}:[0-9a-f]{{32}}:[0-9a-f]{{64}}$")
_PIN = re.compile(rf"[0-9]{{{MIN_DIGITS},{MAX_DIGITS}}}")


def is_pin(text: object) -> bool:
    """Whether ``text`` has a PIN's form (a credential never has: it is 8 or more characters
    that are not all digits, as ``lowball-table credential`` makes them)."""
    return isinstance(text, str) and _PIN.fullmatch(text) is not None


def new_pin(digits: int = MIN_DIGITS) -> str:
    """A random PIN of ``digits`` digits."""
    if not MIN_DIGITS <= digits <= MAX_DIGITS:
        raise ValueError(f"a PIN is {MIN_DIGITS} to {MAX_DIGITS} digits")
    return "".join(secrets.choice("0123456789") for _ in range(digits))


def _scrypt(pin: str, salt: bytes) -> bytes:
    n, r, p = COST
    return hashlib.scrypt(pin.encode("ascii"), salt=salt, n=n, r=r, p=p, maxmem=_MAXMEM,
                          dklen=32)


def hash_pin(pin: str) -> str:
    """The hash a config keeps for ``pin`` (a new salt each time)."""
    if not is_pin(pin):
        raise ValueError(f"a PIN is {MIN_DIGITS} to {MAX_DIGITS} digits")
    salt = secrets.token_bytes(16)
    n, r, p = COST
    return f"scrypt:{n}:{r}:{p}:{salt.hex()}:{_scrypt(pin, salt).hex()}"


def pin_matches(pin: str, stored: str) -> bool:
    """Whether ``pin`` is the PIN ``stored`` (a hash of :data:`PIN_HASH_PATTERN`) was made
    from; compared in constant time."""
    if not is_pin(pin) or re.fullmatch(PIN_HASH_PATTERN, stored) is None:
        return False
    *_, salt, expected = stored.split(":")
    return hmac.compare_digest(_scrypt(pin, bytes.fromhex(salt)), bytes.fromhex(expected))

"""The one byte form of a JSON value: what the journal hashes and the stream publishes.

Sorted keys, no spaces, UTF-8 (text is written as it is, not ``\\u`` escaped), no NaN or
infinity. The same value always gives the same bytes, so a record's hash, a configuration's
fingerprint and a command's journaled arguments can each be recomputed from the value.
"""

from __future__ import annotations

import json
from typing import Any


def canonical_json(value: Any) -> bytes:
    """``value`` as canonical JSON bytes.

    >>> canonical_json({"player": "José", "amount": 1000})
    b'{"amount":1000,"player":"Jos\\xc3\\xa9"}'
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode()

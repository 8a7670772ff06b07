"""Who sent a request, as the transport knows it (never a field the client wrote)."""

from __future__ import annotations

import zmq

#: The client a request came from when it came from no socket (tests, the demo).
LOCAL_CLIENT = "local"


def client_of(frame: zmq.Frame) -> str:
    """The sender of a received frame: its CURVE public key when the socket uses CURVE (the
    authenticator sets it as ``User-Id``), else its network address, else ``local``."""
    for prop in ("User-Id", "Peer-Address"):
        try:
            value = frame.get(prop)
        except (zmq.ZMQError, UnicodeDecodeError):
            continue
        if value:
            return str(value)[:64]
    return LOCAL_CLIENT

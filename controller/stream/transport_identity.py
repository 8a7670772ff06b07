"""Who sent a request, as the transport knows it (never a field the client wrote)."""

from __future__ import annotations

import zmq

#: The client a request came from when it came from no socket (tests, the demo).
LOCAL_CLIENT = "local"


#: The frame properties that name a sender, first found first: a socket without CURVE has no
#: ``User-Id`` (asking for it raises, at a cost paid by every request).
_CURVE_PROPERTIES, _PLAIN_PROPERTIES = ("User-Id", "Peer-Address"), ("Peer-Address",)


def client_of(frame: zmq.Frame, curve: bool = True) -> str:
    """The sender of a received frame: its CURVE public key when the socket uses CURVE (the
    authenticator sets it as ``User-Id``; ``curve`` False: the socket has no CURVE), else
    its network address, else ``local``."""
    for prop in _CURVE_PROPERTIES if curve else _PLAIN_PROPERTIES:
        try:
            value = frame.get(prop)
        except (zmq.ZMQError, UnicodeDecodeError):
            continue
        if value:
            return str(value)[:64]
    return LOCAL_CLIENT

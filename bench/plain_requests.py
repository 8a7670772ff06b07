"""Commands as bare requests, for comparing this tree's daemon with an older one on the same
inputs.

This tree's one client (:class:`controller.stream.command_client.CommandClient`) gives every
command a ``request_id`` of its own, which the daemon parses, checks against the withdrawals
and remembers, and journals with the command: work the protocol added (a withdrawal names
the command it takes back), which a tree from before it neither knows nor does. A comparison
of the daemon's CPU per input sends both trees' daemons what the older bench sent: the JSON
request alone, on one REQ socket. This file is loaded by path (``runpy.run_path``) into
either tree's process, so it imports nothing of the tree it runs in.
"""

from __future__ import annotations

import json
from typing import Any

import zmq


def plain_ask(self: Any, request: dict[str, Any], timeout_s: float = 10.0,
              supervisor: bool = False) -> dict[str, Any]:
    """``DaemonProcess.ask`` as the older bench had it: the reply to ``request`` as sent."""
    from bench.power_loss import CREDENTIAL  # the measured tree's test credential

    socket = getattr(self, "_plain_req", None)
    if socket is None:
        socket = self._plain_req = self.context.socket(zmq.REQ)
        socket.setsockopt(zmq.LINGER, 0)
        socket.connect(self.endpoint)
    if supervisor:
        request = {**request, "credential": CREDENTIAL}
    socket.send(json.dumps(request).encode())
    if not socket.poll(int(timeout_s * 1000)):
        socket.close()  # a REQ socket waits for that reply forever: the next ask gets a new one
        self._plain_req = None
        raise _timeout(self.endpoint, str(request.get("command")), timeout_s)
    reply: dict[str, Any] = json.loads(socket.recv())
    return reply


def _timeout(endpoint: str, command: str, timeout_s: float) -> Exception:
    """What the tree's ``DaemonProcess`` waits out while its daemon starts: this tree's
    ``CommandTimeout``; an older tree's ``RuntimeError``."""
    try:
        from controller.stream.command_client import CommandTimeout
    except ImportError:
        return RuntimeError(f"no reply to {command!r} within {timeout_s} s")
    return CommandTimeout(endpoint, command, timeout_s)


def install(pipeline: Any) -> None:
    """Make ``pipeline.DaemonProcess`` (of whichever tree) send bare requests."""
    pipeline.DaemonProcess.ask = plain_ask

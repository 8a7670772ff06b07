"""The serial shoe through a network serial server speaking RFC 2217 (``rfc2217://``).

The server runs in the test: pyserial's :class:`serial.rfc2217.PortManager` speaks Telnet and
RFC 2217 to the driver, as in pyserial's ``examples/rfc2217_server.py``, and its serial side is
the simulated shoe's pty, as a terminal server's would be the shoe's cable.
"""

from __future__ import annotations

import selectors
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import serial
from serial import rfc2217

from controller.core.cards import parse_card
from drivers.base import FALLBACK_POLL_S, open_serial_port
from drivers.config import ShoeConfig
from drivers.shoe_events import CardRead, ShoeConnected
from drivers.shoe_serial import SerialShoe
from simulators.pty_transport import PtyTransport
from simulators.shoe import Lbs1ShoeModel

from tests.support.drivers import EventWaiter, poll_until
from tests.support.waits import DEADLINE_S

# pyserial 3.5's RFC 2217 client names its reader thread the old way; nothing to act on here.
pytestmark = pytest.mark.filterwarnings(
    r"ignore:set(Daemon|Name)\(\) is deprecated:DeprecationWarning")


class PtyLine(serial.Serial):  # type: ignore[misc]  # pyserial has no type hints
    """The server's serial side: a pty, which has no modem lines. RFC 2217 clients set DTR and
    RTS all the same (pyserial's does as it opens) and the server reports the lines it reads,
    so settings are accepted and ignored, and the lines read as a device attached and ready."""

    cts = dsr = cd = property(lambda self: True)
    ri = property(lambda self: False)

    def _update_dtr_state(self) -> None:
        pass

    def _update_rts_state(self) -> None:
        pass


class Rfc2217Server:
    """A network serial server on 127.0.0.1 for one client at a time, its serial side the
    device at ``device_path``. One thread waits on the listener, the client and the line."""

    def __init__(self, device_path: str) -> None:
        self._device_path = device_path
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"rfc2217://127.0.0.1:{self._listener.getsockname()[1]}"
        self._stop_r, self._stop_w = socket.socketpair()
        self._thread = threading.Thread(target=self._serve, name="sim-rfc2217", daemon=True)
        self._client: socket.socket | None = None
        self._line: PtyLine | None = None
        self._manager: rfc2217.PortManager | None = None
        self.errors: list[BaseException] = []

    def start(self) -> Rfc2217Server:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop_w.send(b"!")
        self._thread.join(DEADLINE_S)
        for end in (self._listener, self._stop_r, self._stop_w):
            end.close()
        assert not self._thread.is_alive(), "the RFC 2217 server did not stop"
        assert not self.errors, self.errors

    def write(self, data: bytes) -> None:
        """What the PortManager sends on its own: Telnet and RFC 2217 answers."""
        assert self._client is not None
        self._client.sendall(data)

    def _serve(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self._listener, selectors.EVENT_READ, self._accept)
            selector.register(self._stop_r, selectors.EVENT_READ, None)
            try:
                while True:
                    for key, _ in selector.select():
                        if key.data is None:
                            return
                        key.data(selector)
            except Exception as exc:  # reported by stop(), in the test's thread
                self.errors.append(exc)
            finally:
                self._hang_up(selector)

    def _accept(self, selector: selectors.BaseSelector) -> None:
        client, _ = self._listener.accept()
        self._hang_up(selector)
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._client = client
        self._line = PtyLine(self._device_path, timeout=0)
        self._manager = rfc2217.PortManager(self._line, self)
        selector.register(client, selectors.EVENT_READ, self._from_client)
        selector.register(self._line, selectors.EVENT_READ, self._from_line)

    def _from_client(self, selector: selectors.BaseSelector) -> None:
        assert self._client is not None and self._line is not None and self._manager
        data = self._client.recv(4096)
        if not data:  # the driver closed the port
            self._hang_up(selector)
            return
        self._line.write(b"".join(self._manager.filter(data)))

    def _from_line(self, selector: selectors.BaseSelector) -> None:
        assert self._client is not None and self._line is not None and self._manager
        data = self._line.read(4096)
        if data:
            self._client.sendall(b"".join(self._manager.escape(data)))

    def _hang_up(self, selector: selectors.BaseSelector) -> None:
        for end in (self._client, self._line):
            if end is not None:
                selector.unregister(end)
                end.close()
        self._client = self._line = self._manager = None


@pytest.fixture
def shoe_server() -> Iterator[tuple[Any, Rfc2217Server]]:
    """(the simulated shoe on a pty, an RFC 2217 server in front of it)."""
    with PtyTransport(Lbs1ShoeModel("As 7d Kc"), name="shoe") as sim:
        server = Rfc2217Server(sim.url).start()
        try:
            yield sim, server
        finally:
            server.stop()


def test_a_shoe_behind_an_rfc2217_server_deals_and_is_acknowledged(
        shoe_server: tuple[Any, Rfc2217Server]) -> None:
    sim, server = shoe_server
    with SerialShoe(ShoeConfig(port=server.url, reconnect_initial_s=0.05)) as shoe:
        waiter = EventWaiter(shoe)
        assert waiter.next(ShoeConnected).port == server.url
        sim.device.deal(2)
        cards = waiter.collect(2, CardRead)
        assert [str(c.card) for c in cards] == ["As", "7d"]
        poll_until(lambda: ("acked", 1) in sim.device.history)
        sim.device.deal()
        assert waiter.next(CardRead).card == parse_card("Kc")


def test_an_rfc2217_port_has_no_write_timeout_but_its_writes_are_bounded(
        shoe_server: tuple[Any, Rfc2217Server]) -> None:
    """pyserial's RFC 2217 client refuses a write timeout; what bounds a write instead is the
    timeout of its socket (drivers.base: _settle_rfc2217). A newer pyserial that drops it
    must be noticed here, not by a shoe thread stuck in a write."""
    sim, server = shoe_server
    port = open_serial_port(server.url, baudrate=115200)
    try:
        assert port.write_timeout is None
        assert port.timeout == FALLBACK_POLL_S
        bound = port._socket.gettimeout()
        assert bound is not None and 0 < bound <= 5, bound
    finally:
        port.close()

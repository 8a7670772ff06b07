"""A simulated device on TCP, for ``socket://127.0.0.1:PORT`` (pyserial's raw socket URL).

Listens on 127.0.0.1 only. One driver at a time: a new connection replaces the old one.
While "unplugged" new connections are accepted and closed at once, as a serial server with
nothing on its port would.
"""

from __future__ import annotations

import socket
from typing import Any

from simulators.transport import M, SerialTransport


class TcpTransport(SerialTransport[M]):
    def __init__(self, model: M, *, port: int = 0, name: str = "device",
                 **kwargs: Any) -> None:
        super().__init__(model, name=name, **kwargs)
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", port))
        self._listener.listen(1)
        self._listener.setblocking(False)
        self._client: socket.socket | None = None
        self.port = self._listener.getsockname()[1]

    @property
    def url(self) -> str:
        return f"socket://127.0.0.1:{self.port}"

    def _extra_fds(self) -> list[int]:
        return [self._listener.fileno()] if self._listener.fileno() >= 0 else []

    def _on_extra_readable(self, fd: int) -> None:
        try:
            client, _ = self._listener.accept()
        except OSError:
            return
        if not self._plugged:
            client.close()
            return
        self._drop_client()
        client.setblocking(False)
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._client = client

    def _stream_fd(self) -> int | None:
        return self._client.fileno() if self._client is not None else None

    def _read_stream(self) -> bytes:
        assert self._client is not None
        try:
            data = self._client.recv(4096)
        except BlockingIOError:
            return b""
        except OSError:
            data = b""
        if not data:
            self._drop_client()  # the driver hung up
        return data

    def _write_stream(self, data: bytes) -> int:
        assert self._client is not None
        try:
            return self._client.send(data)
        except BlockingIOError:
            return 0
        except OSError:
            self._drop_client()
            return len(data)

    def _drop_client(self) -> None:
        if self._client is not None:
            try:
                self._client.close()
            except OSError:
                pass
            self._client = None

    def _unplug(self) -> None:
        self._drop_client()

    def _replug(self) -> None:
        pass

    def _close_stream(self) -> None:
        with self.lock:
            self._drop_client()
            self._listener.close()

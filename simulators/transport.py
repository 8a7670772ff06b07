"""Running a simulated serial device for real: a model on a byte stream, in a thread.

A model is any object with ``receive(data, now)`` and ``poll(now) -> bytes``. The transport
feeds it what the driver writes, writes back what it says, and steps it with the monotonic
clock every few milliseconds (its retransmission and heartbeat timers need time to pass).
Tests and the ``sim`` command reach the model through :attr:`SerialTransport.device`, a proxy
that takes the transport's lock for every call, so a ``deal()`` from the test thread never
races the transport thread.

Subclasses supply the stream: :mod:`simulators.pty_transport` (a pseudo-terminal whose slave
path the driver opens as a real tty) and :mod:`simulators.tcp_transport` (``socket://``).
"""

from __future__ import annotations

import os
import select
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Generic, Protocol, Self, TypeVar


class ByteModel(Protocol):
    def receive(self, data: bytes, now: float) -> None: ...

    def poll(self, now: float) -> bytes: ...


#: The model a transport serves (its :attr:`SerialTransport.model`).
M = TypeVar("M", bound=ByteModel)


class LockedModel:
    """Every method call on the model runs under ``lock`` and then wakes the transport."""

    def __init__(self, model: Any, lock: threading.RLock, wake: Callable[[], None]) -> None:
        object.__setattr__(self, "_model", model)
        object.__setattr__(self, "_lock", lock)
        object.__setattr__(self, "_wake", wake)

    def __getattr__(self, name: str) -> Any:
        with self._lock:
            value = getattr(self._model, name)
        if not callable(value):
            return value

        def locked(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                result = value(*args, **kwargs)
            self._wake()
            return result

        return locked


class SerialTransport(ABC, Generic[M]):
    """Base of the pty and TCP transports; see the module docstring."""

    #: Longest the loop sleeps between model steps (the models' timers are 200 ms and up).
    TICK_S = 0.01

    def __init__(self, model: M, *, name: str = "device",
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.model = model
        self.name = name
        self.clock = clock
        self.lock = threading.RLock()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self.device: Any = LockedModel(model, self.lock, self.wake)
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._outbox = bytearray()
        self._plugged = True
        #: Called with (direction, data) for every chunk: "rx" from the driver, "tx" to it.
        self.tap: Callable[[str, bytes], None] | None = None

    @property
    @abstractmethod
    def url(self) -> str:
        """What to give the driver as its port."""

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> Self:
        self._thread = threading.Thread(target=self._loop, name=f"sim-{self.name}",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self.wake()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(5)
        self._close_stream()
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def wake(self) -> None:
        try:
            os.write(self._wake_w, b"!")
        except OSError:
            pass  # pipe full (already awake) or closed (stopping)

    # -- cable ----------------------------------------------------------------------------

    def disconnect(self) -> None:
        """Pull the cable: the driver's next read or write fails."""
        with self.lock:
            self._plugged = False
            self._outbox.clear()
            self._unplug()
        self.wake()

    def reconnect(self) -> None:
        """Plug the cable back in at the same port URL."""
        with self.lock:
            self._plugged = True
            self._replug()
        self.wake()

    # -- the loop -----------------------------------------------------------------------

    def _loop(self) -> None:
        while not self._stopping.is_set():
            with self.lock:
                fd = self._stream_fd() if self._plugged else None
                watch = [self._wake_r, *self._extra_fds()]
                writable = [fd] if fd is not None and self._outbox else []
                if fd is not None:
                    watch.append(fd)
            try:
                readable, _, _ = select.select(watch, writable, [], self.TICK_S)
            except (OSError, ValueError):
                continue  # a descriptor was closed under us by disconnect(); look again
            if self._wake_r in readable:
                try:
                    os.read(self._wake_r, 4096)
                except OSError:
                    pass
            with self.lock:
                for extra in readable:
                    if extra in self._extra_fds():
                        self._on_extra_readable(extra)
                now = self.clock()
                if fd is not None and fd in readable and fd == self._stream_fd():
                    data = self._read_stream()
                    if data:
                        if self.tap:
                            self.tap("rx", data)
                        self.model.receive(data, now)
                said = self.model.poll(now)
                if said and self._plugged and self._stream_fd() is not None:
                    self._outbox += said
                    if self.tap:
                        self.tap("tx", said)
                if self._outbox and self._stream_fd() is not None:
                    sent = self._write_stream(bytes(self._outbox))
                    del self._outbox[:sent]

    # -- the stream a subclass supplies ----------------------------------------------------

    @abstractmethod
    def _stream_fd(self) -> int | None:
        """The descriptor bytes flow on, or None when no driver is connected."""

    @abstractmethod
    def _read_stream(self) -> bytes:
        """Read what is there; b"" if nothing (a closed peer is handled here)."""

    @abstractmethod
    def _write_stream(self, data: bytes) -> int:
        """Write without blocking; return how many bytes went."""

    def _extra_fds(self) -> list[int]:
        return []

    def _on_extra_readable(self, fd: int) -> None:
        pass

    @abstractmethod
    def _unplug(self) -> None: ...

    @abstractmethod
    def _replug(self) -> None: ...

    @abstractmethod
    def _close_stream(self) -> None: ...

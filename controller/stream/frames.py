"""Reading a ZeroMQ message from outside with a bound on its frames, not only on each frame.

``MAXMSGSIZE`` bounds each frame; nothing in ZeroMQ bounds how many frames a message has, and
``recv_multipart`` makes a Python object of every one (a message of 1,000,000 empty frames,
2 MB on the wire, took the daemon from 54 MB to 328 MB and held its loop 9 s: ``python -m
bench.many_frames``). ZeroMQ delivers a message whole, so its frames are all in the socket's
memory (64 bytes each, in libzmq) before the first can be read: that part only the peers
allowed to connect bound (CURVE's allow-list off the machine). What this module bounds is the
rest: a message is read frame by frame, at most ``max_frames`` kept; one with more is read to
its end and dropped, a bounded number of frames a call (:data:`DRAIN_FRAMES`), so draining it
holds the caller's loop for one turn's budget at most, never for the whole message.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import zmq

#: Send flags as plain ints (never blocking; more frames follow, or the last one).
_SEND_MORE, _SEND_LAST = int(zmq.NOBLOCK | zmq.SNDMORE), int(zmq.NOBLOCK)

#: Frames of a message too long to keep that one call reads and drops (about 10 to 50 ms on
#: the table PC); the rest in the next calls.
DRAIN_FRAMES = 10_000


def send_whole(socket: zmq.Socket[bytes], frames: list[bytes]) -> None:
    """Send ``frames`` as one message, never blocking; raises what ``send`` raises
    (``zmq.Again`` when the message cannot be queued now).

    Frame by frame with plain-int flags: ``send_multipart`` combines enum flags and checks
    every frame's buffer on each call, twice the cost of these sends (2.3 against 5 µs). A
    multipart message is all or nothing: if its first frame is queued, so is the rest (as with
    ``send_multipart``, which sends frame by frame too). Every frame is bytes here, so
    ``send_multipart``'s up-front buffer check is the one thing skipped."""
    for frame in frames[:-1]:
        socket.send(frame, _SEND_MORE)
    socket.send(frames[-1], _SEND_LAST)


@dataclass
class TooManyFrames:
    """A message with more frames than the protocol has: its first ``kept`` frames (to answer
    it on its route) and how many it had in all."""

    kept: list[zmq.Frame]
    frames: int


@dataclass
class FrameReader:
    """Reads whole messages of at most ``max_frames`` frames off ``socket``; see the module."""

    socket: zmq.Socket[bytes]
    max_frames: int
    #: frames a call reads and drops of a message too long to keep
    drain_frames: int = DRAIN_FRAMES
    #: the message being dropped across calls, if any
    _dropping: TooManyFrames | None = field(default=None, init=False)
    #: messages dropped for too many frames since the start
    dropped: int = field(default=0, init=False)

    @property
    def dropping(self) -> bool:
        """Whether a message too long to keep is being read and dropped (its end not yet read)."""
        return self._dropping is not None

    def receive(self) -> list[zmq.Frame] | TooManyFrames | None:
        """The next whole message; :class:`TooManyFrames` once a message too long has been
        read to its end; None if there is none (or the one being dropped has not ended yet:
        call again, it goes on where it stopped). Never blocks."""
        socket = self.socket
        if self._dropping is None:
            try:
                first = socket.recv(zmq.NOBLOCK, copy=False)
            except zmq.Again:
                return None
            frames = [first]
            while frames[-1].more:
                if len(frames) == self.max_frames:
                    self._dropping = TooManyFrames(frames, len(frames))
                    break
                frames.append(socket.recv(zmq.NOBLOCK, copy=False))
            else:
                return frames
        dropping = self._dropping
        for _ in range(self.drain_frames):
            # the rest of a message is there already: ZeroMQ delivers a message whole
            socket.recv(zmq.NOBLOCK)
            dropping.frames += 1
            if not socket.get(zmq.RCVMORE):
                self._dropping = None
                self.dropped += 1
                return dropping
        return None

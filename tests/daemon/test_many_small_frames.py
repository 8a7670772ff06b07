"""A message of very many small frames: each is under the frame-size cap, and reading them all
into one list took the daemon from 54 MB to 328 MB and held its loop 9 s for 1,000,000 of
them (``python -m bench.many_frames``). Now a message of more frames than the protocol has is
read to its end a bounded number of frames a turn, dropped, answered and journaled, and the
next request is served as usual."""

from __future__ import annotations

import json
from pathlib import Path

import zmq

from controller.daemon.command_channel import MAX_COMMAND_FRAMES
from controller.stream.frames import DRAIN_FRAMES

from tests.support.rig import Rig
from tests.support.waits import DEADLINE_S, wait_for

#: more than a turn's draining: the message is dropped over several turns
FRAMES = 3 * DRAIN_FRAMES


def _send_many(socket: zmq.Socket[bytes], request: bytes) -> list[bytes]:
    for _ in range(FRAMES):
        socket.send(b"", zmq.SNDMORE)
    socket.send(request)
    assert socket.poll(int(DEADLINE_S * 1000)), "no answer"
    return socket.recv_multipart()


def test_a_message_of_many_frames_is_refused_on_the_command_and_replay_sockets(
        tmp_path: Path) -> None:
    rig = Rig(tmp_path, "cali_lowball")
    hostile = rig.context.socket(zmq.DEALER)
    hostile.setsockopt(zmq.LINGER, 0)
    hostile.setsockopt(zmq.SNDHWM, 0)
    try:
        hostile.connect(rig.stream.commands)
        reply = _send_many(hostile, b'{"command": "open"}')
        assert len(reply) == 2 and reply[0] == b""      # to the route as a REQ's
        answer = json.loads(reply[1])
        assert not answer["ok"]
        assert f"at most {MAX_COMMAND_FRAMES} frames" in answer["error"]
        assert f"had {FRAMES + 2}" in answer["error"]
        assert wait_for(lambda: [e.data.reason for e in rig.events("command_refused")] == [
            answer["error"]], "the refusal journaled and published")
        assert rig.events("command_accepted") == []
        assert rig.ask({"command": "open"})["ok"]       # the next request: served as usual
        # a request of as many frames as the protocol has is still read
        hostile.send_multipart([b"x" * 8] * (MAX_COMMAND_FRAMES - 3) + [b"", b'{"command": '
                                                                       b'"status"}'])
        assert hostile.poll(int(DEADLINE_S * 1000))
        assert json.loads(hostile.recv_multipart()[-1])["ok"]
        hostile.close(0)

        hostile = rig.context.socket(zmq.DEALER)
        hostile.setsockopt(zmq.LINGER, 0)
        hostile.setsockopt(zmq.SNDHWM, 0)
        hostile.connect(rig.stream.replay)
        reply = _send_many(hostile, b'{"request": "snapshot"}')
        assert len(reply) == 2 and reply[0] == b""
        assert f"not {FRAMES} frames" in json.loads(reply[1])["reason"]
        assert rig.ask({"command": "status"})["ok"]
    finally:
        hostile.close(0)
        rig.close()

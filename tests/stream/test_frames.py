"""The frame-bounded reader over a real socket pair: a message of more frames than allowed is
read to its end over several calls and dropped; the messages around it arrive whole."""

from __future__ import annotations

import zmq

from controller.stream.frames import FrameReader, TooManyFrames


def test_a_message_with_too_many_frames_is_dropped_over_several_calls() -> None:
    context = zmq.Context()
    try:
        pub, sub = context.socket(zmq.PAIR), context.socket(zmq.PAIR)
        pub.bind("inproc://frames")
        sub.connect("inproc://frames")
        pub.send_multipart([b"a", b"b"])
        pub.send_multipart([b"x"] * 25)
        pub.send_multipart([b"c", b"d"])
        reader = FrameReader(sub, max_frames=2, drain_frames=10)
        assert sub.poll(5000)
        first = reader.receive()
        assert isinstance(first, list) and [f.bytes for f in first] == [b"a", b"b"]
        assert reader.receive() is None and reader.dropping   # 2 kept, 10 dropped
        assert reader.receive() is None and reader.dropping   # 10 more
        dropped = reader.receive()                            # the last 3
        assert isinstance(dropped, TooManyFrames) and dropped.frames == 25
        assert [f.bytes for f in dropped.kept] == [b"x", b"x"]
        last = reader.receive()
        assert isinstance(last, list) and [f.bytes for f in last] == [b"c", b"d"]
        assert reader.receive() is None and not reader.dropping and reader.dropped == 1
    finally:
        context.destroy(linger=0)

"""A linked table's subscription to the floor's pool channel (``[progressive.link]``).

The daemon's thread owns the SUB socket (it sits in the loop's poller). Each message is read as
hostile input (:func:`controller.stream.pool_channel.parse`); what it changes reaches the table
as a journaled input (``pool_link``, ``pool_meter``, ``jackpot_claimed``), so a replay after a
power cut rebuilds the same state. This module only receives, parses and keeps time: the
daemon (:mod:`controller.daemon.loop`) decides what to journal.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import structlog
import zmq
import zmq.auth

from controller.core.table_settings import Progressive
from controller.errors import StartupError
from controller.settings.table_config import LoadedConfig
from controller.stream import pool_channel
from controller.stream.frames import FrameReader, TooManyFrames
from controller.stream.pool_channel import ClaimedMessage, MeterMessage, PoolChannelError

log = structlog.get_logger("lowball.pool_link")
#: The most pool messages read in one turn of the loop (the floor sends a few a second).
MAX_MESSAGES_PER_TURN = 200
#: A refused message is logged at most this often (a flood of bad ones writes no flood).
REFUSAL_LOG_S = 10.0


class PoolLink:
    def __init__(self, context: zmq.SyncContext, loaded: LoadedConfig,
                 clock: Callable[[], float]):
        config = loaded.config
        link = config.progressive.link
        assert link is not None
        self.pool_id = link.pool
        self.stale_s = link.stale_after_ms / 1000
        self.clock = clock
        #: when a valid message last came (the start counts as one: the link has its whole
        #: stale_after_ms to be heard from)
        self.heard = clock()
        self._refusal_logged = -REFUSAL_LOG_S
        #: the last claim for this table's jackpot that did not add up (the floor sends it
        #: again every second: journaled and logged once)
        self.bad_claim: ClaimedMessage | None = None
        self.refused = 0
        self.socket = context.socket(zmq.SUB)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.setsockopt(zmq.MAXMSGSIZE, pool_channel.MAX_MESSAGE_BYTES)
        self.socket.setsockopt(zmq.RCVHWM, 1000)
        #: a message of more frames than the channel's two is read to its end and dropped
        self.reader = FrameReader(self.socket, 2)
        if link.server_key_file is not None:
            base = Path(loaded.path).parent
            own = config.security.server_secret_key_file
            assert own is not None  # the config requires it
            try:
                public, secret = zmq.auth.load_certificate(base / own)
                server, _ = zmq.auth.load_certificate(base / link.server_key_file)
            except (OSError, ValueError) as error:
                raise StartupError(f"progressive.link: cannot read the CURVE keys: {error}") \
                    from None
            if secret is None:
                raise StartupError(f"security.server_secret_key_file: {base / own} has no "
                                   "secret key")
            self.socket.curve_serverkey = server
            self.socket.curve_publickey, self.socket.curve_secretkey = public, secret
        self.socket.setsockopt(zmq.SUBSCRIBE, pool_channel.topic(self.pool_id))
        self.socket.connect(link.endpoint)

    def receive(self) -> list[MeterMessage | ClaimedMessage]:
        """The messages waiting (at most a turn's worth), parsed; a bad one is dropped and
        logged (rate-limited), and does not count as hearing from the floor."""
        messages: list[MeterMessage | ClaimedMessage] = []
        for _ in range(MAX_MESSAGES_PER_TURN):
            frames = self.reader.receive()
            if frames is None:  # none waits, or one too long is being dropped: next turn
                break
            try:
                if isinstance(frames, TooManyFrames):
                    raise PoolChannelError(f"a pool message is 2 frames, not {frames.frames}")
                messages.append(pool_channel.parse(self.pool_id,
                                                   [frame.bytes for frame in frames]))
            except PoolChannelError as error:
                self.refused += 1
                now = self.clock()
                if now - self._refusal_logged >= REFUSAL_LOG_S:
                    self._refusal_logged = now
                    log.error("pool channel message refused", pool=self.pool_id,
                              problem=str(error), refused=self.refused)
        return messages

    def stale(self) -> bool:
        return self.clock() - self.heard > self.stale_s

    def stale_in(self) -> float:
        """Seconds until the link goes stale without a message (0 if it is)."""
        return max(0.0, self.heard + self.stale_s - self.clock())

    def close(self) -> None:
        self.socket.close(0)


def settings_problems(message: MeterMessage, progressive: Progressive) -> list[str]:
    """Where the pool's progressive differs from the table's (a table paying from a pool
    whose contribution, seed or awards are not its own would pay by other rules)."""
    settings = message.settings
    awards = progressive.awards
    own = {"wager": progressive.wager, "seed": progressive.seed,
           "contribution": progressive.contribution,
           "awards": {"pat-4-2-A-one-color": awards.pat_one_color,
                      "pat-4-2-A-two-color": awards.pat_two_color,
                      "4-high": awards.four_high, "5-high": awards.five_high}}
    theirs = {"wager": settings.wager, "seed": settings.seed,
              "contribution": settings.contribution, "awards": dict(settings.awards)}
    return [f"progressive.{key}: the table's {own[key]} is not the pool's {theirs[key]}"
            for key in own if own[key] != theirs[key]]

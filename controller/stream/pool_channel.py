"""The linked pool's channel: what the floor publishes about each pool, and how a table reads it.

The floor service publishes on one PUB socket (CURVE with its key pair, as the CMS family), per
pool, two topics:

- ``pool.<pool_id>.meter``: ``{pool_id, meter, entry, state, hits, settings}`` right after each
  commit that moved the pool and once a second otherwise (the heartbeat): ``entry`` is the last
  ledger row, ``state`` ``open`` or ``locked`` (hits await verification), ``hits`` those hits in
  lock order, ``settings`` the pool's progressive (a table whose own differs takes no
  progressive wager);
- ``pool.<pool_id>.claimed``: ``{pool_id, table_id, hand_id, lock_order, paid, share}`` for each
  hit awaiting verification, sent with every meter message (a table that was away gets it
  within a second; it journals it once).

A message is two frames, the topic and canonical JSON. A table reads each as hostile input:
every field bounded, unknown fields refused, the pool id the one it subscribed to.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from controller.core.canonical_json import canonical_json
from controller.errors import LowballError
from controller.settings.validation import MAX_CENTS, problems_of

#: The largest pool-channel message a table takes (a meter with a few hundred hits is tens of
#: kilobytes).
MAX_MESSAGE_BYTES = 256 * 1024
#: How often the floor publishes every pool when nothing moves it.
HEARTBEAT_S = 1.0

Id = Annotated[str, Field(min_length=1, max_length=32, pattern=r"^[A-Za-z0-9_-]+$")]
HandId = Annotated[str, Field(min_length=1, max_length=64)]
Cents = Annotated[int, Field(strict=True, ge=0, le=MAX_CENTS)]
Order = Annotated[int, Field(strict=True, ge=1, le=1_000_000)]


class PoolChannelError(LowballError, ValueError):
    """A pool-channel message a table will not read; the message names what was wrong."""


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class Hit(_Message):
    table_id: Id
    hand_id: HandId
    lock_order: Order
    paid: Cents


class PoolSettings(_Message):
    """The pool's progressive, in the table config's terms (the rate as text, ``"20%"``)."""

    wager: Cents
    seed: Cents
    contribution: Cents
    awards: dict[Annotated[str, Field(max_length=32)], Cents] = Field(max_length=8)


class MeterMessage(_Message):
    pool_id: Id
    meter: Cents
    entry: Annotated[int, Field(strict=True, ge=0, le=2**63 - 1)]
    state: Literal["open", "locked"]
    hits: tuple[Hit, ...] = Field(max_length=500)
    settings: PoolSettings


class ClaimedMessage(_Message):
    pool_id: Id
    table_id: Id
    hand_id: HandId
    lock_order: Order
    paid: Cents
    share: Cents


def topic(pool_id: str, kind: str = "") -> bytes:
    """``pool.<pool_id>.<kind>``; without ``kind`` the prefix a table subscribes to."""
    return f"pool.{pool_id}.{kind}".encode()


def frames(message: MeterMessage | ClaimedMessage) -> list[bytes]:
    kind = "meter" if isinstance(message, MeterMessage) else "claimed"
    return [topic(message.pool_id, kind), canonical_json(message.model_dump(mode="json"))]


def parse(pool_id: str, parts: list[bytes]) -> MeterMessage | ClaimedMessage:
    """One received message of pool ``pool_id``; :class:`PoolChannelError` says what is wrong."""
    if len(parts) != 2:
        raise PoolChannelError(f"a pool message is 2 frames, not {len(parts)}")
    head, body = parts
    if len(body) > MAX_MESSAGE_BYTES:
        raise PoolChannelError(f"message of {len(body)} bytes (at most {MAX_MESSAGE_BYTES})")
    model: type[MeterMessage] | type[ClaimedMessage]
    if head == topic(pool_id, "meter"):
        model = MeterMessage
    elif head == topic(pool_id, "claimed"):
        model = ClaimedMessage
    else:
        raise PoolChannelError(f"topic {head[:64]!r} is not one of pool {pool_id}'s")
    try:
        message = model.model_validate_json(body)
    except ValueError as error:
        problems = problems_of(error) if isinstance(error, ValidationError) else [str(error)]
        raise PoolChannelError("; ".join(problems)[:500]) from None
    if message.pool_id != pool_id:
        raise PoolChannelError(f"pool_id: {message.pool_id!r} under pool {pool_id}'s topic")
    return message

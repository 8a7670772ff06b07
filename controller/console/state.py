"""What one console holds while it serves (``app.state.console``): its link to the table, the
sessions, the open screens, and the commands in flight. The endpoints
(:mod:`controller.console.endpoints`) are module-level functions that read it from the
request's app, so each is tested on its own with a :class:`Console` of its own.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from starlette.websockets import WebSocket

from controller.console.link import TableLink
from controller.console.messages import CommandMessage, Deduplicator, request_of
from controller.console.places import Rank
from controller.console.screens import Screens
from controller.console.sessions import Session, Sessions

#: How long a screen waits for the answer to one command.
ANSWER_TIMEOUT_S = 10.0


class Console:
    """One console's state. ``by``: how it names itself in the journal for the dealer's
    commands; ``signs_in``: every screen needs a sign-in; ``accounts``: the dealers' and the
    pit's, name -> :class:`controller.console.config.Account` (supervisors sign in with the
    table's credentials); ``secure_cookie``: the session cookie only over TLS."""

    def __init__(self, link: TableLink, by: str, sessions: Sessions, *,
                 secure_cookie: bool = False, signs_in: bool = False,
                 accounts: Mapping[str, Any] | None = None) -> None:
        self.link, self.by, self.sessions = link, by, sessions
        self.secure_cookie, self.signs_in = secure_cookie, signs_in
        self.accounts: Mapping[str, Any] = accounts or {}
        self.screens = Screens(self.who)
        self.seen = Deduplicator()
        #: each remembered id's command as sent (the same id with another command is refused)
        self.given_as = Deduplicator()
        self.pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        #: One sign-in is checked at a time: the lock-out counts each failure before the next
        #: attempt is looked at, so attempts fired at once get no more guesses than one by
        #: one. Made in the event loop that serves (:meth:`checking`).
        self._checking: asyncio.Lock | None = None
        #: the hand the last view showed (a new one ends every supervisor's authority)
        self._shown_hand: str | None = None

    @property
    def checking(self) -> asyncio.Lock:
        if self._checking is None:
            self._checking = asyncio.Lock()
        return self._checking

    def who(self, token: str | None) -> tuple[Rank, str | None]:
        """A screen's rank among the console's screens, and the name signed in there."""
        session = self.sessions.get(token)
        if session is None:
            return Rank.UNSIGNED, None
        return (Rank.SUPERVISOR if session.role == "supervisor" else Rank.ACCOUNT), session.name

    def signed_in_as(self, token: str | None, *roles: str, always: bool = False) -> bool:
        """Whether the screen may open: signed in as one of ``roles``, or (a dealer's screen
        on a console that asks no sign-in) anyone. ``always``: a sign-in is needed whatever
        the console (the pit's screen shows the last hands whole)."""
        session = self.sessions.get(token)
        return (not self.signs_in and not always) or \
            (session is not None and session.role in roles)

    def show(self, view: dict[str, Any]) -> None:
        """In the event loop: a new view for the screens. A hand that started ends every
        supervisor's authority: none outlives the hand it was given for."""
        hand = view.get("hand_id")
        if hand is not None and hand != self._shown_hand:
            self.sessions.end_authority(f"hand {hand} started")
        self._shown_hand = hand
        self.screens.show(view)

    async def send_command(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send one request to the table; its reply (:class:`asyncio.TimeoutError` after
        :data:`ANSWER_TIMEOUT_S`)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[dict[str, Any]] = loop.create_future()

        def answer(reply: dict[str, Any]) -> None:  # from the link's thread
            loop.call_soon_threadsafe(settle, reply)

        def settle(reply: dict[str, Any]) -> None:  # in the loop, once the answer is in
            if not future.done():
                future.set_result(reply)

        self.link.send(request, answer)
        return await asyncio.wait_for(future, ANSWER_TIMEOUT_S)

    async def command(self, message: CommandMessage, session: Session | None = None,
                      asked_from: str = "") -> dict[str, Any]:
        """Send a screen's command once, whatever the browser repeats: ``session``, the
        dealer's account or the supervisor whose authority signs it (None: the console's own
        name gives it)."""
        if message.command.command == "lock":
            # the lock starts a hand: no supervisor's authority outlives the hand it was for,
            # not even until the new hand reaches the screens
            self.sessions.end_authority("a hand was locked")
        request = request_of(message, self.by) if session is None else \
            request_of(message, session.name, session.credential, asked_from)
        given = f"{request['by']} {message.command.model_dump_json()}"
        first = self.given_as.get(message.id)
        if first is not None and first != given:
            return {"ok": False, "error": f"id {message.id} was given to another command: "
                                          f"nothing was sent"}
        known = self.seen.get(message.id)
        if known is not None:
            return {**known, "repeated": True}
        if message.id in self.pending:
            return {**await asyncio.shield(self.pending[message.id]), "repeated": True}
        future = asyncio.ensure_future(self.send_command(request))
        self.pending[message.id] = future
        self.given_as.remember(message.id, given)
        try:
            reply = await asyncio.shield(future)
        except asyncio.TimeoutError:
            reply = {"ok": False, "error": "the table did not answer in time: look at the "
                                           "screen before trying again"}
        finally:
            self.pending.pop(message.id, None)
        answer = {"ok": bool(reply.get("ok")), "error": reply.get("error")}
        self.seen.remember(message.id, answer)
        return answer

    def role_message(self, session: Session | None) -> str:
        """What a screen is told of its session (and told again when it changes)."""
        if session is None:
            return json.dumps({"type": "session", "role": "dealer"})
        return json.dumps({"type": "session", "role": session.role, "name": session.name,
                           "seconds": self.sessions.seconds_left(session),
                           "ended": session.ended})

    def asked_from(self, screen: str, websocket: WebSocket, session: Session) -> str:
        """The screen a supervisor's command came from, as the table journals it."""
        address = websocket.client.host if websocket.client else "?"
        dealer = f"dealer {session.dealer} signed in" if session.dealer \
            else "no dealer signed in"
        return f"{screen} at {address} on {self.by} ({dealer})"[:128]

"""The console's web side: Starlette over uvicorn (plain HTML, CSS and JavaScript modules
served from :mod:`controller.console`'s ``static`` directory; nothing from the network).

``/`` is the dealer's screen; ``/ws`` its WebSocket: the console pushes the latest view, and
takes the dealer's commands (:mod:`controller.console.messages`). A slow browser only ever
misses views in between (each screen keeps only the newest one to send); a browser that
sends too fast is told so and its excess is dropped before it reaches the table.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from pathlib import Path
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import urlsplit

import structlog
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from controller.console.config import is_loopback
from controller.console.link import TableLink
from controller.console.messages import (
    SUPERVISOR_NAMES,
    BadMessage,
    Deduplicator,
    parse_message,
    parse_pit_message,
    parse_sign_in,
    request_of,
)
from controller.console.places import Places, Rank
from controller.console.sessions import COOKIE, Sessions

log = structlog.get_logger("lowball.console")
STATIC = Path(__file__).with_name("static")
#: A screen may send this many commands in a burst, then one per 1/RATE s.
BURST, RATE = 10, 5.0
#: How long a screen waits for the answer to one command.
ANSWER_TIMEOUT_S = 10.0
HEADERS = {
    "content-security-policy": "default-src 'self'; connect-src 'self'; img-src 'self' data:; "
                               "frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = list(message["headers"]) + [
                    (key.encode(), value.encode()) for key, value in HEADERS.items()]
            await send(message)

        await self.app(scope, receive, with_headers)


class LoopbackNames:
    """A console nobody signs in to listens on loopback; it answers only a request that names
    it by a loopback name. A page of another site whose name the attacker's DNS points at
    127.0.0.1 (DNS rebinding) is the same origin as far as the browser knows, so the Origin
    check lets it through; its Host header still names the attacker's site."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        #: one log line a second at most, the next counting those not written
        self.logged, self.not_logged = Bucket(burst=1, rate=1.0), 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or loopback_name(scope):
            await self.app(scope, receive, send)
            return
        if self.logged.take():
            log.warning("request for another host name refused", path=scope.get("path"),
                        not_logged=self.not_logged)
            self.not_logged = 0
        else:
            self.not_logged += 1
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        await Response("this console answers to a loopback name only (127.0.0.1, "
                       "localhost)", status_code=400, media_type="text/plain")(
            scope, receive, send)


def loopback_name(scope: Scope) -> bool:
    host = next((value.decode("latin-1") for key, value in scope.get("headers", ())
                 if key == b"host"), None)
    if host is None:
        return True  # HTTP/1.0 without a name: no browser page sends that
    name = urlsplit(f"//{host}").hostname or ""
    return is_loopback(name)


#: What only the pit's screen shows (the last hands and who played them, the alarms, the
#: journal's verification): the dealer's screen is sent the view without them.
PIT_ONLY = ("alarms", "recall", "journal")
#: The text put in a screen's box when it must give way to a newer screen
#: (:mod:`controller.console.places`): never a view (a view is a JSON object).
GIVE_WAY = "give way"
#: Why a screen that gave way is closed (the page opens again by itself, and takes a place
#: from the oldest screen below it, if any).
GAVE_WAY = "a newer screen took this place: the console's screens are full"
#: How often an open screen's sign-in is looked at while no view comes: one whose sign-in
#: has ended is closed within this.
SIGN_IN_CHECK_S = 2.0


class Screens:
    """Every open screen, each with the newest view still to send (the pit's, or the
    dealer's)."""

    def __init__(self, who: Callable[[str | None], tuple[Rank, str | None]]) -> None:
        self.view: dict[str, Any] | None = None
        self._latest: dict[int, tuple[asyncio.Queue[str], bool]] = {}
        self.places: Places[int] = Places(who)
        #: the text last shown to each kind of screen (pit or not)
        self._shown: dict[bool, str] = {}

    @staticmethod
    def _texts(view: dict[str, Any]) -> dict[bool, str]:
        return {True: json.dumps(view),
                False: json.dumps({key: value for key, value in view.items()
                                   if key not in PIT_ONLY})}

    def show(self, view: dict[str, Any]) -> None:
        """From the event loop: the newest view for every screen whose view changed (a
        dealer's screen is not redrawn, under the dealer's finger, because the pit's part
        changed: the journal's verification moves on at every heartbeat)."""
        self.view = view
        texts = self._texts(view)
        unchanged = {pit for pit, text in texts.items() if self._shown.get(pit) == text}
        self._shown = texts
        for box, pit in self._latest.values():
            if pit in unchanged:
                continue
            while not box.empty():
                box.get_nowait()
            box.put_nowait(texts[pit])

    def open(self, key: int, *, pit: bool, address: str = "?", token: str | None = None
             ) -> tuple[asyncio.Queue[str] | None, str | None]:
        """A place for a new screen (the screens that give way for it are told to close):
        its box of views to send, or None and why it gets no place."""
        victims, full = self.places.take(key, address, token)
        if full is not None:
            return None, full
        for victim in victims:
            held, _ = self._latest.pop(victim)
            while not held.empty():
                held.get_nowait()
            held.put_nowait(GIVE_WAY)
        box: asyncio.Queue[str] = asyncio.Queue(maxsize=1)
        if self.view is not None:
            box.put_nowait(self._texts(self.view)[pit])
        self._latest[key] = (box, pit)
        return box, None

    def close(self, key: int) -> None:
        if self._latest.pop(key, None) is not None:
            self.places.leave(key)


class Bucket:
    """A screen's allowance of commands: ``burst`` at once, refilled at ``rate`` a second."""

    def __init__(self, burst: int = BURST, rate: float = RATE) -> None:
        self.burst, self.rate = burst, rate
        self.tokens, self.at = float(burst), time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


async def next_text(websocket: WebSocket) -> str:
    """The next text message; a binary one is answered (it carries no command) and skipped."""
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            raise WebSocketDisconnect(message.get("code", 1000))
        text = message.get("text")
        if isinstance(text, str):
            return text
        await websocket.send_text(json.dumps({
            "type": "error", "error": "a message is JSON in a text frame, not binary"}))


def same_origin(connection: WebSocket | Request) -> bool:
    """A page of another site must not drive the table through the dealer's browser."""
    origin = connection.headers.get("origin")
    if origin is None:
        return True  # not a browser: nothing a page elsewhere can forge
    return urlsplit(origin).netloc == connection.headers.get("host")


def create_app(link: TableLink, by: str, sessions: Sessions, *,
               secure_cookie: bool = False, signs_in: bool = False,
               accounts: dict[str, Any] | None = None) -> Starlette:
    """``signs_in``: every screen needs a sign-in (``accounts``: the dealers' and the pit's,
    name -> :class:`controller.console.config.Account`; supervisors sign in with the table's
    credentials)."""
    accounts = accounts or {}

    def who(token: str | None) -> tuple[Rank, str | None]:
        session = sessions.get(token)
        if session is None:
            return Rank.UNSIGNED, None
        return (Rank.SUPERVISOR if session.role == "supervisor" else Rank.ACCOUNT), session.name

    screens = Screens(who)
    seen = Deduplicator()
    #: each remembered id's command as sent (the same id with another command is refused)
    given_as = Deduplicator()
    pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
    #: One sign-in is checked at a time: the lock-out counts each failure before the next
    #: attempt is looked at, so attempts fired at once get no more guesses than one by one.
    checking = asyncio.Lock()

    async def send_command(request: dict[str, Any]) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[dict[str, Any]] = loop.create_future()

        def answer(reply: dict[str, Any]) -> None:  # from the link's thread
            loop.call_soon_threadsafe(settle, reply)

        def settle(reply: dict[str, Any]) -> None:  # in the loop, once the answer is in
            if not future.done():
                future.set_result(reply)

        link.send(request, answer)
        return await asyncio.wait_for(future, ANSWER_TIMEOUT_S)

    async def command(message: Any, session: Any = None, asked_from: str = ""
                      ) -> dict[str, Any]:
        """Send a screen's command: ``session``, the dealer's account or the supervisor whose
        authority signs it (None: the console's own name gives it)."""
        request = request_of(message, by) if session is None else \
            request_of(message, session.name, session.credential, asked_from)
        given = f"{request['by']} {message.command.model_dump_json()}"
        first = given_as.get(message.id)
        if first is not None and first != given:
            return {"ok": False, "error": f"id {message.id} was given to another command: "
                                          f"nothing was sent"}
        known = seen.get(message.id)
        if known is not None:
            return {**known, "repeated": True}
        if message.id in pending:
            return {**await asyncio.shield(pending[message.id]), "repeated": True}
        future = asyncio.ensure_future(send_command(request))
        pending[message.id] = future
        given_as.remember(message.id, given)
        try:
            reply = await asyncio.shield(future)
        except asyncio.TimeoutError:
            reply = {"ok": False, "error": "the table did not answer in time: look at the "
                                           "screen before trying again"}
        finally:
            pending.pop(message.id, None)
        answer = {"ok": bool(reply.get("ok")), "error": reply.get("error")}
        seen.remember(message.id, answer)
        return answer

    def signed_in_as(token: str | None, *roles: str, always: bool = False) -> bool:
        """Whether the screen may open: signed in as one of ``roles``, or (a dealer's screen
        on a console that asks no sign-in) anyone. ``always``: a sign-in is needed whatever
        the console (the pit's screen shows the last hands whole)."""
        session = sessions.get(token)
        return (not signs_in and not always) or (session is not None and session.role in roles)

    async def dealer(request: Request) -> Response:
        if not signed_in_as(request.cookies.get(COOKIE), "dealer", "supervisor"):
            return RedirectResponse("/supervisor", status_code=303)
        return FileResponse(STATIC / "dealer.html")

    async def pit(request: Request) -> Response:
        if not signed_in_as(request.cookies.get(COOKIE), "pit", "supervisor", always=True):
            return RedirectResponse("/supervisor?next=/pit", status_code=303)
        return FileResponse(STATIC / "pit.html")

    @contextlib.asynccontextmanager
    async def opened_screen(websocket: WebSocket, *roles: str, always: bool = False
                            ) -> AsyncIterator[tuple[bool, str | None]]:
        """A screen's WebSocket: checked (this site's page, signed in as one of ``roles``),
        accepted, told its session (and told again whenever it changes: a supervisor's
        authority spent or over), and sent the console's view as it changes until it goes.
        Yields (accepted, the session cookie); a refused socket is closed saying why."""
        if not same_origin(websocket):
            await websocket.close(code=1008, reason="another site's page")
            yield False, None
            return
        token = websocket.cookies.get(COOKIE)
        if not signed_in_as(token, *roles, always=always):
            await websocket.close(code=1008, reason="sign in first")
            yield False, None
            return
        address = websocket.client.host if websocket.client else "?"
        key = id(websocket)
        box, full = screens.open(key, pit="pit" in roles, address=address, token=token)
        if box is None:
            log.warning("screen refused", reason=full, address=address)
            await websocket.accept()    # accepted, to tell the page why it is closed
            await websocket.close(code=1013, reason=full)
            yield False, None
            return

        told = role_message(sessions.get(token))

        async def push() -> None:
            nonlocal told
            while True:
                # a screen whose sign-in ends (or is signed out elsewhere) is closed then,
                # not at the next view: it holds its place no longer than its sign-in
                try:
                    text: str | None = await asyncio.wait_for(box.get(), SIGN_IN_CHECK_S)
                except asyncio.TimeoutError:
                    text = None
                if text == GIVE_WAY:
                    await websocket.close(code=1013, reason=GAVE_WAY)
                    return
                if not signed_in_as(token, *roles, always=always):  # signed out, or expired
                    await websocket.close(code=1008, reason="the sign-in has ended")
                    return
                sessions.authority(token)   # a supervisor's two minutes may be over
                if (now_told := role_message(sessions.get(token))) != told:
                    told = now_told
                    await websocket.send_text(told)
                if text is not None:
                    await websocket.send_text(text)

        pusher: asyncio.Future[None] | None = None
        try:
            await websocket.accept()
            await websocket.send_text(told)
            pusher = asyncio.ensure_future(push())
            yield True, token
        except WebSocketDisconnect:
            pass
        finally:
            if pusher is not None:
                pusher.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await pusher
            screens.close(key)

    async def pit_socket(websocket: WebSocket) -> None:
        """The pit's read-only screen: the live table, the last hands, the alarms. It may ask
        for a hand in full and, with a supervisor signed in, acknowledge an alarm."""
        async with opened_screen(websocket, "pit", "supervisor", always=True) as (accepted,
                                                                                token):
            if not accepted:
                return
            bucket = Bucket(burst=20, rate=10.0)
            while True:
                text = await next_text(websocket)
                try:
                    if not bucket.take():
                        raise BadMessage("too many requests from this screen: slow down")
                    message = parse_pit_message(text)
                except BadMessage as error:
                    await websocket.send_text(json.dumps({"type": "error",
                                                          "error": str(error)}))
                    continue
                if message.type == "recall":
                    if message.hand_id == link.hand_in_play():
                        await websocket.send_text(json.dumps({
                            "type": "error", "error": f"hand {message.hand_id} is in play: the "
                                                      f"pit sees a hand once it is over"}))
                        continue
                    hand = link.recall.hand(message.hand_id)
                    await websocket.send_text(json.dumps(
                        {"type": "hand", "hand": hand} if hand is not None else
                        {"type": "error", "error": f"hand {message.hand_id} is not among the "
                                                   f"last hands the console keeps"}))
                    continue
                session = sessions.authority(token)
                if session is None:
                    await websocket.send_text(json.dumps({
                        "type": "error", "error": "acknowledging an alarm needs a supervisor "
                                                  "signed in (at /supervisor; one sign-in, "
                                                  "one action)"}))
                    continue
                # A supervisor's command: the table checks the credential, decides who it
                # is, and journals the acknowledgement; every console sees it on the stream.
                try:
                    reply = await send_command({
                        "command": "acknowledge_alarm", "seq": message.seq,
                        "by": session.name, "credential": session.credential,
                        "asked_from": asked_from("the pit's screen", websocket, session)})
                except asyncio.TimeoutError:
                    reply = {"ok": False, "error": "the table did not answer in time: look at "
                                                   "the alarms before trying again"}
                if reply.get("ok"):
                    sessions.spend(token)
                else:
                    await websocket.send_text(json.dumps({
                        "type": "error", "error": f"alarm #{message.seq} not acknowledged: "
                                                  f"{reply.get('error')}"}))

    async def supervisor(request: Request) -> Response:
        return FileResponse(STATIC / "supervisor.html")

    async def sign_in(request: Request) -> Response:
        """The table checks the credential (and journals who signed in, or counts the
        failure); the browser gets a session cookie, never the credential."""
        address = request.client.host if request.client else "?"
        if not same_origin(request) or \
                request.headers.get("content-type", "").split(";")[0] != "application/json":
            return JSONResponse({"ok": False, "error": "a sign-in is JSON from this console's "
                                                       "own page"}, status_code=400)
        if wait := sessions.locked_for(address):
            return locked_out(wait)
        try:  # this request has the turn, if turns are being given: it ends with it
            body = b""
            async for chunk in request.stream():
                body += chunk
                if len(body) > 4096:
                    break
            try:
                form = parse_sign_in(body)
            except BadMessage as error:
                return JSONResponse({"ok": False, "error": str(error)}, status_code=400)
            before = sessions.get(request.cookies.get(COOKIE))
            dealer = before.name if before is not None and before.role == "dealer" else ""
            async with checking:
                return await check_sign_in(form, address, dealer)
        finally:
            sessions.spent(address)

    async def check_sign_in(form: Any, address: str, dealer: str = "") -> Response:
        if wait := sessions.locked_for(address):   # failures while it waited its check
            return locked_out(wait)
        if form.name in accounts:            # a dealer's or the pit's account: the console's
            opened = sessions.account(form.name, form.credential, accounts)
            if opened is None:
                sessions.failed(address)
                log.warning("sign-in refused", name=form.name, address=address)
                return JSONResponse({"ok": False, "error": "the credential is not valid for "
                                                           "this account"}, status_code=401)
            sessions.signed_in_from(address, opened[1].role)
            return signed_in(*opened)
        try:
            reply = await send_command({"command": "sign_in", "by": form.name,
                                        "credential": form.credential})
        except asyncio.TimeoutError:
            reply = {"ok": False, "error": "the table did not answer in time"}
        if not reply.get("ok"):
            sessions.failed(address)
            log.warning("supervisor sign-in refused", name=form.name, address=address)
            return JSONResponse({"ok": False, "error": reply.get("error")}, status_code=401)
        sessions.signed_in_from(address)
        return signed_in(*sessions.open(form.name, form.credential, dealer))

    def locked_out(wait: float) -> Response:
        return JSONResponse({"ok": False, "error": f"too many failed sign-ins from this screen "
                             f"or on this console: locked for {int(wait) + 1} s"},
                            status_code=429)

    def signed_in(token: str, session: Any) -> Response:
        log.info("signed in", name=session.name, role=session.role)
        response = JSONResponse({"ok": True, "name": session.name, "role": session.role,
                                 "seconds": sessions.seconds_left(session)})
        response.set_cookie(COOKIE, token, max_age=int(sessions.lifetime), httponly=True,
                            samesite="strict", secure=secure_cookie, path="/")
        return response

    async def sign_out(request: Request) -> Response:
        if not same_origin(request):
            return JSONResponse({"ok": False, "error": "a sign-out comes from this console's "
                                                       "own page"}, status_code=400)
        sessions.close(request.cookies.get(COOKIE))
        response = JSONResponse({"ok": True})
        response.delete_cookie(COOKIE, path="/")
        return response

    def role_message(session: Any) -> str:
        if session is None:
            return json.dumps({"type": "session", "role": "dealer"})
        return json.dumps({"type": "session", "role": session.role, "name": session.name,
                           "seconds": sessions.seconds_left(session),
                           "ended": session.ended})

    def asked_from(screen: str, websocket: WebSocket, session: Any) -> str:
        """The screen a supervisor's command came from, as the table journals it."""
        address = websocket.client.host if websocket.client else "?"
        dealer = f"dealer {session.dealer} signed in" if session.dealer \
            else "no dealer signed in"
        return f"{screen} at {address} on {by} ({dealer})"[:128]

    async def socket(websocket: WebSocket) -> None:
        async with opened_screen(websocket, "dealer", "supervisor") as (accepted, token):
            if not accepted:
                return
            was_signed_in = sessions.get(token) is not None
            bucket = Bucket()
            while True:
                text = await next_text(websocket)
                session = sessions.get(token)
                if was_signed_in and session is None:
                    if signs_in:
                        await websocket.close(code=1008, reason="the sign-in has expired")
                        return
                    was_signed_in = False
                    await websocket.send_text(role_message(None))
                authority = sessions.authority(token)
                why = None if authority is not None else (
                    f"{session.name}'s supervisor authority on this screen is over "
                    f"({session.ended}): one sign-in, one supervisor's command"
                    if session is not None and session.ended else
                    f"{session.name} is signed in as a {session.role}, not a supervisor"
                    if session is not None else
                    "the supervisor's session on this screen has expired: sign in again"
                    if was_signed_in else "no supervisor is signed in on this screen (sign in "
                                          "at /supervisor)")
                # Every message costs the screen's allowance, a bad one too: a script
                # sending nonsense at full speed gets as few log lines as commands.
                allowed = bucket.take()
                try:
                    message = parse_message(text, supervisor=why)
                except BadMessage as error:
                    if allowed:
                        log.warning("bad message from a screen", error=str(error))
                    await websocket.send_text(json.dumps({
                        "type": "error", "error": str(error) if allowed else
                        "too many messages from this screen: slow down"}))
                    continue
                if not allowed:
                    await websocket.send_text(json.dumps({
                        "type": "answer", "id": message.id, "ok": False,
                        "error": "too many commands from this screen: nothing was sent; "
                                 "slow down"}))
                    continue
                giver = authority if authority is not None else \
                    session if session is not None and session.role == "dealer" else None
                answer = await command(message, giver,
                                       asked_from("the dealer's screen", websocket, giver)
                                       if authority is not None else "")
                if authority is not None and answer["ok"] \
                        and message.command.command in SUPERVISOR_NAMES:
                    sessions.spend(token)
                    await websocket.send_text(role_message(sessions.get(token)))
                await websocket.send_text(json.dumps({"type": "answer", "id": message.id,
                                                      **answer}))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        loop = asyncio.get_running_loop()

        def on_view(view: dict[str, Any]) -> None:  # from the link's thread
            loop.call_soon_threadsafe(show, view)

        shown_hand: list[str | None] = [None]

        def show(view: dict[str, Any]) -> None:  # in the loop
            hand = view.get("hand_id")
            if hand is not None and hand != shown_hand[0]:
                # a hand started: no supervisor's authority outlives the hand it was for
                sessions.end_authority(f"hand {hand} started")
            shown_hand[0] = hand
            screens.show(view)

        link.on_view = on_view
        link.start()
        try:
            yield
        finally:
            await asyncio.to_thread(link.stop)

    return Starlette(routes=[Route("/", dealer), Route("/supervisor", supervisor),
                             Route("/pit", pit), WebSocketRoute("/ws/pit", pit_socket),
                             Route("/api/sign-in", sign_in, methods=["POST"]),
                             Route("/api/sign-out", sign_out, methods=["POST"]),
                             WebSocketRoute("/ws", socket),
                             Mount("/static", StaticFiles(directory=STATIC), name="static")],
                     middleware=[Middleware(SecurityHeaders)] +
                     ([] if signs_in else [Middleware(LoopbackNames)]), lifespan=lifespan)

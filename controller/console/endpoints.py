"""The console's endpoints: the pages, the sign-in, and each screen's WebSocket.

Each is a module-level function of a request (or a WebSocket) that finds the console's state,
a :class:`controller.console.state.Console`, on ``app.state.console``
(:func:`controller.console.app.create_app` puts it there).

``/`` is the dealer's screen; ``/ws`` its WebSocket: the console pushes the latest view, and
takes the dealer's commands (:mod:`controller.console.messages`). A slow browser only ever
misses views in between (each screen keeps only the newest one to send); a browser that
sends too fast is told so and its excess is dropped before it reaches the table. ``/pit`` and
``/ws/pit`` are the pit's read-only screen, ``/supervisor`` and ``/api/sign-in`` the sign-in.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import AsyncIterator
from pathlib import Path

import structlog
from starlette.requests import HTTPConnection, Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.websockets import WebSocket, WebSocketDisconnect

from controller.core.card_faces import printed_text
from controller.console.guards import Bucket, same_origin
from controller.console.messages import (
    SUPERVISOR_NAMES,
    BadMessage,
    SignIn,
    parse_message,
    parse_pit_message,
    parse_sign_in,
)
from controller.console.screens import GAVE_WAY, GIVE_WAY, SIGN_IN_CHECK_S, next_text
from controller.console.sessions import COOKIE, Session
from controller.console.state import Console

log = structlog.get_logger("lowball.console")
STATIC = Path(__file__).with_name("static")


def console_of(connection: HTTPConnection) -> Console:
    """The console serving this request (``app.state.console``)."""
    console: Console = connection.app.state.console
    return console


# -- pages ----------------------------------------------------------------------------------

async def dealer_page(request: Request) -> Response:
    if not console_of(request).signed_in_as(request.cookies.get(COOKIE), "dealer",
                                            "supervisor"):
        return RedirectResponse("/supervisor", status_code=303)
    return FileResponse(STATIC / "dealer.html")


async def pit_page(request: Request) -> Response:
    if not console_of(request).signed_in_as(request.cookies.get(COOKIE), "pit", "supervisor",
                                            always=True):
        return RedirectResponse("/supervisor?next=/pit", status_code=303)
    return FileResponse(STATIC / "pit.html")


async def supervisor_page(request: Request) -> Response:
    return FileResponse(STATIC / "supervisor.html")


# -- sign-in --------------------------------------------------------------------------------

async def sign_in(request: Request) -> Response:
    """The table checks the credential (and journals who signed in, or counts the failure);
    the browser gets a session cookie, never the credential."""
    console = console_of(request)
    sessions = console.sessions
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
        async with console.checking:
            return await check_sign_in(console, form, address, dealer)
    finally:
        sessions.spent(address)


async def check_sign_in(console: Console, form: SignIn, address: str,
                        dealer: str = "") -> Response:
    """One sign-in's check, its turn taken: a console account's, or a supervisor's (the
    table checks the credential). ``dealer``: the dealer signed in on that screen before."""
    sessions = console.sessions
    if wait := sessions.locked_for(address):   # failures while it waited its check
        return locked_out(wait)
    if form.name in console.accounts:    # a dealer's or the pit's account: the console's
        opened = sessions.account(form.name, form.credential, dict(console.accounts))
        if opened is None:
            sessions.failed(address)
            log.warning("sign-in refused", name=form.name, address=address)
            return JSONResponse({"ok": False, "error": "the credential is not valid for "
                                                       "this account"}, status_code=401)
        sessions.signed_in_from(address, opened[1].role)
        return signed_in(console, *opened)
    try:
        reply = await console.send_command({"command": "sign_in", "by": form.name,
                                            "credential": form.credential})
    except asyncio.TimeoutError:
        reply = {"ok": False, "error": "the table did not answer in time"}
    if not reply.get("ok"):
        sessions.failed(address)
        log.warning("supervisor sign-in refused", name=form.name, address=address)
        return JSONResponse({"ok": False, "error": reply.get("error")}, status_code=401)
    sessions.signed_in_from(address)
    return signed_in(console, *sessions.open(form.name, form.credential, dealer))


def locked_out(wait: float) -> Response:
    return JSONResponse({"ok": False, "error": f"too many failed sign-ins from this screen "
                         f"or on this console: locked for {int(wait) + 1} s"},
                        status_code=429)


def signed_in(console: Console, token: str, session: Session) -> Response:
    log.info("signed in", name=session.name, role=session.role)
    sessions = console.sessions
    response = JSONResponse({"ok": True, "name": session.name, "role": session.role,
                             "seconds": sessions.seconds_left(session)})
    response.set_cookie(COOKIE, token, max_age=int(sessions.lifetime), httponly=True,
                        samesite="strict", secure=console.secure_cookie, path="/")
    return response


async def supervisors_with_pins(request: Request) -> Response:
    """The names of the supervisors who sign in with a PIN, for the sign-in page to offer
    by touch (names the journal and the table's stream carry anyway; never a PIN's hash)."""
    return JSONResponse({"with_pin": list(console_of(request).sessions.with_pins)})


async def sign_out(request: Request) -> Response:
    if not same_origin(request):
        return JSONResponse({"ok": False, "error": "a sign-out comes from this console's "
                                                   "own page"}, status_code=400)
    console_of(request).sessions.close(request.cookies.get(COOKIE))
    response = JSONResponse({"ok": True})
    response.delete_cookie(COOKIE, path="/")
    return response


# -- screens --------------------------------------------------------------------------------

@contextlib.asynccontextmanager
async def opened_screen(websocket: WebSocket, *roles: str, always: bool = False
                        ) -> AsyncIterator[tuple[bool, str | None]]:
    """A screen's WebSocket: checked (this site's page, signed in as one of ``roles``),
    accepted, told its session (and told again whenever it changes: a supervisor's
    authority spent or over), and sent the console's view as it changes until it goes.
    Yields (accepted, the session cookie); a refused socket is closed saying why."""
    console = console_of(websocket)
    sessions, screens = console.sessions, console.screens
    if not same_origin(websocket):
        await websocket.close(code=1008, reason="another site's page")
        yield False, None
        return
    token = websocket.cookies.get(COOKIE)
    if not console.signed_in_as(token, *roles, always=always):
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

    told = console.role_message(sessions.get(token))

    async def push() -> None:
        nonlocal told
        while True:
            # a screen whose sign-in ends (or is signed out elsewhere) is closed then, not
            # at the next view: it holds its place no longer than its sign-in
            try:
                text: str | None = await asyncio.wait_for(box.get(), SIGN_IN_CHECK_S)
            except asyncio.TimeoutError:
                text = None
            if text == GIVE_WAY:
                await websocket.close(code=1013, reason=GAVE_WAY)
                return
            if not console.signed_in_as(token, *roles, always=always):  # signed out, expired
                await websocket.close(code=1008, reason="the sign-in has ended")
                return
            sessions.authority(token)   # a supervisor's two minutes may be over
            if (now_told := console.role_message(sessions.get(token))) != told:
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
    """The pit's read-only screen: the live table, the last hands, the alarms. It may ask for
    a hand in full once it is over and, with a supervisor's authority, acknowledge an alarm."""
    console = console_of(websocket)
    sessions, link = console.sessions, console.link
    async with opened_screen(websocket, "pit", "supervisor", always=True) as (accepted, token):
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
                await websocket.send_text(json.dumps({"type": "error", "error": str(error)}))
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
                    {"type": "error", "error": f"hand {message.hand_id} is not among the last "
                                               f"hands the console keeps"}))
                continue
            session = sessions.authority(token)
            if session is None:
                await websocket.send_text(json.dumps({
                    "type": "error", "error": "acknowledging an alarm needs a supervisor "
                                              "signed in (at /supervisor; one sign-in, one "
                                              "action)"}))
                continue
            # A supervisor's command: the table checks the credential, decides who it is,
            # and journals the acknowledgement; every console sees it on the stream. The
            # authority is spent as it is given (one sign-in, one command, whatever the screens).
            request = {"command": "acknowledge_alarm", "seq": message.seq,
                       "by": session.name, "credential": session.credential,
                       "asked_from": console.asked_from("the pit's screen", websocket, session)}
            sessions.spend(token)
            try:
                reply = await console.send_command(request)
            except asyncio.TimeoutError:
                reply = {"ok": False, "error": "the table did not answer in time: look at "
                                               "the alarms before trying again"}
            if not reply.get("ok"):
                await websocket.send_text(json.dumps({
                    "type": "error", "error": f"alarm #{message.seq} not acknowledged: "
                                              f"{reply.get('error')}"}))


async def dealer_socket(websocket: WebSocket) -> None:
    """The dealer's screen: the table's view pushed, the dealer's commands taken (and a
    supervisor's, with a supervisor's authority on this screen: one command)."""
    console = console_of(websocket)
    sessions = console.sessions
    async with opened_screen(websocket, "dealer", "supervisor") as (accepted, token):
        if not accepted:
            return
        was_signed_in = sessions.get(token) is not None
        bucket = Bucket()
        while True:
            text = await next_text(websocket)
            session = sessions.get(token)
            if was_signed_in and session is None:
                if console.signs_in:
                    await websocket.close(code=1008, reason="the sign-in has expired")
                    return
                was_signed_in = False
                await websocket.send_text(console.role_message(None))
            authority = sessions.authority(token)
            why = None if authority is not None else refusal_of_supervision(session,
                                                                            was_signed_in)
            # Every message costs the screen's allowance, a bad one too: a script sending
            # nonsense at full speed gets as few log lines as commands.
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
                    "error": "too many commands from this screen: nothing was sent; slow "
                             "down"}))
                continue
            giver = authority if authority is not None else \
                session if session is not None and session.role == "dealer" else None
            supervising = authority is not None and message.command.command in SUPERVISOR_NAMES
            asked_from = console.asked_from("the dealer's screen", websocket, authority) \
                if authority is not None else ""
            if supervising and authority is not None:
                # spent as it is given, not when the table answers: another screen on the
                # same sign-in gets nothing from it meanwhile (one sign-in, one command)
                giver = dataclasses.replace(authority)
                sessions.spend(token)
            answer = await console.command(message, giver, asked_from)
            if answer.get("error"):
                answer = {**answer, "error": printed_text(str(answer["error"]))}
            if supervising:
                await websocket.send_text(console.role_message(sessions.get(token)))
            await websocket.send_text(json.dumps({"type": "answer", "id": message.id,
                                                  **answer}))


def refusal_of_supervision(session: Session | None, was_signed_in: bool) -> str:
    """Why a supervisor's command from this screen is refused (no authority holds here)."""
    if session is not None and session.ended:
        return (f"{session.name}'s supervisor authority on this screen is over "
                f"({session.ended}): one sign-in, one supervisor's command")
    if session is not None:
        return f"{session.name} is signed in as a {session.role}, not a supervisor"
    if was_signed_in:
        return "the supervisor's session on this screen has expired: sign in again"
    return "no supervisor is signed in on this screen (sign in at /supervisor)"

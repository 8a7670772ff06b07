"""What a console answers before any screen is served: the headers every page carries, the
loopback name a console nobody signs in to answers to, another site's page refused, and the
allowance (:class:`Bucket`) that slows a client sending too much."""

from __future__ import annotations

import time
from urllib.parse import urlsplit

import structlog
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket

from controller.console.config import is_loopback

log = structlog.get_logger("lowball.console")
HEADERS = {
    "content-security-policy": "default-src 'self'; connect-src 'self'; img-src 'self' data:; "
                               "frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}
#: A screen may send this many commands in a burst, then one per 1/RATE s.
BURST, RATE = 10, 5.0


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




def same_origin(connection: WebSocket | Request) -> bool:
    """A page of another site must not drive the table through the dealer's browser."""
    origin = connection.headers.get("origin")
    if origin is None:
        return True  # not a browser: nothing a page elsewhere can forge
    return urlsplit(origin).netloc == connection.headers.get("host")

"""The console's web side: Starlette over uvicorn (plain HTML, CSS and JavaScript modules
served from :mod:`controller.console`'s ``static`` directory; nothing from the network).

:func:`create_app` wires the console together: its state (:mod:`controller.console.state`)
on ``app.state.console``, the endpoints (:mod:`controller.console.endpoints`), the guards
every request meets first (:mod:`controller.console.guards`), and the link to the table,
started and stopped with the app.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles

from controller.console import endpoints
from controller.console.guards import LoopbackNames, SecurityHeaders
from controller.console.link import TableLink
from controller.console.screens import GAVE_WAY as GAVE_WAY
from controller.console.sessions import Sessions
from controller.console.state import Console

ROUTES = [Route("/", endpoints.dealer_page), Route("/supervisor", endpoints.supervisor_page),
          Route("/pit", endpoints.pit_page), WebSocketRoute("/ws/pit", endpoints.pit_socket),
          Route("/api/sign-in", endpoints.sign_in, methods=["POST"]),
          Route("/api/sign-out", endpoints.sign_out, methods=["POST"]),
          Route("/api/supervisors", endpoints.supervisors_with_pins),
          WebSocketRoute("/ws", endpoints.dealer_socket),
          Mount("/static", StaticFiles(directory=endpoints.STATIC), name="static")]


def create_app(link: TableLink, by: str, sessions: Sessions, *,
               secure_cookie: bool = False, signs_in: bool = False,
               accounts: dict[str, Any] | None = None) -> Starlette:
    """The console for the table ``link`` reaches (see :class:`Console` for the rest). A
    console nobody signs in to answers only to a loopback name (DNS rebinding)."""
    console = Console(link, by, sessions, secure_cookie=secure_cookie, signs_in=signs_in,
                      accounts=accounts)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        loop = asyncio.get_running_loop()

        def on_view(view: dict[str, Any]) -> None:  # from the link's thread
            loop.call_soon_threadsafe(console.show, view)

        link.on_view = on_view
        link.start()
        try:
            yield
        finally:
            await asyncio.to_thread(link.stop)

    app = Starlette(routes=ROUTES,
                    middleware=[Middleware(SecurityHeaders)] +
                    ([] if signs_in else [Middleware(LoopbackNames)]), lifespan=lifespan)
    app.state.console = console
    return app

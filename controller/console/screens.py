"""The open screens: each with the newest view still to send (the pit's, or the dealer's),
its place among the console's screens (:mod:`controller.console.places`), and how a screen's
next message is read."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from controller.console.places import Places, Rank


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

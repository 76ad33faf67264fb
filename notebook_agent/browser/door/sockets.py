"""WebSockets through the door: the handshake judged like a request, every frame the page sends checked for
secrets.

A page's ``new WebSocket(url)`` is caught by Playwright's WebSocket route on each of the run's tabs: the
handshake is put to the door's one rule (egress.py: a secret in its URL never leaves; a socket to
another site than the tab's is an effect the approval policy judges). Let through, the socket is connected
and each message the page sends is checked for a secret's value before it is passed on; one that carries a
secret to a site not its own closes the socket instead. Messages from the server reach the page unchanged.

That route is a script in the page, which a page can step around; the native socket it would then open is
refused by the tab's network (tab_door.py), which lets a WebSocket out only to the host of a socket judged
here, while that socket is open. A Playwright without WebSocket routes (before 1.48) leaves that refusal
alone: WebSockets are then disabled in the run's tabs.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any, Protocol

from playwright.async_api import BrowserContext, Page, WebSocketRoute
from playwright.async_api import Error as PlaywrightError

from ..errors import Notices
from ..page.frozen_tabs import confirmed, later
from .egress import Outgoing, describe_leak, frame_bytes, leak
from .live import LiveSecrets
from .tab_devtools import ATTACH_WAIT
from .tab_door import TabDoor


class DoorRules(Protocol):
    """What the WebSocket route uses of the session's door (route.py ``Door``)."""

    live: LiveSecrets
    notices: Notices
    tab_door: TabDoor

    def secrets(self, url: str) -> list[tuple[str, str]]: ...

    @property
    def active(self) -> bool: ...

    async def egress(self, outgoing: Outgoing, origin: str) -> str | None: ...


def _every(url: str) -> bool:
    return True


class SocketDoor:
    """The WebSocket route of one session's tabs (see the module doc)."""

    def __init__(self, door: DoorRules) -> None:
        self.door = door
        self._routed: dict[Page, Callable[[WebSocketRoute], Any]] = {}
        self._contexts: list[BrowserContext] = []
        self._tasks: set[asyncio.Task[Any]] = set()

    async def watch(self, context: BrowserContext) -> None:
        if any(c is context for c in self._contexts):
            return
        self._contexts.append(context)
        context.on("page", self._on_page)
        if hasattr(context, "route_web_socket"):  # a tab's first moments, before its own route is in place
            # Playwright applies it to the context's tabs one by one, and one whose script never yields (another
            # session's frozen tab) never answers: bounded like the other parts, the rest goes on in the background
            routed = asyncio.ensure_future(context.route_web_socket(_every, self._unplaced))
            done, _ = await asyncio.wait({routed}, timeout=ATTACH_WAIT)
            if routed not in done:
                later(routed)
            else:
                with contextlib.suppress(PlaywrightError):
                    routed.result()
        # bounded like the other parts of the door: a tab whose script never yields cannot confirm the route
        await asyncio.gather(*(confirmed(page, self._route(page), ATTACH_WAIT) for page in list(context.pages)))

    async def close(self, context: BrowserContext) -> None:
        with contextlib.suppress(Exception):
            context.remove_listener("page", self._on_page)
        self._contexts = [c for c in self._contexts if c is not context]
        # the pages keep their route (Playwright cannot remove one WebSocket route alone); it connects
        # every socket of a page no longer listed here, unjudged, as if it were not there
        self._routed = {p: h for p, h in self._routed.items() if p.context is not context}

    def _on_page(self, page: Page) -> None:
        self._spawn(self._route(page))

    def _spawn(self, work: Any) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _route(self, page: Page) -> None:
        if page in self._routed or not hasattr(page, "route_web_socket"):
            return

        async def handler(ws: WebSocketRoute) -> None:
            await self._open(page, ws)

        self._routed[page] = handler
        with contextlib.suppress(PlaywrightError):
            await page.route_web_socket(_every, handler)

    async def _unplaced(self, ws: WebSocketRoute) -> None:
        """A socket of a tab whose own route is not in place yet (a popup the opener scripts at once): Playwright
        puts a context's routes in a new tab before its first script runs, a tab's own only after. Which tab it
        is, is not known here: while a secret is live, it is judged as from another site than the socket's."""
        door = self.door
        if not (door.active and door.live.live):
            ws.connect_to_server()
            return
        await self._open(None, ws)

    async def _open(self, page: Page | None, ws: WebSocketRoute) -> None:
        door = self.door
        if page is not None and page not in self._routed:
            ws.connect_to_server()  # another session's tab now, or a session that closed
            return
        judged = door.active  # when not (a run without a door in this tab): connected, as if no door were there
        reason = await door.egress(Outgoing("websocket", ws.url), page.url if page else "") if judged else None
        if reason is not None:
            with contextlib.suppress(PlaywrightError):
                await ws.close(code=1008, reason="refused by the approval policy")
            return
        judged_live = bool(door.live.outside(ws.url))  # asked about knowing a secret was live: its frames go on
        tab_door = door.tab_door
        if page is not None:
            await tab_door.open_socket(page, ws.url)
        server = ws.connect_to_server()
        closed = False

        def done() -> None:
            nonlocal closed
            if not closed and page is not None:
                closed = True
                self._spawn(tab_door.close_socket(page, ws.url))

        def to_server(message: str | bytes) -> None:
            frame = Outgoing("frame", ws.url, body=frame_bytes(message))
            name = leak(frame, door.secrets)  # the session's secrets live when it is sent
            held = door.live.outside(ws.url) if name is None and not judged_live else []
            if name is None and not held:
                server.send(message)
                return
            why = (
                describe_leak(name, frame)
                if name is not None
                else (
                    f"a WebSocket message to {frame.url} while {door.live.describe(held)} became live after the "
                    "socket was opened"
                )
            )
            door.notices.add(f"Blocked: {why}; the socket was closed.")
            self._spawn(_close_both(ws, server))
            done()

        def page_closed(code: int | None, reason: str | None) -> None:
            self._spawn(_close(server, code, reason))
            done()

        def server_closed(code: int | None, reason: str | None) -> None:
            self._spawn(_close(ws, code, reason))
            done()

        ws.on_message(to_server)
        server.on_message(lambda message: ws.send(message))
        ws.on_close(page_closed)
        server.on_close(server_closed)


async def _close(side: WebSocketRoute, code: int | None, reason: str | None) -> None:
    with contextlib.suppress(PlaywrightError):
        await side.close(code=code, reason=reason)


async def _close_both(ws: WebSocketRoute, server: WebSocketRoute) -> None:
    await _close(ws, 1008, "refused")
    await _close(server, 1000, "")

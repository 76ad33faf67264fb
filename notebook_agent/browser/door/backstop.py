"""What the context's route cannot see, held where the tab's requests leave: DevTools on each tab.

Playwright's route (guard.py) never sees a request a page sends while it unloads (``navigator.sendBeacon`` or
``fetch(..., {keepalive: true})`` on ``pagehide``): the document is gone by the time it would be routed, and
the browser sends it on its own. Nor can a route hold a WebSocket the page opens with the native constructor
(Playwright's WebSocket route is a script in the page, which the page can step around). So each tab of the
run gets a DevTools session of its own:

- ``Fetch`` at the request stage pauses every request that can carry data (beacons, fetch, XHR, event
  streams, reports, and what Chromium calls "Other"), before Playwright's route (Chromium asks this session
  first). Each is put to the same rule as at the route (egress.py): a secret going to a site not its own is
  aborted whatever the policy, data to another site is put to the judge. What was judged here is remembered,
  so the route lets it by instead of asking a person twice.
- the tab's network refuses every native WebSocket (``Network.emulateNetworkConditionsByRule``, offline for
  ``ws:`` and ``wss:``), the tab's dedicated workers included, except to a host the WebSocket route
  (sockets.py) judged and is connecting to: a socket is opened only through the door.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from playwright.async_api import BrowserContext, CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from ..page.frozen_tabs import confirmed
from .egress import Outgoing

#: Request types paused at the request stage: the ones that can carry data a script chose. Documents are the
#: route's (it knows navigations and popups); images, styles, fonts and scripts the route sees as they load.
PATTERNS = [
    {"resourceType": kind, "requestStage": "Request"}
    for kind in ("Ping", "Fetch", "XHR", "EventSource", "CSPViolationReport", "Other")
]

#: Seconds a request judged here is remembered for the route (it sees it within milliseconds, if at all).
REMEMBER = 30.0
#: Seconds ``watch`` waits for the existing tabs (a frozen tab cannot answer; see redirects.py).
ATTACH_WAIT = 5.0

Decide = Callable[[Page, Outgoing], Awaitable["str | None"]]
"""``await decide(page, outgoing)``: why the request may not leave, or None."""

Key = tuple[str, str, bytes]


def key(method: str, url: str, body: bytes) -> Key:
    return (method.upper(), url, body)


class Backstop:
    """A DevTools session on each tab of the run: see the module doc."""

    def __init__(self, decide: Decide) -> None:
        self.decide = decide
        self._contexts: list[BrowserContext] = []
        self._pages: dict[Page, CDPSession] = {}
        self._attaching: set[Page] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._judged: Counter[Key] = Counter()
        self._when: dict[Key, float] = {}
        self._open_sockets: Counter[tuple[Page, str]] = Counter()
        self._closed = False

    # -- what the route asks -------------------------------------------------------------------------------
    def judged(self, method: str, url: str, body: bytes) -> bool:
        """Whether this request was judged here already (then the route lets it by); consumes the mark."""
        self._forget_old()
        k = key(method, url, body)
        if self._judged[k] <= 0:
            return False
        self._judged[k] -= 1
        if not self._judged[k]:
            del self._judged[k]
            self._when.pop(k, None)
        return True

    def _forget_old(self) -> None:
        now = time.monotonic()
        for k, at in list(self._when.items()):
            if now - at > REMEMBER:
                self._when.pop(k, None)
                self._judged.pop(k, None)

    # -- sockets (sockets.py opens one only through here) --------------------------------------------------
    async def open_socket(self, page: Page, url: str) -> None:
        """Let ``page`` open a native WebSocket to ``url``'s host while a judged socket there is open."""
        self._open_sockets[(page, _host_pattern(url))] += 1
        await self._apply_sockets(page)

    async def close_socket(self, page: Page, url: str) -> None:
        k = (page, _host_pattern(url))
        self._open_sockets[k] -= 1
        if self._open_sockets[k] <= 0:
            del self._open_sockets[k]
        await self._apply_sockets(page)

    async def _apply_sockets(self, page: Page) -> None:
        session = self._pages.get(page)
        if session is not None:
            with contextlib.suppress(PlaywrightError):
                await session.send("Network.emulateNetworkConditionsByRule", _socket_rules(self._hosts(page)))

    def _hosts(self, page: Page) -> list[str]:
        return [host for (p, host) in self._open_sockets if p is page]

    # -- tabs ----------------------------------------------------------------------------------------------
    async def watch(self, context: BrowserContext) -> None:
        """Attach to every tab of ``context``, now and to come (idempotent; bounded like redirects.py)."""
        if any(c is context for c in self._contexts):
            return
        self._closed = False
        self._contexts.append(context)
        context.on("page", self._on_page)
        pages = list(context.pages)
        await asyncio.gather(*(confirmed(page, self._spawn(self._attach(page)), ATTACH_WAIT) for page in pages))

    async def close(self) -> None:
        """Leave every tab: the context may be shared with sessions that go on."""
        self._closed = True
        for context in self._contexts:
            with contextlib.suppress(Exception):
                context.remove_listener("page", self._on_page)
        self._contexts.clear()
        sessions, self._pages = list(self._pages.items()), {}
        self._open_sockets.clear()
        await asyncio.gather(*(confirmed(page, _detach(session), ATTACH_WAIT) for page, session in sessions))

    def attached(self, page: Page) -> bool:
        return page in self._pages

    def _on_page(self, page: Page) -> None:
        self._spawn(self._attach(page))

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _attach(self, page: Page) -> None:
        if page in self._pages or page in self._attaching or page.is_closed():
            return
        self._attaching.add(page)
        try:
            session = await page.context.new_cdp_session(page)
            session.on("Fetch.requestPaused", lambda event: self._spawn(self._paused(page, session, event)))
            await session.send("Network.enable")
            await session.send("Network.emulateNetworkConditionsByRule", _socket_rules([]))
            await session.send("Fetch.enable", {"patterns": PATTERNS})
        except PlaywrightError:
            return  # a closed tab, or a browser without these domains (the route still judges what it sees)
        finally:
            self._attaching.discard(page)
        if self._closed:
            await confirmed(page, _detach(session), ATTACH_WAIT)
            return
        self._pages[page] = session
        page.once("close", self._closed_page)

    def _closed_page(self, page: Page) -> None:
        self._pages.pop(page, None)

    async def _paused(self, page: Page, session: CDPSession, event: dict[str, Any]) -> None:
        """Rule on one paused request; whatever happens, it never stays paused."""
        request_id = event.get("requestId")
        verdict: str | None = "it was not judged"
        outgoing: Outgoing | None = None
        try:
            outgoing = await _outgoing(session, event)
            verdict = await self.decide(page, outgoing)
        except Exception as exc:  # a judge that fails refuses, as at the route
            verdict = f"it could not be judged ({type(exc).__name__}: {exc})"
        finally:
            if verdict is None and outgoing is not None:
                k = key(outgoing.method, outgoing.url, outgoing.body)
                self._judged[k] += 1
                self._when[k] = time.monotonic()
            answer = asyncio.ensure_future(_answer(session, request_id, verdict))
            self._tasks.add(answer)
            answer.add_done_callback(self._tasks.discard)


def _host_pattern(url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _socket_rules(hosts: list[str]) -> dict[str, Any]:
    """Offline for every WebSocket, except the hosts a judged socket is connecting to (first match wins)."""
    free = {"latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
    rules = [{"urlPattern": f"{h}/*", "offline": False, **free} for h in hosts]
    rules += [{"urlPattern": f"{scheme}://*:*/*", "offline": True, **free} for scheme in ("ws", "wss")]
    return {"matchedNetworkConditions": rules}


async def _outgoing(session: CDPSession, event: dict[str, Any]) -> Outgoing:
    request = event.get("request")
    request = request if isinstance(request, dict) else {}
    headers = request.get("headers")
    body = b""
    entries = request.get("postDataEntries")
    if isinstance(entries, list) and entries:
        body = b"".join(base64.b64decode(e.get("bytes", "")) for e in entries if isinstance(e, dict))
    elif request.get("postData"):
        body = str(request["postData"]).encode()
    elif request.get("hasPostData"):
        with contextlib.suppress(PlaywrightError):
            got = await session.send("Network.getRequestPostData", {"requestId": event.get("networkId", "")})
            body = str(got.get("postData", "")).encode()
    return Outgoing(
        "request",
        str(request.get("url", "")),
        str(request.get("method", "GET")).upper(),
        {str(k): str(v) for k, v in headers.items()} if isinstance(headers, dict) else {},
        body,
    )


async def _detach(session: CDPSession) -> None:
    with contextlib.suppress(PlaywrightError):
        await session.detach()


async def _answer(session: CDPSession, request_id: Any, verdict: str | None) -> None:
    with contextlib.suppress(PlaywrightError):
        if verdict is None:
            await session.send("Fetch.continueRequest", {"requestId": request_id})
        else:
            await session.send("Fetch.failRequest", {"requestId": request_id, "errorReason": "Aborted"})

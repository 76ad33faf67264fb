"""What the context's route cannot see, held where the tab's requests leave: DevTools on each tab.

Playwright's route (route.py) never sees a request a page sends while it unloads (``navigator.sendBeacon`` or
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
  (sockets.py) judged and is connecting to: a socket is opened only through the door. The tab's frames of
  other sites (each in a process of its own) get the same refusal before their first script runs
  (tab_devtools.py holds them at their start), so a socket opened there around the WebSocket route is refused
  too.
"""

from __future__ import annotations

import base64
import contextlib
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from .egress import Outgoing
from .tab_devtools import TabDevTools

#: Request types paused at the request stage: the ones that can carry data a script chose. Documents are the
#: route's (it knows navigations and popups); images, styles, fonts and scripts the route sees as they load.
PATTERNS = [
    {"resourceType": kind, "requestStage": "Request"}
    for kind in ("Ping", "Fetch", "XHR", "EventSource", "CSPViolationReport", "Other")
]

#: Seconds a request judged here is remembered for the route (it sees it within milliseconds, if at all).
REMEMBER = 30.0

Decide = Callable[[Page, Outgoing], Awaitable["str | None"]]
"""``await decide(page, outgoing)``: why the request may not leave, or None."""

Key = tuple[str, str, bytes]


def key(method: str, url: str, body: bytes) -> Key:
    return (method.upper(), url, body)


class TabDoor(TabDevTools):
    """A DevTools session on each tab of the run: see the module doc."""

    def __init__(self, decide: Decide) -> None:
        super().__init__()
        self.decide = decide
        self._judged: Counter[Key] = Counter()
        self._when: dict[Key, float] = {}
        self._open_sockets: Counter[tuple[Page, str]] = Counter()

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
        session = self.session_of(page)
        if session is not None:
            rules = _socket_rules(self._hosts(page))
            with contextlib.suppress(PlaywrightError):
                await session.send("Network.emulateNetworkConditionsByRule", rules)
            for path in self.children(page):
                await self.send_to(page, path, "Network.emulateNetworkConditionsByRule", rules)

    def _hosts(self, page: Page) -> list[str]:
        return [host for (p, host) in self._open_sockets if p is page]

    # -- tabs ----------------------------------------------------------------------------------------------
    async def setup(self, page: Page, session: CDPSession) -> None:
        session.on("Fetch.requestPaused", lambda event: self.spawn(self._paused(page, session, event)))
        await session.send("Network.enable")
        await session.send("Network.emulateNetworkConditionsByRule", _socket_rules([]))
        await session.send("Fetch.enable", {"patterns": PATTERNS})

    def forget(self) -> None:
        self._open_sockets.clear()

    holds_children = True

    def child_commands(self, page: Page) -> list[tuple[str, dict[str, Any]]]:
        """A frame of another site (or a worker) refuses native sockets as its tab does."""
        return [("Network.enable", {}), ("Network.emulateNetworkConditionsByRule", _socket_rules(self._hosts(page)))]

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
            self.answer(session, request_id, verdict)


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

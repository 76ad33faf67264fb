"""Redirect hops, judged before the browser follows them: the one route an effect had past the door.

The context route (route.py) sees each request once, at its first URL: Chromium follows a server redirect
without asking the route again. So a same-site link whose server answers ``302 Location: other.example/…`` took
the tab to another site unasked, and a ``307`` carried a form's POST body there. Fetching each hop from Python
and fulfilling it would make the route see them, but a fulfilled document has no network address, and
Chromium's local-network checks then treat it as public and refuse its requests to private addresses.

So the hop is caught where the browser decides it: a DevTools ``Fetch`` interception at the *response* stage on
each tab, for documents and for requests that can carry a body. A ``3xx`` answer pauses there with its
``Location``; the door's ``decide(hop)`` says whether the browser may follow (None) or why not, and the request
is continued or aborted (``Aborted``: no error page, the tab stays where it was). Every other response is let
through at once. Chromium keeps several interception clients apart, so Playwright's own routes still work.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

from playwright.async_api import CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from .tab_devtools import TabDevTools

#: What is paused at the response stage: documents (navigations of tabs and frames) and the requests a page's
#: script sends (fetch, XHR, beacons), whose 307/308 keeps method and body. Images, scripts and styles cannot
#: carry data, so they are never paused.
PATTERNS = [
    {"resourceType": kind, "requestStage": "Response"} for kind in ("Document", "Fetch", "XHR", "Ping", "Other")
]


@dataclass(frozen=True)
class Hop:
    """A redirect the browser is about to follow."""

    page: Page
    url: str
    """Where the redirect goes (absolute)."""
    came_from: str
    """The URL that answered with the redirect."""
    status: int
    method: str
    has_body: bool
    document: bool
    """A navigation (of the tab or a frame), not a script's request."""
    top: bool
    """A navigation of the tab itself."""


HopJudge = Callable[[Hop], Awaitable["str | None"]]
"""``await decide(hop)``: why the browser may not follow ``hop``, or None to let it."""


class RedirectWatch(TabDevTools):
    """Pauses every redirect of the tabs it is attached to and lets ``decide`` rule on it (see module doc)."""

    def __init__(self, decide: HopJudge) -> None:
        super().__init__()
        self.decide = decide
        self.unavailable = ""
        """Why hops are not watched (a browser without DevTools Fetch), or ""."""

    async def setup(self, page: Page, session: CDPSession) -> None:
        tree = await session.send("Page.getFrameTree")
        main = tree["frameTree"]["frame"]["id"]
        session.on("Fetch.requestPaused", lambda event: self.spawn(self._paused(page, session, main, event)))
        await session.send("Fetch.enable", {"patterns": PATTERNS})

    def failed(self, page: Page, exc: PlaywrightError) -> None:
        if not page.is_closed():
            self.unavailable = f"redirects cannot be watched in this browser ({str(exc).splitlines()[0]})"

    async def _paused(self, page: Page, session: CDPSession, main_frame: str, event: dict[str, Any]) -> None:
        """Rule on one paused response; whatever happens, the request never stays paused."""
        request_id = event.get("requestId")
        verdict: str | None = "it was not judged"
        try:
            hop = _hop(page, main_frame, event)
            verdict = await self.decide(hop) if hop is not None else None
        except Exception as exc:  # a judge that fails refuses, as at the route
            verdict = f"it could not be judged ({type(exc).__name__}: {exc})"
        finally:  # even when this handler is cancelled: the answer is sent on its own
            self.answer(session, request_id, verdict)


def _hop(page: Page, main_frame: str, event: dict[str, Any]) -> Hop | None:
    """The redirect a paused response is, or None when it is not one (most responses). Read defensively:
    whatever shape the event has, this never raises (a paused request must always be answered)."""
    status = event.get("responseStatusCode")
    if not isinstance(status, int) or not 300 <= status < 400:
        return None
    listed = event.get("responseHeaders")
    pairs = [h for h in listed if isinstance(h, dict)] if isinstance(listed, list) else []
    headers = {str(h.get("name", "")).lower(): str(h.get("value", "")) for h in pairs}
    location = headers.get("location")
    if not location:
        return None
    request = event.get("request")
    request = request if isinstance(request, dict) else {}
    came_from = str(request.get("url", ""))
    document = event.get("resourceType") == "Document"
    return Hop(
        page=page,
        url=urljoin(came_from, location),
        came_from=came_from,
        status=status,
        method=str(request.get("method", "GET")).upper(),
        has_body=bool(request.get("hasPostData") or request.get("postData")),
        document=document,
        top=document and event.get("frameId") == main_frame,
    )

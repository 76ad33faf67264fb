"""The navigation guard: where a session's tabs may go.

A run's policy decides which URLs the agent may open; this part enforces it for every top-level navigation of
the session's tabs (typed URLs, link clicks, redirects, popups) through a route on the browser context, so a
refused one is aborted before it loads and the tab stays where it was. It has a module of its own because the
route is subtle: the browser follows redirects without asking the route again, so each hop is fetched here
and judged before it is let through, and tabs of other sessions sharing the context are left to their guard.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urljoin

from playwright.async_api import BrowserContext, Route
from playwright.async_api import Error as PlaywrightError

from .report import Notices
from .tabs import Tabs

NavigationGuard = Callable[[str], "str | None"]
"""``guard(url)`` returns why a top-level navigation to ``url`` is refused, or None to let it through."""


class NavigationGate:
    """One session's guard and the route that applies it to the session's own tabs (see the module doc)."""

    def __init__(self, tabs: Tabs, notices: Notices) -> None:
        self.tabs = tabs
        self.notices = notices
        self.guard: NavigationGuard | None = None
        self.routed: BrowserContext | None = None
        """The context the route is on (it stays there when the guard is removed, and lets everything by)."""

    def refusal(self, url: str) -> str | None:
        """Why the guard refuses a navigation to ``url`` (a sentence), or None."""
        return self.guard(url) if self.guard is not None else None

    async def set(self, guard: NavigationGuard | None, context: BrowserContext | None) -> None:
        """Use ``guard`` from now on; route ``context`` (the session's current one) if it is not yet."""
        self.guard = guard
        if context is None or self.routed is context:
            return
        await context.route("**/*", self.route)
        self.routed = context

    async def adopt(self, context: BrowserContext) -> None:
        """A new context of the session (a relaunched browser) keeps the guard."""
        if self.guard is not None:
            await context.route("**/*", self.route)
            self.routed = context

    async def route(self, route: Route) -> None:
        request = route.request
        try:
            top = request.is_navigation_request() and request.frame.parent_frame is None
        except PlaywrightError:
            top = False
        guard = self.guard
        try:
            if top and guard is not None and self.tabs.tab_id(request.frame.page) < 0:
                top = False  # another session's tab (a run in its own tab): its own guard decides
            if not top or guard is None:
                await route.fallback()
                return
            url, reason = request.url, guard(request.url)
            if reason is None:
                # Redirects are followed by the browser without asking the route again: fetch this hop
                # ourselves and judge where it redirects before the browser goes there.
                response = await route.fetch(max_redirects=0)
                location = response.headers.get("location")
                if 300 <= response.status < 400 and location:
                    url = urljoin(request.url, location)
                    reason = guard(url)
                if reason is None:
                    await route.fulfill(response=response)
                    return
            self.notices.add(f"A navigation to {url} was blocked: {reason}")
            await route.abort("aborted")  # "aborted" cancels: no error page, the tab stays where it was
        except PlaywrightError:
            pass  # the page or request went away meanwhile

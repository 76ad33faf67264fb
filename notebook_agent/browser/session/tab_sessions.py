"""Sessions that share a browser with another session: tab sessions and forks.

A tab session (``browser.tab_session()``) drives tabs of its own in the root session's context: the same
cookies and logins, but its own current tab, tab list, snapshot and notices, and the tabs its pages open are
its own too. A fork (``browser.fork()``) has a context of its own in the same browser process. Each holds
things it does not own, so it closes only what it owns, and a tab session cannot relaunch the browser. Those
differences are lifecycles of their own here, so neither the root lifecycle nor the facade asks which kind of
session it is.
"""

from __future__ import annotations

import contextlib

from ...core.aio import wait_for
from .lifecycle import Lifecycle, viewport_size


class TabSessionLifecycle(Lifecycle):
    """A tab session's: the root's Playwright, browser, context and tab router; it owns only its tabs."""

    shared = True

    def __init__(self, own: Lifecycle, root: Lifecycle) -> None:
        super().__init__(own.options, own.tabs, own.reader, own.notices, own.door, router=root.router)
        self.pw, self.browser, self.context, self.owns_context = root.pw, root.browser, root.context, False
        self.path = root.path
        root.router.add(self.tabs)

    async def relaunch(self) -> None:
        raise RuntimeError("The shared browser was closed while this run used one of its tabs; start the run again.")

    async def close(self) -> None:
        """Close this session's tabs only; the browser and the other sessions' tabs stay."""
        self.notices.closing = True
        await self.door.close()
        pages = self.tabs.open_pages()
        self.router.remove(self.tabs)
        self.tabs.current = None
        self.reader.reset()
        for page in pages:
            await self.tabs.close_page(page, 10)


class ForkLifecycle(Lifecycle):
    """A fork's: the parent's Playwright and browser, and a context of its own, which is all it closes."""

    shared = True

    def __init__(self, own: Lifecycle, parent: Lifecycle) -> None:
        super().__init__(own.options, own.tabs, own.reader, own.notices, own.door, router=own.router)
        self.pw, self.browser = parent.pw, parent.browser

    async def open_context(self, parent: Lifecycle) -> None:
        """Open the fork's context in the parent's browser, with the parent's viewport and context options."""
        assert parent.browser is not None
        options = parent.options
        self.context = await parent.browser.new_context(
            viewport=viewport_size(options), **{"service_workers": "block", **options.context_options}
        )
        await self.adopt(self.context)

    async def close(self) -> None:
        """Close the fork's context only; the parent's browser stays."""
        context, self.context = self.context, None
        await self.door.close()
        self.tabs.current = None
        self.reader.reset()
        if context is not None:
            with contextlib.suppress(Exception):
                await wait_for(context.close(), 10)

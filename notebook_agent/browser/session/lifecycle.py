"""How a session gets its browser and keeps it: Playwright, the browser, the context and the router that hands
the context's tabs to their owners; opening them, opening a tab, relaunching a browser that went away,
reopening a closed or crashed tab, and closing.

The session (``browser_session.py``) decides when: ``start`` on first use, ``ensure_page`` before each use, ``close``.
This part is how, so that the facade reads as its public methods. Launch options are read from the session
(a :class:`LaunchOptions`) whenever a browser opens, so setting ``browser.headless`` before ``start`` holds.
Sessions that share another's browser (tab sessions, forks) have lifecycles of their own in ``tab_sessions.py``.
"""

from __future__ import annotations

import contextlib
from typing import Any, Protocol

from playwright.async_api import Browser, BrowserContext, Page, Playwright, ViewportSize
from playwright.async_api import Error as PlaywrightError

from ...core.aio import wait_for
from ..door.egress import NO_WEBRTC_SCRIPT
from ..door.route import Door
from ..errors import Notices, log
from ..page.page_script import tracker_script
from ..page.reader import PageReader
from ..page.tabs import TabRouter, Tabs
from .launch import open_browser, start_playwright


class LaunchOptions(Protocol):
    """What opening a browser reads from the session (its public attributes of these names)."""

    headless: bool
    viewport: tuple[int, int]
    executable_path: str | None
    cdp_url: str | None
    ws_endpoint: str | None
    args: list[str]
    track_listeners: bool
    new_process_session: bool
    context_options: dict[str, Any]
    launch_options: dict[str, Any]


def viewport_size(options: LaunchOptions) -> ViewportSize:
    return {"width": options.viewport[0], "height": options.viewport[1]}


class Lifecycle:
    """The browser objects of a session that owns them all (a root session), and their upkeep."""

    #: Whether the browser is another session's (a tab session's or a fork's): the browser thread is not its own.
    shared = False

    def __init__(
        self,
        options: LaunchOptions,
        tabs: Tabs,
        reader: PageReader,
        notices: Notices,
        door: Door,
        router: TabRouter | None = None,
    ) -> None:
        self.options = options
        self.tabs = tabs
        self.reader = reader
        self.notices = notices
        self.door = door
        self.router = router or TabRouter(tabs)
        tabs.next_id = self.router.next_id
        self.pw: Playwright | None = None
        self.browser: Browser | None = None
        self.context: BrowserContext | None = None
        self.owns_context = True
        self.path = ""
        """Which browser binary was launched ("" when connected to a running browser)."""
        self.relaunched = False
        """The tab :meth:`safe_new_page` opened came with a relaunched browser (:meth:`reopen` says so)."""

    async def start_playwright(self) -> None:
        self.pw = await start_playwright(new_session=self.options.new_process_session)

    async def stop_playwright(self) -> None:
        pw, self.pw = self.pw, None
        if pw is not None:
            with contextlib.suppress(Exception):
                await wait_for(pw.stop(), 10)

    async def open(self) -> None:
        """Launch (or connect to) the browser and take over its context."""
        assert self.pw is not None
        o = self.options
        self.browser, self.context, self.owns_context, self.path = await open_browser(
            self.pw,
            headless=o.headless,
            viewport=viewport_size(o),
            executable_path=o.executable_path,
            cdp_url=o.cdp_url,
            ws_endpoint=o.ws_endpoint,
            args=o.args,
            context_options=o.context_options,
            launch_options=o.launch_options,
        )
        await self.adopt(self.context)

    async def adopt(self, context: BrowserContext) -> None:
        """Make ``context`` the session's: page script, guard, tab routing, and a current tab."""
        await context.add_init_script(tracker_script(listeners=self.options.track_listeners))
        await context.add_init_script(NO_WEBRTC_SCRIPT)  # a channel the door cannot see (egress.py)
        await self.door.adopt(context)  # a relaunched browser keeps its door
        context.on("page", self.router.on_context_page)
        existing = [p for p in context.pages if not p.is_closed()]
        for p in existing:
            self.router.adopt(p, self.tabs)
        if existing:
            self.tabs.current = existing[-1]
        else:
            await self.new_page()

    async def new_page(self) -> Page:
        assert self.context is not None
        async with self.router.creating(self.tabs):
            page = await self.context.new_page()
            self.router.adopt(page, self.tabs)
        self.tabs.current = page
        return page

    async def safe_new_page(self) -> Page:
        """A new current tab, relaunching the browser first if its context went away."""
        try:
            return await self.new_page()
        except PlaywrightError:
            # the context went away (closed by the user): start a fresh browser
            await self.relaunch()
            self.relaunched = True
            assert self.tabs.current is not None
            return self.tabs.current

    async def relaunch(self) -> None:
        log.warning("browser disconnected; relaunching")
        old_browser, self.browser = self.browser, None
        self.context = None
        self.tabs.clear()
        self.router.reset()
        self.reader.reset()
        if old_browser is not None:
            with contextlib.suppress(Exception):
                await wait_for(old_browser.close(), 5)
        try:
            await self.open()
        except PlaywrightError:
            # the driver itself died: start Playwright again
            await self.stop_playwright()
            await self.start_playwright()
            await self.open()

    async def relaunched_if_gone(self) -> bool:
        """Relaunch a browser that went away (closed, or its process died), with a notice; True if it did."""
        if self.browser is not None and self.browser.is_connected():
            return False
        await self.relaunch()
        self.notices.add("The browser was closed; it was relaunched at about:blank.")
        return True

    async def reopen(self, page: Page | None) -> Page:
        """``page`` if it is usable, else its replacement, with a notice: the last other open tab when it was
        closed, else a new tab (a crashed page is closed and reopened at about:blank)."""
        tabs, notice = self.tabs, self.notices.add
        if page is not None and page in tabs.crashed:
            tabs.crashed.discard(page)
            self.reader.forget()
            tab = tabs.tab_id(page)
            await tabs.close_page(page)
            tabs.current = None
            new = await self.safe_new_page()
            notice(f"The page in tab {tab} crashed; it was reopened at about:blank (tab {tabs.tab_id(new)}).")
            return new
        if page is None or page.is_closed():
            self.reader.forget()
            remaining = tabs.open_pages()
            if remaining:
                tabs.current = remaining[-1]
                notice(
                    f"Tab {tabs.tab_id(page) if page else '?'} was closed; tab {tabs.tab_id(tabs.current)} "
                    f"({tabs.current.url}) is now the current tab."
                )
                return tabs.current
            new = await self.safe_new_page()
            if self.relaunched:
                self.relaunched = False
                notice("The browser was closed; it was relaunched at about:blank.")
            else:
                notice("The browser tab was closed; a new tab was opened at about:blank.")
            return new
        return page

    async def close(self) -> None:
        """Close the browser (or disconnect from it, closing the context only if it was ours) and stop
        Playwright."""
        self.notices.closing = True
        browser, self.browser = self.browser, None
        context, self.context = self.context, None
        self.tabs.current = None
        self.reader.reset()
        try:
            if context is not None and self.owns_context and (self.options.cdp_url or self.options.ws_endpoint):
                with contextlib.suppress(Exception):
                    await wait_for(context.close(), 10)
            if browser is not None:
                with contextlib.suppress(Exception):
                    await wait_for(browser.close(), 10)
        finally:
            await self.stop_playwright()

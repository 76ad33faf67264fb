"""``ActionWatch``: notices what an action caused (a navigation of the current tab, new tabs) and waits for
it just long enough, so an action's result can say "the page navigated to …" and the next snapshot reads the
new document rather than the old one."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Page, Request

from ...core.abort import AbortSignal
from ...core.aio import wait_for

NEW_TAB_NOTE = re.compile(r"It opened a new tab \(tab \d+: .*\) and is now the current tab\.")
"""How an action's result says it opened a tab the run then acted in (:meth:`ActionWatch.describe`): a script
replaying the action waits for that popup."""

TabOf = Callable[[Page], tuple[int, bool]]
"""For a page: its tab id and whether it is the current tab."""


class ActionWatch:
    """Listens on one page while an action runs. See :meth:`settle` and :meth:`describe`."""

    def __init__(self, page: Page, tab_of: TabOf) -> None:
        self.page = page
        self.tab_of = tab_of
        self.start_url = page.url
        self.nav_started = False
        self.committed = False
        self.new_pages: list[Page] = []
        self._event = asyncio.Event()
        self._nav_requests: list[Request] = []
        self._nav_failed = False
        self._changed = asyncio.Event()  # a navigation of the main frame committed or failed
        page.on("request", self._on_request)
        page.on("framenavigated", self._on_navigated)
        page.on("requestfailed", self._on_failed)

    def _on_request(self, request: Request) -> None:
        try:
            if request.is_navigation_request() and request.frame == self.page.main_frame:
                self.nav_started = True
                if request.redirected_from in self._nav_requests:  # a redirect: one navigation, its new hop
                    self._nav_requests.remove(request.redirected_from)
                self._nav_requests.append(request)
                self._event.set()
        except PlaywrightError:
            pass

    def _on_failed(self, request: Request) -> None:
        """A navigation that failed (refused at the network door, blocked, a dead host) never commits: stop
        waiting for it, unless another one is still on its way."""
        if request in self._nav_requests:
            self._nav_requests.remove(request)
            self._nav_failed = True
            self._changed.set()

    def _on_navigated(self, frame: Frame) -> None:
        if frame == self.page.main_frame:
            self.committed = True
            self._event.set()
            self._changed.set()

    @property
    def saw_anything(self) -> bool:
        """A navigation of this page or a new tab has been seen since the watch began."""
        return self._event.is_set()

    def on_new_page(self, page: Page) -> None:
        self.new_pages.append(page)
        self._event.set()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.page.remove_listener("request", self._on_request)
            self.page.remove_listener("framenavigated", self._on_navigated)
            self.page.remove_listener("requestfailed", self._on_failed)

    async def settle(
        self,
        signal: AbortSignal | None = None,
        grace: float = 0.1,
        timeout: float = 5.0,
        expect_popup: bool = False,
        may_navigate: bool = True,
    ) -> None:
        """Wait up to ``grace`` seconds for a navigation or tab to start; if one did, wait (bounded by
        ``timeout``) until its document is parsed. No fixed sleep when something happened at once.
        ``expect_popup`` (a target=_blank link) waits up to ``timeout`` for the new tab instead of ``grace``.

        ``may_navigate=False`` says the action cannot start a navigation (the caller checked the element, and
        that check was a round trip to the page after the action, so a navigation the action started at once
        has already been reported here): the grace is skipped, which is most of a plain click's cost. A
        navigation seen anyway is still waited for."""

        async def run() -> None:
            if not may_navigate and not self._event.is_set():
                return
            if not self._event.is_set():
                with contextlib.suppress(asyncio.TimeoutError):
                    await wait_for(self._event.wait(), min(timeout, 3.0) if expect_popup else grace)
            if self.nav_started and not self.committed:
                await self._commit_or_end(timeout)
            if self.committed and not self.page.is_closed():
                with contextlib.suppress(PlaywrightError):
                    await self.page.wait_for_load_state("domcontentloaded", timeout=timeout * 1000)
            for p in self.new_pages:
                with contextlib.suppress(PlaywrightError):
                    await p.wait_for_load_state("domcontentloaded", timeout=timeout * 1000)

        if signal is not None:
            await signal.race(run())
        else:
            await run()

    async def _commit_or_end(self, timeout: float) -> None:
        """Wait (at most ``timeout``) for the main frame's navigation to commit. One that failed (refused at the
        network door, blocked, a dead host) never will: the wait ends when every navigation seen has failed."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self.committed and (self._nav_requests or not self._nav_failed):
            left = deadline - loop.time()
            if left <= 0:
                return
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await wait_for(self._changed.wait(), left)

    def describe(self) -> str:
        """Sentences for the action result, e.g. "The page navigated to …"."""
        out = []
        if not self.page.is_closed() and (self.committed or self.nav_started) and self.page.url != self.start_url:
            out.append(f"The page navigated to {self.page.url}.")
        elif self.committed and self.nav_started and not self.page.is_closed():
            out.append("The page reloaded.")
        for p in self.new_pages:
            if p.is_closed():
                continue
            tab, current = self.tab_of(p)
            suffix = " and is now the current tab" if current else ""
            out.append(f"It opened a new tab (tab {tab}: {p.url}){suffix}.")
        return " ".join(out)

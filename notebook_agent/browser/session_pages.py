"""The page side of :class:`~.session.BrowserSession`: its tabs, downloads, reading a tab and where navigation
may go.

One job: what a session does with the pages it has once it has them: listing, opening, switching and closing
tabs; the downloads they make; opening a URL typed the way people type it; the indexed snapshot, element
resolution and screenshots (the mechanics are :class:`~.reader.PageReader`'s); and the navigation guard
(:class:`~.guard.NavigationGate`). The facade (``session.py``) inherits it, so these stay methods of the
session, and keeps in its own class when the browser starts, is replaced and closes (``ensure_page``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from playwright.async_api import ElementHandle, Frame, Page
from playwright.async_api import Error as PlaywrightError

from .guard import NavigationGate, NavigationGuard
from .lifecycle import Lifecycle
from .reader import SENSITIVE_FIELDS, PageReader
from .report import Notices
from .snapshot import FULL_PAGE_MAX_CHARS, ElementInfo, Snapshot, TabInfo
from .tabs import Tabs
from .threaded import on_browser_loop
from .urls import URLError, navigation_error, normalize_url


class SessionPages:
    """Tabs, downloads, snapshots, screenshots and the navigation guard of a :class:`~.session.BrowserSession`,
    over the parts it composes (set by its ``__init__``)."""

    _tabs: Tabs
    _reader: PageReader
    _notices: Notices
    _gate: NavigationGate
    _life: Lifecycle
    navigation_timeout: float

    async def ensure_page(self) -> Page:
        """The current page, replacing a closed or crashed browser/tab first: the session's (``session.py``)."""
        raise NotImplementedError

    # -- tabs -----------------------------------------------------------------------------------------------
    def tab_id(self, page: Page) -> int:
        return self._tabs.tab_id(page)

    @on_browser_loop
    async def tab_infos(self, current_title: str | None = None) -> list[TabInfo]:
        """Open tabs in opening order; ``current_title`` spares a round trip when the caller knows it."""
        return await self._tabs.infos(current_title)

    @on_browser_loop
    async def new_tab(self, url: str | None = None) -> Page:
        """Open a tab (optionally at ``url``) and make it current; no "new tab" notice, since the caller knows."""
        await self.ensure_page()
        page = await self._life.new_page()
        if url:
            await page.goto(url, wait_until="domcontentloaded", timeout=self.navigation_timeout * 1000)
        return page

    @property
    def popup_mark(self) -> frozenset[Page]:
        """A mark for :meth:`close_popups`: the tabs open now."""
        return frozenset(self._tabs.open_pages())

    @on_browser_loop
    async def close_popups(self, mark: frozenset[Page]) -> int:
        """Close every tab opened since ``mark`` (see :attr:`popup_mark`) except the current one: a run's
        popups do not outlive it. Returns how many were closed."""
        return await self._tabs.close_since(mark)

    @property
    def downloads_dir(self) -> Path:
        """Where downloads are saved (``agent_downloads`` under the working folder unless set)."""
        return self._tabs.downloads_dir

    @downloads_dir.setter
    def downloads_dir(self, folder: str | Path) -> None:
        self._tabs.downloads_dir = Path(folder)

    @property
    def downloads(self) -> list[Path]:
        """Files the pages downloaded, where they were saved."""
        return list(self._tabs.downloads)

    @property
    def download_filter(self) -> Callable[[str, str], str | None] | None:
        """Decides each download this session's tabs start: given (file name, URL), a reason to cancel it, or
        None to save it. None (the default) saves every download. A run sets it from its approval policy."""
        return self._tabs.download_filter

    @download_filter.setter
    def download_filter(self, decide: Callable[[str, str], str | None] | None) -> None:
        self._tabs.download_filter = decide

    @on_browser_loop
    async def open(self, url: str, wait_until: Literal["domcontentloaded", "load"] = "domcontentloaded") -> Page:
        """Open ``url`` in the current tab, read the way people type it (``localhost:8000``, ``example.com``,
        a file path; see :func:`~.urls.normalize_url`). Raises :class:`~.urls.URLError` saying, in a sentence,
        why the URL is not one or why the page could not be opened."""
        target = normalize_url(url)
        page = await self.ensure_page()
        try:
            await page.goto(target, wait_until=wait_until, timeout=self.navigation_timeout * 1000)
        except PlaywrightError as exc:
            raise URLError(navigation_error(target, exc, self.navigation_timeout)) from None
        return page

    @on_browser_loop
    async def switch_tab(self, tab_id: int) -> Page:
        """Make tab ``tab_id`` current; raises :class:`ActionError` naming the open tabs if there is none."""
        return await self._tabs.switch(tab_id)

    # -- reading the page -----------------------------------------------------------------------------------
    @on_browser_loop
    async def snapshot(
        self,
        full_page: bool = False,
        max_elements: int | None = None,
        max_chars: int | None = None,
    ) -> Snapshot:
        """Read the current tab: URL, title, tabs, scroll position, indexed elements and page text.

        Viewport mode (default) lists what is on screen with "N pixels above/below" hints; ``full_page`` lists
        the whole page. ``max_elements``/``max_chars`` cap the text, keeping what is nearest the viewport and
        saying what was cut; a full-page snapshot given neither is capped at ``FULL_PAGE_MAX_CHARS`` (pass a
        larger ``max_chars`` for more). Indices are valid until the next snapshot.
        """
        if full_page and max_chars is None and max_elements is None:
            max_chars = FULL_PAGE_MAX_CHARS
        page = await self.ensure_page()
        return await self._reader.snapshot(
            page,
            tabs=self._tabs.infos,
            notices=self._notices.take(),
            full_page=full_page,
            max_elements=max_elements,
            max_chars=max_chars,
            load_timeout=self.navigation_timeout,
        )

    @on_browser_loop
    async def resolve(self, index: int) -> tuple[ElementHandle, ElementInfo, Frame, int]:
        """Element ``[index]`` of the latest snapshot as a live handle, or :class:`ActionError` saying why not."""
        return await self._reader.resolve(index, self._tabs.current)

    @on_browser_loop
    async def screenshot(
        self,
        highlight: bool = False,
        format: Literal["png", "jpeg"] = "png",
        full_page: bool = False,
        quality: int | None = None,
        mask_sensitive: bool = True,
    ) -> bytes:
        """A screenshot of the current tab. ``highlight`` draws each indexed element's box and index (taking a
        snapshot first if there is none for this tab), then removes the overlay again. Fields that look
        sensitive (passwords, one-time codes, card numbers, tokens, keys, secrets) are painted over unless
        ``mask_sensitive=False``, so a typed secret never lands in a picture."""
        page = await self.ensure_page()
        if highlight and (self._reader.last_snapshot is None or self._reader.refs_page is not page):
            await self.snapshot()
        mask = [page.locator(SENSITIVE_FIELDS)] if mask_sensitive else None
        return await self._reader.screenshot(
            page, highlight=highlight, format=format, full_page=full_page, quality=quality, mask=mask
        )

    @property
    def last_snapshot(self) -> Snapshot | None:
        return self._reader.last_snapshot

    @property
    def seconds_since_snapshot(self) -> float | None:
        if self._reader.last_time is None:
            return None
        return time.monotonic() - self._reader.last_time

    def element(self, index: int) -> ElementInfo | None:
        """The latest snapshot's element ``[index]`` (tag, text, attributes, box), or None."""
        snap = self._reader.last_snapshot
        return None if snap is None else snap.elements.get(index)

    # -- where navigation may go (see guard.py) ------------------------------------------------------------
    def navigation_refusal(self, url: str) -> str | None:
        """Why the guard refuses a navigation to ``url`` (a sentence), or None."""
        return self._gate.refusal(url)

    @on_browser_loop
    async def set_navigation_guard(self, guard: NavigationGuard | None) -> None:
        """Check every top-level navigation of every tab (typed URLs, link clicks, redirects, popups) with
        ``guard(url) -> reason or None``. A refused one is aborted before it loads, so the page stays where it
        was, and a notice says so. None removes the guard. Subframes are not checked (embedded widgets)."""
        await self._gate.set(guard, self._life.context)

"""The page side of :class:`~.session.BrowserSession`: its tabs, downloads, reading a tab and where navigation
may go.

One job: what a session does with the pages it has once it has them: listing, opening, switching and closing
tabs; the downloads they make; opening a URL typed the way people type it; the indexed snapshot, element
resolution and screenshots (the mechanics are :class:`~.reader.PageReader`'s); and the navigation guard
(:class:`~.guard.NavigationGate`). The facade (``session.py``) inherits it, so these stay methods of the
session, and keeps in its own class when the browser starts, is replaced and closes (``ensure_page``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

from playwright.async_api import ElementHandle, Frame, Page, Response
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from ..door.route import EffectJudge, NavigationGate, NavigationGuard
from ..errors import BrowserTimeoutError, Notices, short
from ..page.hung_tabs import HungPages, is_responsive
from ..page.mask import HiddenValues, current_values, masked_capture, remember_hidden
from ..page.page_script import op_selector
from ..page.prefetch import Key, Prefetch
from ..page.reader import SENSITIVE_FIELDS, PageReader, find_table, index_in_snapshot
from ..page.snapshot import FULL_PAGE_MAX_CHARS, ElementInfo, Snapshot, TabInfo
from ..page.tabs import Tabs
from ..urls import URLError, navigation_error, normalize_url
from .browser_thread import on_browser_loop
from .lifecycle import Lifecycle


def _address(url: str) -> str:
    """``url`` without its query and fragment (a page may rewrite those all the time)."""
    return url.split("#", 1)[0].split("?", 1)[0]


class SessionPages:
    """Tabs, downloads, snapshots, screenshots and the navigation guard of a :class:`~.session.BrowserSession`,
    over the parts it composes (set by its ``__init__``)."""

    _tabs: Tabs
    _reader: PageReader
    _prefetch: Prefetch
    _hung: HungPages
    _notices: Notices
    _gate: NavigationGate
    _life: Lifecycle
    navigation_timeout: float
    _hidden: HiddenValues | None = None

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

    @property
    def downloads_started(self) -> int:
        """How many downloads this session's tabs started so far (an action compares it before and after)."""
        return self._tabs.downloads_started

    @on_browser_loop
    async def downloads_settled(self, started: int) -> None:
        """Wait until a download started after ``downloads_started`` was ``started`` was saved or cancelled
        (its notice is then pending), within the navigation timeout."""
        await self._tabs.downloads_settled(started, self.navigation_timeout)

    @on_browser_loop
    async def open(self, url: str, wait_until: Literal["domcontentloaded", "load"] = "domcontentloaded") -> Page:
        """Open ``url`` in the current tab, read the way people type it (``localhost:8000``, ``example.com``,
        a file path; see :func:`~.urls.normalize_url`). Raises :class:`~.urls.URLError` saying, in a sentence,
        why the URL is not one or why the page could not be opened."""
        target = normalize_url(url)
        try:
            await self.navigate(target, wait_until)
        except PlaywrightError as exc:
            raise URLError(navigation_error(target, exc, self.navigation_timeout)) from None
        return await self.ensure_page()

    @on_browser_loop
    async def navigate(
        self, url: str, wait_until: Literal["domcontentloaded", "load"] = "domcontentloaded"
    ) -> Response | None:
        """``page.goto(url)`` in the current tab, bounded by the navigation timeout, that a misbehaving page
        left there cannot stop: when the navigation fails while the tab is still at the old page (a page
        reloading itself forever interrupts every navigation; one flooding its history or never yielding does
        not let it start), that tab is closed and ``url`` opened in a new one, with a notice. When the new page
        itself does not finish loading, the tab is checked before its next use. Raises Playwright's error."""
        page = await self.ensure_page()
        before = page.url
        try:
            response = await page.goto(url, wait_until=wait_until, timeout=self.navigation_timeout * 1000)
            if page.url != before or _address(url) == _address(before) or before == "about:blank":
                return response
            # the old page's own reload, already on its way, came back over the new one
        except PlaywrightError as exc:
            interrupted = "interrupted by another navigation" in str(exc)
            if page.is_closed() or not (interrupted or isinstance(exc, PlaywrightTimeoutError)):
                raise
            if _address(page.url) == _address(url):  # it got there: the new page is the slow one
                self._hung.mark_suspect()  # checked before its next use
                raise
            if not interrupted and await is_responsive(page):  # the old page is fine: the site is slow
                raise
        await self._hung.replace(page, None, self._life.safe_new_page)
        page = await self.ensure_page()
        self._notices.add(
            f"The page at {short(before, 100)} kept the tab from opening {short(url, 100)} (it reloads itself or "
            "does not answer), so that tab was closed and the address opened in a new tab."
        )
        return await page.goto(url, wait_until=wait_until, timeout=self.navigation_timeout * 1000)

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
        self._prefetch.drop()
        page = await self.ensure_page()
        try:
            return await self._reader.snapshot(
                page,
                tabs=self._tabs.infos,
                notices=self._notices.take(),
                full_page=full_page,
                max_elements=max_elements,
                max_chars=max_chars,
                load_timeout=self.navigation_timeout,
            )
        except BrowserTimeoutError:
            self._hung.mark_suspect()  # checked (and replaced if it still does not answer) before its next use
            raise

    @on_browser_loop
    async def resolve(self, index: int) -> tuple[ElementHandle, ElementInfo, Frame, int]:
        """Element ``[index]`` of the latest snapshot as a live handle, or :class:`ActionError` saying why not."""
        found = self._prefetch.take(self._prefetch_key(index))
        if found is not None:
            return await found  # type: ignore[no-any-return]
        return await self._reader.resolve(index, self._tabs.current)

    @on_browser_loop
    async def resolve_table(self, name: str) -> tuple[ElementHandle, Frame]:
        """Table ``name`` ("T1") of the latest snapshot as a live handle, or :class:`ActionError` saying why not."""
        return await find_table(self._reader, name, self._tabs.current)

    @on_browser_loop
    async def prefetch(self, index: int) -> None:
        """Start finding element ``[index]`` for the action that follows (it only reads the page): the
        :meth:`resolve` of that index on this snapshot and tab takes the handle instead of asking again. A
        snapshot, or :meth:`drop_prefetch`, forgets it (see prefetch.py)."""
        if self._reader.last_snapshot is not None:
            self._prefetch.start(self._prefetch_key(index), self._reader.resolve(index, self._tabs.current))

    @on_browser_loop
    async def drop_prefetch(self) -> None:
        """Forget an element found ahead: the page may have changed since (a person was asked meanwhile)."""
        self._prefetch.drop()

    def _prefetch_key(self, index: int) -> Key:
        snap = self._reader.last_snapshot
        return (snap.snapshot_id if snap is not None else -1, index, self._tabs.current)

    def reference(self, index: int) -> tuple[Frame, str]:
        """Element ``[index]`` of the latest snapshot as its frame and a selector that answers with it there (no
        round trip, nothing checked live), or :class:`ActionError` saying why there is none."""
        frame, arg = self._reader.reference(index, self._tabs.current)
        return frame, op_selector(frame, arg)

    @on_browser_loop
    async def index_of(self, element: ElementHandle, frame: Frame) -> int | None:
        """The index ``element`` (of ``frame``) has in the latest snapshot, or None (the reverse of ``resolve``)."""
        return await index_in_snapshot(self._reader, element, frame)

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
        ``mask_sensitive=False``, so a typed secret never lands in a picture; so is every text, field value or
        placeholder showing one of the :attr:`hidden_values`, in every frame. Raises
        :class:`~.mask.ScreenshotWithheld` when those could not be guaranteed hidden (no picture is better
        than one showing a secret)."""
        page = await self.ensure_page()
        if highlight and (self._reader.last_snapshot is None or self._reader.refs_page is not page):
            await self.snapshot()
        return await masked_capture(
            page,
            current_values(self._hidden),
            lambda: self._reader.screenshot(
                page, highlight=highlight, format=format, full_page=full_page, quality=quality
            ),
            selector=SENSITIVE_FIELDS if mask_sensitive else "",
        )

    # -- values no picture may show (see mask.py) ---------------------------------------------------------
    @property
    def hidden_values(self) -> tuple[str, ...]:
        """The values every screenshot of this session paints over (longest first); see :meth:`hide_values`."""
        return tuple(current_values(self._hidden))

    def hide_values(self, values: HiddenValues | None) -> HiddenValues | None:
        """Paint over ``values`` (strings, or a function returning them, read before each screenshot) in
        every screenshot: the view's, the model's and approval crops. None hides nothing. Returns what was
        hidden before, so a run can put it back (see :meth:`hiding`)."""
        previous, self._hidden = self._hidden, values
        remember_hidden(self, values)  # for the whole context: a trace of it could show them
        return previous

    @contextlib.contextmanager
    def hiding(self, values: HiddenValues | None) -> Iterator[None]:
        """:meth:`hide_values` for the length of a ``with`` block, then the previous values again."""
        previous = self.hide_values(values)
        try:
            yield
        finally:
            self._hidden = previous

    # -- where navigation may go (see guard.py) ------------------------------------------------------------
    def navigation_refusal(self, url: str) -> str | None:
        """Why the guard refuses a navigation to ``url`` (a sentence), or None."""
        return self._gate.refusal(url)

    @on_browser_loop
    async def set_navigation_guard(self, guard: NavigationGuard | None) -> None:
        """Check every navigation of every tab and frame (typed URLs, link clicks, redirects, popups,
        iframes) with ``guard(url) -> reason or None``. A refused one is aborted before it loads, so the page
        stays where it was, and a notice says so. None removes the guard."""
        await self._gate.set(guard, self._life.context)

    async def set_effect_judge(self, judge: EffectJudge | None) -> None:
        """Put every :class:`~.guard.Effect` of this session's tabs, popups and frames (a navigation or popup
        to another site, data sent to another site) to ``await judge(effect) -> reason or None`` before the
        request leaves; it is held meanwhile (a person may be asked). None removes the judge. The judge runs on
        the caller's loop, whichever thread the browser runs on. See guard.py."""
        await self._install_judge(judge, asyncio.get_running_loop())

    @on_browser_loop
    async def _install_judge(self, judge: EffectJudge | None, loop: asyncio.AbstractEventLoop) -> None:
        await self._gate.set_judge(judge, self._life.context, loop)

    @property
    def effects_asked(self) -> int:
        """How many effects were put to the judge so far (an action compares it before and after)."""
        return self._gate.asked

    @on_browser_loop
    async def effects_settled(self) -> None:
        """Wait until no effect is held waiting for the judge."""
        await self._gate.settled()

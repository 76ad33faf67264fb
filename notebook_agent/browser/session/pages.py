"""The page side of :class:`~notebook_agent.browser.session.browser_session.BrowserSession`: its tabs, the
downloads they make, opening a URL typed the way people type it, and its door's settings.

One job: what a session does with the pages it has once it has them: listing, opening, switching and closing
tabs; the downloads they make; opening a URL (:func:`~notebook_agent.browser.urls.normalize_url`); and what the
door (:class:`~notebook_agent.browser.door.route.Door`) is told: the domain rule, the judge of effects, the secrets
no request may carry. Reading a tab is ``reading.py``'s. The session inherits it, so these stay methods of the
session, and keeps in its own class when the browser starts, is replaced and closes (``ensure_page``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page, Response
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from ..door.route import DomainRule, Door, EffectJudge
from ..errors import Notices, short
from ..page.hung_tabs import HungPages, is_responsive
from ..page.mask import HiddenValues
from ..page.prefetch import Prefetch
from ..page.reader import PageReader
from ..page.snapshot import TabInfo
from ..page.tabs import Tabs
from ..urls import URLError, navigation_error, normalize_url
from .browser_thread import on_browser_loop
from .lifecycle import Lifecycle


def _address(url: str) -> str:
    """``url`` without its query and fragment (a page may rewrite those all the time)."""
    return url.split("#", 1)[0].split("?", 1)[0]


class SessionPages:
    """Tabs, downloads, navigation and the door's settings of a session, over the parts it composes (set by its
    ``__init__``)."""

    _tabs: Tabs
    _reader: PageReader
    _prefetch: Prefetch
    _hung: HungPages
    _notices: Notices
    _door: Door
    _life: Lifecycle
    navigation_timeout: float
    _hidden: HiddenValues | None = None

    async def ensure_page(self) -> Page:
        """The current page, replacing a closed or crashed browser/tab first: the session's."""
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
    async def close_popups(self, mark: frozenset[Page], *, current_too: bool = False) -> int:
        """Close every tab opened since ``mark`` (see :attr:`popup_mark`) except the current one (``current_too``:
        that one as well, and the newest tab of ``mark`` is current again): a run's popups do not outlive it.
        Returns how many were closed."""
        return await self._tabs.close_since(mark, current_too=current_too)

    @property
    def popup_cap(self) -> int:
        """How many tabs the site may have open at once before further ones are closed as they come."""
        return self._tabs.POPUP_MAX

    @property
    def popups_refused(self) -> int:
        """How many tabs the site opened beyond the cap (``Tabs.POPUP_MAX`` open at once), each closed as it
        came."""
        return self._tabs.popups_refused

    @property
    def popup_storms(self) -> int:
        """How many popup storms (more tabs than the cap, then every tab until the site stops) the site made."""
        return self._tabs.storms

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
        """Open ``url`` in the current tab, read the way people type it (``localhost:8000``, ``example.com``, a file
        path; see :func:`~notebook_agent.browser.urls.normalize_url`). Raises
        :class:`~notebook_agent.browser.urls.URLError` saying, in a sentence, why the URL is not one or why the page
        could not be opened."""
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
        """Make tab ``tab_id`` current; raises :class:`~notebook_agent.browser.errors.ActionError` naming the open
        tabs if there is none."""
        return await self._tabs.switch(tab_id)

    # -- the door: where navigation may go, what may leave (see browser/door/route.py) ---------------------
    def navigation_refusal(self, url: str) -> str | None:
        """Why the domain rule refuses a navigation to ``url`` (a sentence), or None."""
        return self._door.refusal(url)

    @on_browser_loop
    async def set_domain_rule(self, rule: DomainRule | None) -> None:
        """Check every navigation of every tab and frame (typed URLs, link clicks, redirects, popups,
        iframes) with ``rule(url) -> reason or None``. A refused one is aborted before it loads, so the page
        stays where it was, and a notice says so. None removes the rule."""
        await self._door.set(rule, self._life.context)

    async def set_effect_judge(self, judge: EffectJudge | None) -> None:
        """Put every :class:`~notebook_agent.browser.door.route.Effect` of this session's tabs, popups and frames
        (a navigation or popup to another site, data sent to another site) to ``await judge(effect) -> reason or
        None`` before the request leaves; it is held meanwhile (a person may be asked). None removes the judge.
        The judge runs on the caller's loop, whichever thread the browser runs on."""
        await self._install_judge(judge, asyncio.get_running_loop())

    @on_browser_loop
    async def _install_judge(self, judge: EffectJudge | None, loop: asyncio.AbstractEventLoop) -> None:
        await self._door.set_judge(judge, self._life.context, loop)

    @property
    def effects_asked(self) -> int:
        """How many effects were put to the judge so far (an action compares it before and after)."""
        return self._door.asked

    @on_browser_loop
    async def effects_settled(self) -> None:
        """Wait until no effect is held waiting for the judge."""
        await self._door.settled()

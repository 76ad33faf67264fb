"""Hung pages: a tab whose script never finishes (``while(true){}``) blocks every later call on that tab.

An action cut off mid-flight (a timeout, an abort) marks the session suspect; before the page is used again it
is asked to evaluate ``0``, and a page that does not answer is closed without its unload handlers (they could
hang too) and replaced by a fresh tab, with a notice. Apart from the session's lifecycle because it is a
judgement about a live page, not about the browser: the lifecycle only lends it a way to open the new tab.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from ...core.aio import wait_for
from ..errors import Notices
from .reader import PageReader
from .tabs import Tabs

NewPage = Callable[[], Awaitable[Page]]
"""Opens a tab and makes it current (relaunching the browser if its context went away)."""


async def is_responsive(page: Page | None, timeout: float = 2.0) -> bool:
    """Whether the page's main thread still runs scripts (a page stuck in ``while(true){}`` does not)."""
    if page is None or page.is_closed():
        return True
    return await _answers(page, timeout) is not False  # navigating or closed (None): not hung


async def _answers(page: Page, timeout: float) -> bool | None:
    """One probe: True when the page ran a script in time, False when it did not, None when its document was
    going away (a navigation, or the tab closing) and nothing can be said yet."""
    try:
        await wait_for(page.evaluate("0"), timeout)
        return True
    except TimeoutError:
        return False
    except PlaywrightError:
        return None


async def settles(page: Page, timeout: float = 2.0, tries: int = 3) -> bool:
    """Whether the page answers and stays on its document: False for one stuck in a script (it does not answer
    within ``timeout``) and for one reloading or redirecting itself forever (its document is replaced at every
    one of ``tries`` attempts, 0.2 s apart). A page that is merely loading settles on the next try."""
    if page.is_closed():
        return True
    for _ in range(tries):
        answered = await _answers(page, timeout)
        if answered is not None:
            return answered
        if page.is_closed():
            return True
        await asyncio.sleep(0.2)  # navigating: ask the next document
    return False


class HungPages:
    """Suspicion after a cut-off action, the check before the next use, and replacing a hung tab."""

    def __init__(self, tabs: Tabs, reader: PageReader, notices: Notices) -> None:
        self.tabs = tabs
        self.reader = reader
        self.notices = notices
        self.suspect = False

    def mark_suspect(self) -> None:
        self.suspect = True

    async def replaced(self, page: Page, new_page: NewPage) -> bool:
        """If the session is suspect, check ``page`` once and replace it when it does not answer or keeps
        reloading (with a notice); True if it was replaced."""
        if not self.suspect or page.is_closed():
            return False
        self.suspect = False
        if await settles(page):
            return False
        await self.replace(page, f"The page at {page.url} stopped responding or kept reloading", new_page)
        return True

    async def replace_current(self, new_page: NewPage) -> str:
        """Replace the current tab (no notice: the caller says what happened); the URL it was at."""
        page = self.tabs.current
        if page is None:
            return "about:blank"
        url = page.url
        await self.replace(page, None, new_page)
        return url

    async def replace(self, page: Page, notice: str | None, new_page: NewPage) -> None:
        tab = self.tabs.tab_id(page)
        self.reader.forget()
        # a page reloading itself forever may never confirm it closed: do not wait long for it
        await self.tabs.close_page(page, 2)
        self.tabs.current = None
        new = await new_page()
        if notice:
            self.notices.add(
                f"{notice} (a script on it never finished, or it navigated again and again); tab {tab} was closed "
                f"and tab {self.tabs.tab_id(new)} opened at about:blank."
            )

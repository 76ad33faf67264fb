"""Reading the current page for code outside the browser layer (an evaluation's checks, the notebook's summary of
the browser), so that Playwright is called from ``browser/`` only.

Each function runs where the page lives: in place normally, on the browser thread in threaded mode (through
:meth:`BrowserSession.call <notebook_agent.browser.session.browser_session.BrowserSession.call>`,
which also runs in place when already called there).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from playwright.async_api import Error as PlaywrightError

if TYPE_CHECKING:
    from .browser_session import BrowserSession


async def page_check(browser: BrowserSession, js: str) -> Any:
    """Call the JavaScript function ``js`` (its source, e.g. ``"() => document.title.length > 0"``) with no
    arguments in the current page and return its result (JSON-like values come back as Python ones). An error
    thrown in the page raises here."""

    async def run() -> Any:
        return await browser.page.evaluate(f"({js})()")

    return await browser.call(run)


async def page_title(browser: BrowserSession) -> str:
    """The current page's title: "" when it has none, or cannot be read right now (it is navigating)."""

    async def run() -> str:
        try:
            return await browser.page.title()
        except PlaywrightError:
            return ""

    return await browser.call(run)


def page_url(browser: BrowserSession) -> str:
    """The current page's URL."""
    return browser.page.url


async def page_text(browser: BrowserSession) -> str:
    """The text a person sees on the current page (``document.body``'s rendered text)."""

    async def run() -> str:
        return await browser.page.inner_text("body")

    return await browser.call(run)

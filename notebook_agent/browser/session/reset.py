"""Making a used browser context fit for the next row of a map: what one row left must not reach the next.

A pooled context (agent/batch/pool.py) is cleaned between rows instead of being closed and opened again: its extra
tabs closed, the storage of the page it ended on cleared (local and session storage), its cookies cleared, and
its tab sent to ``about:blank``. What cannot be cleaned this way (storage of other origins the row visited, a
service worker, the cache) is why a pool also retires a context after a number of rows.

The cleaning sits between every two rows, so it is kept to what it needs: the storage is cleared by the page
script (the isolated world the snapshot was read in, already there, where a page that replaced
``Storage.prototype.clear`` cannot keep its data), and the navigation to ``about:blank`` is waited for until it
commits (the row's document is gone then; the blank page's own load events change nothing); the cookies are
cleared after it, so none its unload handlers set stays.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from ...core.aio import wait_for
from ..page.page_script import call_page_api

if TYPE_CHECKING:
    from .browser_session import BrowserSession

CLEAR_STORAGE = "() => { try { localStorage.clear(); sessionStorage.clear(); } catch (e) {} }"

#: Seconds the page script gets to clear the storage before the page's own world is asked instead.
CLEAR_TIMEOUT = 2.0


async def reset_context(session: BrowserSession) -> bool:
    """Clean ``session`` (a fork: a context of its own) for another run; False when it could not be (then it
    should be closed, not reused)."""

    async def run() -> bool:
        page = await session.ensure_page()
        context = page.context
        for other in list(context.pages):
            if other is not page:
                with contextlib.suppress(PlaywrightError):
                    await other.close()
        await _clear_storage(page)
        await page.goto("about:blank", wait_until="commit")
        await context.clear_cookies()  # after the row's document is gone: its unload handlers set none that stay
        return True

    try:
        return await session.call(run)
    except (PlaywrightError, RuntimeError, TimeoutError):
        return False


async def _clear_storage(page: Page) -> None:
    """Empty the local and session storage of ``page``'s document: through the page script, or, where it cannot
    answer (a document older than it, a page too busy), in the page's own world as before."""
    try:
        if await wait_for(call_page_api(page.main_frame, {"op": "clearStorage"}, timeout=CLEAR_TIMEOUT),
                                  CLEAR_TIMEOUT) is True:  # fmt: skip
            return
    except (PlaywrightError, TimeoutError, ValueError):
        pass
    with contextlib.suppress(PlaywrightError):
        await page.evaluate(CLEAR_STORAGE)

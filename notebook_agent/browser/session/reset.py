"""Making a used browser context fit for the next row of a map: what one row left must not reach the next.

A pooled context (agent/pool.py) is cleaned between rows instead of being closed and opened again: its extra
tabs closed, the storage of the page it ended on cleared (local and session storage), its cookies cleared, and
its tab sent to ``about:blank``. What cannot be cleaned this way (storage of other origins the row visited, a
service worker, the cache) is why a pool also retires a context after a number of rows.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from playwright.async_api import Error as PlaywrightError

if TYPE_CHECKING:
    from .browser_session import BrowserSession

CLEAR_STORAGE = "() => { try { localStorage.clear(); sessionStorage.clear(); } catch (e) {} }"


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
        with contextlib.suppress(PlaywrightError):
            await page.evaluate(CLEAR_STORAGE)
        await context.clear_cookies()
        await page.goto("about:blank")
        return True

    try:
        return await session.call(run)
    except (PlaywrightError, RuntimeError, TimeoutError):
        return False

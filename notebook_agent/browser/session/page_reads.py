"""Reading the current page for code outside the browser layer (an evaluation's checks, the notebook's summary of
the browser, the picture of an element for the person asked to approve an action on it), so that Playwright is
called from ``browser/`` only.

Each function runs where the page lives: in place normally, on the browser thread in threaded mode (through
:meth:`BrowserSession.call <notebook_agent.browser.session.browser_session.BrowserSession.call>`,
which also runs in place when already called there).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import FloatRect

from ..errors import log
from ..page.mask import ScreenshotWithheld, masked_capture
from ..page.reader import SENSITIVE_FIELDS

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


# -- a picture of one element for the person asked to approve an action on it, outlined -------------------
_OUTLINE_JS = """([x, y, w, h]) => {
  const d = document.createElement('div');
  d.id = '__na_target_outline';
  Object.assign(d.style, {position: 'fixed', left: x + 'px', top: y + 'px', width: w + 'px',
    height: h + 'px', border: '3px solid #e3342f', borderRadius: '4px', zIndex: 2147483647,
    pointerEvents: 'none', boxSizing: 'border-box'});
  document.documentElement.appendChild(d);
}"""


async def target_crop(browser: BrowserSession, index: int, padding: int = 60) -> bytes | None:
    """A PNG of the area around element ``index`` with the element outlined in red (for the person who
    approves). Uses the box from the latest snapshot, which the model's decision was based on. Runs where the
    page lives (the browser thread when the kernel's loop cannot start one). The session's hidden values are
    painted over; None when they could not be (see mask.py)."""
    return await browser.call(_target_crop, browser, index, padding)


async def _target_crop(browser: BrowserSession, index: int, padding: int) -> bytes | None:
    info = browser.element(index)
    if info is None or info.box is None:
        return None
    x, y, w, h = info.box
    page = browser.page
    size = page.viewport_size  # the real one (a headed window may differ from the configured size)
    vw, vh = (size["width"], size["height"]) if size else browser.viewport
    # the outline (3 px outside the element, 3 px wide) is kept inside the viewport, and the crop holds all of it
    ox, oy = max(0.0, x - 3), max(0.0, y - 3)
    ow, oh = min(float(vw), x + w + 3) - ox, min(float(vh), y + h + 3) - oy
    left, top = max(0.0, ox - padding), max(0.0, oy - padding)
    right, bottom = min(float(vw), ox + ow + padding), min(float(vh), oy + oh + padding)
    if right <= left or bottom <= top or ow <= 0 or oh <= 0:
        return None
    await page.evaluate(_OUTLINE_JS, [ox, oy, ow, oh])
    try:
        clip: FloatRect = {"x": left, "y": top, "width": right - left, "height": bottom - top}
        shot = lambda: page.screenshot(type="png", clip=clip)  # noqa: E731
        return await masked_capture(page, list(browser.hidden_values), shot, selector=SENSITIVE_FIELDS)
    except ScreenshotWithheld as exc:  # the person is asked without a picture rather than shown a secret
        log.warning("approval crop withheld: %s", exc)
        return None
    finally:
        await page.evaluate("() => document.getElementById('__na_target_outline')?.remove()")

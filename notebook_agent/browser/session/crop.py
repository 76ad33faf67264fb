"""A picture of one element for the person asked to approve an action on it: the area around it, outlined.

Uses the element's box from the latest snapshot, which the model's decision was based on, and runs where the
page lives (the browser thread when the kernel's loop cannot start one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from playwright.async_api import FloatRect

from ..errors import log
from ..page.mask import ScreenshotWithheld, masked_capture
from ..page.reader import SENSITIVE_FIELDS

if TYPE_CHECKING:
    from .browser_session import BrowserSession


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

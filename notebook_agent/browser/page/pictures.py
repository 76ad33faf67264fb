"""A tab's pictures: a screenshot of its viewport or whole page, with the latest snapshot's boxes and indices
drawn on when asked (each frame's boxes moved to the top viewport's coordinates), taken through DevTools where
that is cheaper.

One job, beside the reader (reader.py) whose snapshot it draws: what a person or a model sees of the page.
"""

from __future__ import annotations

import base64
import contextlib
import weakref
from typing import Any, Literal

from playwright.async_api import CDPSession, Frame, Locator, Page
from playwright.async_api import Error as PlaywrightError

from ...core.aio import wait_for
from ..errors import BrowserTimeoutError, first_line, log, short
from .page_script import call_page_api
from .reader import PageReader


async def live_boxes(reader: PageReader, page: Page) -> list[list[float]]:
    """Current boxes of the latest snapshot's elements, in top-viewport coordinates."""
    by_frame: dict[Frame, dict[int, int]] = {}
    for index, (frame, local) in reader.refs.items():
        by_frame.setdefault(frame, {})[local] = index

    offsets: dict[Frame, tuple[float, float] | None] = {page.main_frame: (0.0, 0.0)}

    async def offset(frame: Frame) -> tuple[float, float] | None:
        if frame in offsets:
            return offsets[frame]
        parent = frame.parent_frame
        token = await reader.frame_token(frame)
        if parent is None or token is None:
            offsets[frame] = None
            return None
        base = await offset(parent)
        if base is None:
            offsets[frame] = None
            return None
        try:
            rel = await call_page_api(parent, {"op": "frameOffsets", "frames": [token]})
        except PlaywrightError:
            rel = [None]
        value = None if not rel or rel[0] is None else (base[0] + rel[0][0], base[1] + rel[0][1])
        offsets[frame] = value
        return value

    boxes: list[list[float]] = []
    for frame, mapping in by_frame.items():
        if frame.is_detached():
            continue
        origin = await offset(frame)
        if origin is None:
            continue
        try:
            rects = await call_page_api(frame, {"op": "rects"})
        except PlaywrightError:
            continue
        for local, x, y, w, h in rects:
            if local in mapping:
                boxes.append([mapping[local], x + origin[0], y + origin[1], w, h])
    return boxes


async def take_screenshot(
    reader: PageReader,
    page: Page,
    *,
    highlight: bool = False,
    format: Literal["png", "jpeg"] = "png",
    full_page: bool = False,
    quality: int | None = None,
    mask: list[Locator] | None = None,
) -> bytes:
    """A screenshot of ``page``; ``highlight`` draws the latest snapshot's boxes and indices on it (the
    caller takes a snapshot of this page first), then removes the overlay again. ``mask`` paints over
    the elements those locators match. A JPEG of the viewport without ``mask`` is captured by DevTools
    directly (``Page.captureScreenshot``, the same picture at a fraction of the cost on large pages)."""
    overlay = False
    try:
        if highlight:
            boxes = await live_boxes(reader, page)
            size = page.viewport_size
            if not full_page and size:  # draw only what the picture will show
                w, h = size["width"], size["height"]
                boxes = [b for b in boxes if b[1] + b[3] > 0 and b[1] < w and b[2] + b[4] > 0 and b[2] < h]
            await call_page_api(page.main_frame, {"op": "overlay", "boxes": boxes})
            overlay = True
        if format == "jpeg" and not full_page and not mask:
            data = await capture_viewport(page, quality if quality is not None else 80)
            if data is not None:
                return data
        kwargs: dict[str, Any] = {"type": format, "full_page": full_page}
        if mask:
            kwargs["mask"] = mask
        if format == "jpeg":
            kwargs["quality"] = quality if quality is not None else 80
        return await page.screenshot(**kwargs)
    finally:
        if overlay:
            with contextlib.suppress(PlaywrightError):
                await call_page_api(page.main_frame, {"op": "removeOverlay"})


#: Each tab's DevTools session, for viewport screenshots (see :func:`capture_viewport`).
_cdp: weakref.WeakKeyDictionary[Page, CDPSession] = weakref.WeakKeyDictionary()


#: Seconds a viewport capture may take: DevTools has no bound of its own, and a page whose renderer stopped
#: drawing frames would hold the step's picture (and the next action, which waits for it) forever.
CAPTURE_TIMEOUT = 10.0


async def capture_viewport(page: Page, quality: int) -> bytes | None:
    """A JPEG of ``page``'s viewport through its DevTools session (``Page.captureScreenshot``), or None when
    there is none (the caller takes Playwright's path); :class:`BrowserTimeoutError` when the page draws no
    frame within :data:`CAPTURE_TIMEOUT`."""
    try:
        cdp = _cdp.get(page)
        if cdp is None:
            cdp = _cdp[page] = await page.context.new_cdp_session(page)
        capture = cdp.send("Page.captureScreenshot", {"format": "jpeg", "quality": quality})
        try:
            shot = await wait_for(capture, CAPTURE_TIMEOUT)
        except TimeoutError:
            raise BrowserTimeoutError(
                f"The screenshot of {short(page.url)} timed out after {CAPTURE_TIMEOUT:g} s: the page drew no new "
                "frame (a script that never ends, or a renderer that stopped). Try again after wait, or open "
                "another page."
            ) from None
        return base64.b64decode(shot["data"])
    except (PlaywrightError, KeyError) as exc:
        _cdp.pop(page, None)
        log.debug("DevTools screenshot failed, using Playwright's: %s", first_line(exc))
        return None

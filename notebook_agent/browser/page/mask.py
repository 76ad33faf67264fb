"""Values a screenshot must never show: a run's secrets and the text it typed into sensitive fields.

One job: a picture of a page with every occurrence of the hidden values painted over, or no picture. Before
the capture, the page script (``snapshot.js``, Playwright's isolated world of each frame) finds in every frame
each text node, form field value or placeholder holding one of the values, in any spelling that reads the same
(the page follows ``core/text/lookalike.py``'s rule, which this module sends it: split by zero-width characters,
wrapped in bidi controls, in full-width or mathematical letters, in any case, spaced out), and paints an opaque
box over it in a top-layer element of that frame's document (so the boxes follow each frame's own scrolling and
clipping, and sit above the page's dialogs). While a value is live, ``painted.py`` first reads where the page
*paints* one beyond its DOM text (CSS generated content, closed shadow roots, ``text-transform``, halves drawn
side by side, a canvas, a page-made image; in frames of other processes too), and those boxes are painted in
the main frame's top layer, above every frame. After the capture the boxes are removed, and the picture is kept
only if the painted layer was read, every frame was searched and every mask was still as painted: a painted
layer DevTools did not give, a frame the script could not reach, a frame that appeared meanwhile, or a mask the
page removed or hid makes :class:`ScreenshotWithheld` instead.

The mask lives in the page's DOM, so page script can see it for the instant of the capture; that is the
price of one extra round trip per frame instead of decoding and re-encoding the picture. Not found: a value a
server draws into an image it sends (``http(s)`` source: see painted.py), one whose characters the layout
alone reorders (flex ``order``, absolute positions out of reading order), and one a combining mark is drawn
over (not a compatibility form: redaction keeps it too).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable

from playwright.async_api import Frame, Page

from ...core.aio import wait_for
from ...core.text.lookalike import page_rule
from ..errors import BrowserError, first_line
from .page_script import call_page_api
from .painted import Box, PaintUnread, painted_boxes

#: Seconds each frame's page script gets to find and paint (and to remove) its boxes.
MASK_TIMEOUT = 3.0

HiddenValues = Iterable[str] | Callable[[], Iterable[str]]
"""Values to hide: a collection, or a function returning the current ones (read before every screenshot)."""


class ScreenshotWithheld(BrowserError):
    """A screenshot was not taken because the values it must hide could not be guaranteed hidden."""


def current_values(source: HiddenValues | None) -> list[str]:
    """The non-blank values of ``source``, longest first, without duplicates."""
    if source is None:
        return []
    values = source() if callable(source) else source
    kept = {str(v): None for v in values if isinstance(v, str) and v.strip()}
    return sorted(kept, key=len, reverse=True)


def _context_root(session: object) -> object:
    """The session whose context ``session`` acts in (a tab session's root, else itself)."""
    return getattr(session, "_tab_of", None) or session


def remember_hidden(session: object, values: HiddenValues | None) -> None:
    """Note that ``session``'s context was given ``values`` to hide: they stay in its pages, history and cache
    after the run that typed them (see :func:`has_held_secrets`)."""
    if values is not None:
        _context_root(session).__dict__.setdefault("_ever_hidden", []).append(values)


def has_held_secrets(session: object) -> bool:
    """Whether ``session``'s context holds or has held a value to hide (a run's secrets, text typed into a
    sensitive field); a trace of it is never recorded (see ``tracing.py``)."""
    return any(current_values(v) for v in _context_root(session).__dict__.get("_ever_hidden", []))


async def _call(frame: Frame, op: dict[str, object]) -> object:
    return await wait_for(call_page_api(frame, op, timeout=MASK_TIMEOUT), MASK_TIMEOUT)


def _painted(result: object) -> bool:
    """Whether a frame's "hide" answer says it may have painted a mask (a count above 0, or no clear answer)."""
    return not (isinstance(result, int) and not isinstance(result, bool) and result == 0)


async def _nothing() -> bool:
    return True


#: Resolves once the frame has rendered twice since it was called: the frame's compositor then holds the boxes.
RENDERED = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"


async def _rendered(frame: Frame) -> None:
    """Wait until a frame that painted boxes has rendered them. A frame of another site runs in its own process
    and compositor: the page's screenshot shows that frame's last rendered picture, which may still be from
    before the boxes (seen under load). Raises :class:`ScreenshotWithheld` when the frame does not render in
    time. (The wait runs in the page's world: a page that replaces ``requestAnimationFrame`` can end it early.)"""
    try:
        await wait_for(frame.evaluate(RENDERED), MASK_TIMEOUT)
    except Exception as exc:
        if frame.is_detached():
            return
        raise ScreenshotWithheld(
            f"No screenshot was taken: the frame at {frame.url[:100]} did not render the mask over hidden values "
            f"and sensitive fields within {MASK_TIMEOUT:g} s ({first_line(exc)}), so a secret could have shown."
        ) from None


async def masked_capture(
    page: Page, values: list[str], take: Callable[[], Awaitable[bytes]], *, selector: str = ""
) -> bytes:
    """``take()`` with every occurrence of ``values``, and every form field (``input``, ``textarea``,
    ``select``) matching the CSS ``selector`` (sensitive fields), in every frame of ``page`` painted over;
    raises :class:`ScreenshotWithheld` (saying why) rather than return a picture that could show one."""
    if not values and not selector:
        return await take()
    extra: list[Box] = []
    if values:  # where the page paints a value its DOM text does not hold (painted.py): only while one is live
        try:
            extra = await painted_boxes(page, values)
        except PaintUnread as exc:
            raise ScreenshotWithheld(f"No screenshot was taken: {exc}, so a secret could have shown.") from None
    frames = [f for f in page.frames if not f.is_detached()]
    op: dict[str, object] = {"op": "hide", "rule": page_rule(values), "selector": selector}
    main: dict[str, object] = {**op, "extra": [list(b) for b in extra]}
    painted = await asyncio.gather(
        *(_call(f, main if f is page.main_frame else op) for f in frames), return_exceptions=True
    )
    try:
        for frame, result in zip(frames, painted, strict=True):
            if isinstance(result, BaseException) and not frame.is_detached():
                raise ScreenshotWithheld(
                    f"No screenshot was taken: the frame at {frame.url[:100]} could not be searched for hidden "
                    f"values and sensitive fields within {MASK_TIMEOUT:g} s ({first_line(result)}), so a secret "
                    "could have shown."
                )
        subframes = [f for f, p in zip(frames, painted, strict=True) if f.parent_frame is not None and _painted(p)]
        await asyncio.gather(*(_rendered(f) for f in subframes))
        data = await take()
    finally:
        # a frame that painted nothing has nothing to take off or check (the common case: one round trip saved)
        intact = await asyncio.gather(
            *(_call(f, {"op": "unhide"}) if _painted(p) else _nothing() for f, p in zip(frames, painted, strict=True)),
            return_exceptions=True,
        )
    for frame, count, still in zip(frames, painted, intact, strict=True):
        if frame.is_detached() or not isinstance(count, int) or count == 0:
            continue
        if still is not True:
            raise ScreenshotWithheld(
                "No screenshot was taken: the mask over hidden values and sensitive fields in the frame at "
                f"{frame.url[:100]} was removed, hidden or replaced (the page changed) during the capture."
            )
    added = [f for f in page.frames if f not in frames and not f.is_detached()]
    if added:
        raise ScreenshotWithheld(
            f"No screenshot was taken: a frame ({added[0].url[:100]}) appeared during the capture and was not "
            "searched for hidden values and sensitive fields."
        )
    return data

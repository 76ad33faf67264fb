"""Where a page paints a hidden value that its DOM text does not hold: the rectangles the screenshot mask must cover
besides the ones the page script finds (``mask.py``).

One job: read what the renderer laid out and say where a value can show. The page script searches the DOM, and the
DOM is not the picture: CSS generated text (``::after { content: attr(data-x) }``), text inside a closed shadow
root, ``text-transform: uppercase`` of a lower-case value, a value spaced out (``s e c r e t``) or cut in halves
drawn side by side, and pixels no text layer describes (a ``<canvas>``, an image the page made from one) all
reach the screenshot unseen. So, only while there is a value to hide, DevTools' ``DOMSnapshot.captureSnapshot``
gives the painted text layer of every document of the page (each frame of another process through its own
session): the text of each laid-out text box as drawn, pseudo-element content and every shadow root included.

* Text: the boxes' text, joined in layout order and again in reading order (top, then left), is matched by
  ``core/text/lookalike.py``'s :func:`~notebook_agent.core.text.lookalike.loose` rule (case folded whatever the
  value's case sensitivity, white space and invisible characters dropped, compatibility forms unified): a
  picture shows an upper-case or spaced copy as plainly as the value. Every box a match touches is covered
  whole.
* Pixels without text: a ``<canvas>``, ``<video>``, ``<embed>`` or ``<object>``, and an image the page made
  itself (a ``data:`` or ``blob:`` source: ``canvas.toDataURL()``, a drawn blob; also a CSS background, border,
  list or generated image from one) or whose address holds a value, are covered whole while a value is live.
  This rather than reading them back with OCR: OCR can say where it found text, never that none is there
  (small, rotated, stylised or noisy letters pass it), so it cannot be the guarantee; and it would put a system
  package or a 15 MB model and hundreds of milliseconds per region on every picture. An image a server sends
  (an ``http(s)`` source) is shown: only a server that was sent the value could draw it into one.

Rectangles are in the top document's coordinates (``hide``'s ``extra`` boxes in ``snapshot.js``, painted in
the main frame's top layer, above every frame), a frame's boxes moved by its frame's content box and scroll
and clipped to it. When the layer cannot be read (DevTools fails or is slow, a frame of another process cannot
be reached or placed) :class:`PaintUnread` says why, and the caller takes no picture.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import unquote

from playwright.async_api import BrowserContext, CDPSession, Frame, Page

from ...core.aio import wait_for
from ...core.text.lookalike import loose
from ..errors import BrowserError, first_line

Box = tuple[float, float, float, float]
"""``(x, y, width, height)`` in CSS pixels."""

#: Seconds DevTools gets to describe the painted layer of one process's documents.
PAINT_TIMEOUT = 5.0

#: Computed styles read for each laid-out node, in this order: where a frame's content box starts, and the
#: images CSS draws (an image the page made is covered whole).
STYLES = (
    "border-left-width",
    "border-top-width",
    "padding-left",
    "padding-top",
    "background-image",
    "border-image-source",
    "list-style-image",
    "content",
)
_IMAGE_STYLES = range(4, len(STYLES))

#: Elements whose pixels no text layer describes and the page's script may draw: covered whole.
DRAWN = frozenset({"CANVAS", "VIDEO", "EMBED", "OBJECT"})
#: Elements showing an image from a source address: covered when the page made it or its address holds a value.
IMAGES = frozenset({"IMG", "INPUT", "IMAGE", "FEIMAGE"})
_MADE = re.compile(r"(?:^|url\(\s*['\"]?)\s*(?:data|blob):", re.IGNORECASE)


class PaintUnread(BrowserError):
    """The painted layer of a page could not be read: where a value shows is not known."""


def needles(values: Iterable[str]) -> list[str]:
    """What to look for in painted text: each value's :func:`loose` form (empty ones dropped)."""
    return sorted({n for n in map(loose, values) if n}, key=len, reverse=True)


def _utf16(text: str, start: int, length: int) -> str:
    """``text[start:start+length]`` in UTF-16 code units (DevTools' offsets)."""
    if text.isascii():
        return text[start : start + length]
    units = text.encode("utf-16-le", errors="surrogatepass")[2 * start : 2 * (start + length)]
    return units.decode("utf-16-le", errors="surrogatepass")


def text_matches(boxes: Sequence[tuple[str, Box]], found: Sequence[str]) -> list[Box]:
    """The boxes whose joined :func:`loose` text holds a needle, each box as it comes: a value in one box, and
    one cut over adjacent boxes (halves in two elements, a spaced copy over several)."""
    if not boxes or not found:
        return []
    parts = [loose(text) for text, _ in boxes]
    starts: list[int] = []
    at = 0
    for part in parts:
        starts.append(at)
        at += len(part)
    hay = "".join(parts)
    hit: set[int] = set()
    for needle in found:
        i = hay.find(needle)
        while i >= 0:
            first, last = bisect_right(starts, i) - 1, bisect_right(starts, i + len(needle) - 1) - 1
            hit.update(range(first, last + 1))
            i = hay.find(needle, i + 1)
    return [boxes[k][1] for k in sorted(hit)]


def _rare(table: dict[str, list[int]] | None) -> dict[int, int]:
    return dict(zip(table["index"], table["value"], strict=False)) if table else {}


class _Document:
    """One document of a DOMSnapshot answer, read for what it paints."""

    def __init__(self, doc: dict[str, Any], strings: list[str]) -> None:
        self.doc, self.strings = doc, strings
        nodes, layout = doc["nodes"], doc["layout"]
        self.names = nodes.get("nodeName", [])
        self.attributes = nodes.get("attributes", [])
        self.sources = _rare(nodes.get("currentSourceURL"))
        self.children = _rare(nodes.get("contentDocumentIndex"))
        self.node_of: list[int] = layout.get("nodeIndex", [])
        self.bounds: list[list[float]] = layout.get("bounds", [])
        self.texts: list[int] = layout.get("text", [])
        self.styles: list[list[int]] = layout.get("styles", [])
        self.scroll = (float(doc.get("scrollOffsetX", 0)), float(doc.get("scrollOffsetY", 0)))

    def s(self, i: int) -> str:
        return self.strings[i] if 0 <= i < len(self.strings) else ""

    def name(self, node: int) -> str:
        return self.s(self.names[node]).upper() if node < len(self.names) else ""

    def attribute(self, node: int, name: str) -> str:
        pairs = self.attributes[node] if node < len(self.attributes) else []
        for k in range(0, len(pairs) - 1, 2):
            if self.s(pairs[k]).lower() == name:
                return self.s(pairs[k + 1])
        return ""

    def style(self, li: int, k: int) -> str:
        row = self.styles[li] if li < len(self.styles) else []
        return self.s(row[k]) if k < len(row) else ""

    def box(self, li: int) -> Box:
        x, y, w, h = self.bounds[li]
        return (x, y, w, h)

    def text_boxes(self) -> list[tuple[str, Box]]:
        """Each laid-out text box's text as drawn, with its box, in layout order."""
        tb = self.doc.get("textBoxes") or {}
        out: list[tuple[str, Box]] = []
        for li, bounds, start, length in zip(
            tb.get("layoutIndex", []), tb.get("bounds", []), tb.get("start", []), tb.get("length", []), strict=False
        ):
            text = self.s(self.texts[li]) if li < len(self.texts) else ""
            if text and bounds[2] > 0 and bounds[3] > 0:
                out.append((_utf16(text, start, length), (bounds[0], bounds[1], bounds[2], bounds[3])))
        return out

    def drawn(self, found: Sequence[str]) -> list[Box]:
        """Boxes of pixels with no text layer that may show a value (see the module's docstring)."""
        out: list[Box] = []
        for li, node in enumerate(self.node_of):
            if li >= len(self.bounds) or self.bounds[li][2] <= 0 or self.bounds[li][3] <= 0:
                continue
            name = self.name(node)
            made = name in DRAWN
            if not made and name in IMAGES:
                source = self.s(self.sources.get(node, -1)) or self.attribute(node, "src")
                source = source or self.attribute(node, "href") or self.attribute(node, "xlink:href")
                made = bool(source) and (bool(_MADE.search(source)) or _holds(source, found))
            if not made:
                made = any(_image_made(self.style(li, k), found) for k in _IMAGE_STYLES)
            if made:
                out.append(self.box(li))
        return out

    def frames(self) -> list[tuple[int, Box]]:
        """Each in-process child document with the content box of its frame element (this document's coordinates)."""
        out: list[tuple[int, Box]] = []
        for li, node in enumerate(self.node_of):
            child = self.children.get(node)
            if child is None or li >= len(self.bounds):
                continue
            x, y, w, h = self.box(li)
            dx, dy = (_px(self.style(li, k)) + _px(self.style(li, k + 2)) for k in (0, 1))
            out.append((child, (x + dx, y + dy, w - 2 * dx, h - 2 * dy)))
        return out


def _px(value: str) -> float:
    try:
        return float(value.removesuffix("px")) if value.endswith("px") else 0.0
    except ValueError:
        return 0.0


def _holds(address: str, found: Sequence[str]) -> bool:
    text = loose(unquote(address))
    return any(n in text for n in found)


def _image_made(style: str, found: Sequence[str]) -> bool:
    return "url(" in style and (bool(_MADE.search(style)) or _holds(style, found))


def _clip(box: Box, to: Box) -> Box | None:
    x0, y0 = max(box[0], to[0]), max(box[1], to[1])
    x1, y1 = min(box[0] + box[2], to[0] + to[2]), min(box[1] + box[3], to[1] + to[3])
    return (x0, y0, x1 - x0, y1 - y0) if x1 > x0 and y1 > y0 else None


def snapshot_boxes(answer: dict[str, Any], found: Sequence[str], origin: tuple[float, float] = (0.0, 0.0)) -> list[Box]:
    """The boxes of ``answer`` (one ``DOMSnapshot.captureSnapshot``) that may show one of ``found``, in the
    coordinates of its first document moved by ``origin``: each in-process frame's boxes moved into its frame
    element's content box (less the frame's scroll) and clipped to it."""
    strings: list[str] = answer.get("strings", [])
    docs = [_Document(d, strings) for d in answer.get("documents", [])]
    if not docs or not found:
        return []
    out: list[Box] = []
    seen: set[int] = set()

    def walk(index: int, dx: float, dy: float, clip: Box | None) -> None:
        if index in seen or index >= len(docs):
            return
        seen.add(index)
        doc = docs[index]
        texts = doc.text_boxes()
        reading = sorted(texts, key=lambda tb: (round(tb[1][1]), tb[1][0]))
        boxes = {*text_matches(texts, found), *text_matches(reading, found), *doc.drawn(found)}
        for x, y, w, h in boxes:
            moved = (x + dx, y + dy, w, h)
            kept = moved if clip is None else _clip(moved, clip)
            if kept is not None:
                out.append(kept)
        for child, (cx, cy, cw, ch) in doc.frames():
            inner = (cx + dx, cy + dy, cw, ch)
            sx, sy = docs[child].scroll if child < len(docs) else (0.0, 0.0)
            walk(child, inner[0] - sx, inner[1] - sy, inner if clip is None else _clip(inner, clip) or (0, 0, 0, 0))

    walk(0, origin[0], origin[1], None)
    return out


async def capture_layer(session: CDPSession) -> dict[str, Any]:
    """The painted layer of the documents ``session`` reaches (``DOMSnapshot.captureSnapshot``, with :data:`STYLES`)."""
    answer: dict[str, Any] = await wait_for(
        session.send("DOMSnapshot.captureSnapshot", {"computedStyles": list(STYLES)}), PAINT_TIMEOUT
    )
    return answer


#: The content box of a frame element in its own viewport (runs on the frame element, in its document).
_CONTENT_BOX = """(e) => { const r = e.getBoundingClientRect(), s = getComputedStyle(e);
  const dx = parseFloat(s.borderLeftWidth) + parseFloat(s.paddingLeft);
  const dy = parseFloat(s.borderTopWidth) + parseFloat(s.paddingTop);
  return [r.left + dx, r.top + dy, r.width - 2 * dx, r.height - 2 * dy]; }"""


async def _viewport_box(frame: Frame) -> Box:
    """The content box of ``frame``'s element in the top viewport's coordinates."""
    element = await frame.frame_element()
    x, y, w, h = await element.evaluate(_CONTENT_BOX)
    parent = frame.parent_frame
    if parent is not None and parent.parent_frame is not None:
        px, py, _, _ = await _viewport_box(parent)
        x, y = x + px, y + py
    return (float(x), float(y), float(w), float(h))


_IN_PROCESS = "does not have a separate CDP session"


async def painted_boxes(page: Page, values: Sequence[str]) -> list[Box]:
    """Where ``page`` may paint one of ``values`` beyond its DOM text, in the top document's coordinates; raises
    :class:`PaintUnread` when that cannot be known."""
    found = needles(values)
    if not found:
        return []
    context = page.context
    session = await context.new_cdp_session(page)
    try:
        try:
            top = await capture_layer(session)
        except Exception as exc:
            raise PaintUnread(f"the page's painted text could not be read ({first_line(exc)})") from None
        out = snapshot_boxes(top, found)
        docs = top.get("documents") or [{}]
        scroll = (float(docs[0].get("scrollOffsetX", 0)), float(docs[0].get("scrollOffsetY", 0)))
        for frame in page.frames:
            if frame.parent_frame is None or frame.is_detached():
                continue
            out.extend(await _other_process(context, frame, found, scroll))
        return out
    finally:
        await session.detach()


async def _other_process(
    context: BrowserContext, frame: Frame, found: Sequence[str], scroll: tuple[float, float]
) -> list[Box]:
    """The boxes of a frame of another process (its own DevTools session), none for an in-process frame (the top
    snapshot holds it)."""
    try:
        session: CDPSession = await context.new_cdp_session(frame)
    except Exception as exc:
        if _IN_PROCESS in str(exc) or frame.is_detached():
            return []
        raise PaintUnread(f"the frame at {frame.url[:100]} could not be reached ({first_line(exc)})") from None
    try:
        answer = await capture_layer(session)
        x, y, w, h = await _viewport_box(frame)
    except Exception as exc:
        if frame.is_detached():
            return []
        raise PaintUnread(
            f"the painted text of the frame at {frame.url[:100]} could not be read ({first_line(exc)})"
        ) from None
    finally:
        try:
            await session.detach()
        except Exception:
            pass
    docs = answer.get("documents") or [{}]
    sx, sy = float(docs[0].get("scrollOffsetX", 0)), float(docs[0].get("scrollOffsetY", 0))
    clip = (x + scroll[0], y + scroll[1], w, h)
    kept = (_clip(b, clip) for b in snapshot_boxes(answer, found, (clip[0] - sx, clip[1] - sy)))
    return [b for b in kept if b is not None]

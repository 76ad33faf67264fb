"""Reading a tab: the indexed snapshot over all its frames and element resolution for actions (its pictures, the
boxes of the snapshot's elements drawn on or not, are ``pictures.py``'s).

The page script (``snapshot.js``) runs in Playwright's isolated world of each frame, read with one call per
frame, all frames at once. Indices refer to the latest snapshot of the tab it was taken on; resolving an index
checks that tab, frame and document are still the ones it came from, and says why not when they are not.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import ElementHandle, Frame, Locator, Page
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from ...core.aio import wait_for
from ...core.text import clean_text
from ..errors import ActionError, BrowserTimeoutError, first_line, log, short
from .page_script import announced_pairs, call_page_api, op_selector, page_api_element
from .snapshot import ElementInfo, FrameResult, Snapshot, TabInfo, build_snapshot

_NAMES = ("token", "secret", "password", "passwd", "apikey", "api_key", "api-key", "otp", "cvv", "cvc", "ssn")
#: Fields painted over in screenshots: the snapshot's sensitive fields, as one CSS selector.
SENSITIVE_FIELDS = ", ".join(
    [
        "input[type=password]",
        "input[autocomplete~='one-time-code']",
        "input[autocomplete~='current-password']",
        "input[autocomplete~='new-password']",
        "input[autocomplete^='cc-']",
        *(f"{tag}[{attr}*='{name}' i]" for tag in ("input", "textarea") for attr in ("name", "id") for name in _NAMES),
    ]
)

#: Seconds the page script of a tab's main frame gets to read it (a child frame gets 5 and is left out after).
MAIN_FRAME_TIMEOUT = 15.0

#: Tokens naming child frames to their parent's page script: unique in the process, so two readers of one
#: page (a tab session beside its root) never name different frames alike.
_next_frame_token = itertools.count(1)


def _norm(text: str) -> str:
    return " ".join(text.split()).rstrip("…").strip().casefold()


async def _reads_otherwise(element: ElementHandle, info: ElementInfo) -> str | None:
    """The element's live text when it is clearly not the text the snapshot (and the approval policy) saw,
    else None: a page that swapped labels or elements behind an index after the state was read (and judged).
    Read through Playwright's isolated script world, where page script cannot fake it. Small changes pass (a
    counter)."""
    expected = _norm(info.text)
    if not expected or info.tag in ("input", "textarea", "select", "option"):
        return None
    try:
        raw = await wait_for(element.inner_text(), 2)
    except (TimeoutError, PlaywrightError):
        return None
    live = _norm(raw)
    if not live or expected in live or live in expected:
        return None
    common = 0
    for a, b in zip(expected, live, strict=False):
        if a != b:
            break
        common += 1
    return None if common >= min(8, len(expected), len(live)) else " ".join(raw.split())


def _where(reader: PageReader, index: int, current: Page | None) -> tuple[Frame, int, dict[str, Any]]:
    """Element ``[index]`` of ``reader``'s latest snapshot: its frame, its index there and the op that finds it;
    :class:`ActionError` when the snapshot, the tab or the frame it belongs to is gone."""
    snap = reader.last_snapshot
    info = snap.elements.get(index) if snap is not None else None
    if snap is None or info is None or index not in reader.refs:
        raise ActionError(
            f"no element [{index}] in the current page snapshot. Use an index from the latest browser state."
        )
    frame, local = reader.refs[index]
    if current is None or current is not reader.refs_page or current.is_closed():
        raise ActionError(
            f"element [{index}] belongs to a tab that is no longer current. Use an index from the latest browser state."
        )
    if frame.is_detached():
        raise ActionError(
            f"element [{index}] is no longer on the page (its frame was removed or reloaded). "
            "Use an index from the latest browser state."
        )
    return frame, local, {"op": "get", "i": local, "id": snap.snapshot_id}


class PageReader:
    """Snapshot state for one session: the latest snapshot, where each index lives, cached iframe handles."""

    def __init__(self) -> None:
        self.last_snapshot: Snapshot | None = None
        self.last_time: float | None = None
        self.refs: dict[int, tuple[Frame, int]] = {}
        self.table_refs: dict[str, tuple[Frame, int]] = {}
        self.refs_page: Page | None = None
        self._frame_handles: dict[Frame, ElementHandle] = {}
        self._frame_tokens: dict[Frame, int] = {}  # child frame -> token its <iframe> is registered under
        self._seq = 0

    def forget(self) -> None:
        """Indices of a tab that went away must not resolve against its replacement."""
        self.refs, self.table_refs = {}, {}
        self.refs_page = None

    def reset(self) -> None:
        """The browser went away: forget everything that pointed into it."""
        self._frame_handles.clear()
        self._frame_tokens.clear()
        self.refs, self.table_refs = {}, {}
        self.refs_page = None

    def on_frame_detached(self, frame: Frame) -> None:
        self._frame_handles.pop(frame, None)
        self._frame_tokens.pop(frame, None)

    async def _frame_element(self, frame: Frame) -> ElementHandle | None:
        cached = self._frame_handles.get(frame)
        if cached is not None:
            return cached
        try:
            handle = await wait_for(frame.frame_element(), 3)
        except (TimeoutError, PlaywrightError):
            return None
        self._frame_handles[frame] = handle
        return handle

    async def frame_token(self, frame: Frame, *, again: bool = False) -> int | None:
        """The token under which ``frame``'s ``<iframe>`` is registered with its parent's page script (which
        cannot take element handles from the main world as arguments), registering it first if needed."""
        token = self._frame_tokens.get(frame)
        if token is not None and not again:
            return token
        handle = await self._frame_element(frame)
        if handle is None:
            return None
        parent = frame.parent_frame
        if parent is None:
            return None
        token = next(_next_frame_token)
        try:
            await wait_for(page_api_element(parent, {"op": "frame", "k": token}, scope=handle), 3)
        except (TimeoutError, PlaywrightError):
            return None
        self._frame_tokens[frame] = token
        return token

    async def _call_with_frames(
        self, frame: Frame, op: dict[str, Any], kids: list[Frame], token_of: dict[Frame, int], timeout: float
    ) -> tuple[Any, list[Frame]]:
        """``op`` in ``frame`` with its child frames named by token, and the children it was given. A token
        its page script does not know (its isolated world was made anew, e.g. after ``document.open()``) is
        registered again, once; a child that cannot be is left out (its frame is going away)."""
        arg = {**op, "frames": [token_of[c] for c in kids]}
        data = await wait_for(call_page_api(frame, arg, timeout=timeout), timeout)
        if not (isinstance(data, dict) and "retag" in data):
            return data, kids
        again = {c: await self.frame_token(c, again=True) for c in kids if token_of[c] in data["retag"]}
        token_of.update({c: t for c, t in again.items() if t is not None})
        kids = [c for c in kids if c not in again or again[c] is not None]
        arg = {**op, "frames": [token_of[c] for c in kids], "retagged": True}
        return await wait_for(call_page_api(frame, arg, timeout=timeout), timeout), kids

    async def _read_frames(
        self, page: Page, op: dict[str, Any], *, max_frames: int = 60
    ) -> tuple[dict[Frame, FrameResult], Frame]:
        main = page.main_frame
        frames = [f for f in page.frames if not f.is_detached()][:max_frames]
        if main not in frames:
            frames.insert(0, main)
        children: dict[Frame, list[Frame]] = {}
        others = [f for f in frames if f is not main]
        tokens = await asyncio.gather(*(self.frame_token(f) for f in others))
        token_of = {f: t for f, t in zip(others, tokens, strict=True) if t is not None}
        for f in others:
            parent = f.parent_frame
            if parent is not None and f in token_of:
                children.setdefault(parent, []).append(f)

        async def run(frame: Frame) -> FrameResult | None:
            kids = children.get(frame, [])
            timeout = MAIN_FRAME_TIMEOUT if frame is main else 5.0
            try:
                data, kids = await self._call_with_frames(frame, op, kids, token_of, timeout)
            except (TimeoutError, PlaywrightError) as exc:
                if frame is main:
                    raise
                log.debug("frame %s not read: %s", frame.url, exc)
                return None
            return FrameResult(frame, data, kids, clean_text(frame.url))

        done = await asyncio.gather(*(run(f) for f in frames))
        results = {r.frame: r for r in done if r is not None}
        return results, main

    async def snapshot(
        self,
        page: Page,
        *,
        tabs: Callable[[str], Awaitable[list[TabInfo]]],
        notices: list[str],
        full_page: bool = False,
        max_elements: int | None = None,
        max_chars: int | None = None,
        load_timeout: float = 20.0,
    ) -> Snapshot:
        """Read ``page``; ``tabs(title)`` lists the open tabs; ``notices`` go into the snapshot header."""
        t0 = time.perf_counter()
        self._seq += 1
        seq = self._seq
        op = {"op": "snapshot", "full": full_page, "id": seq, "facts": True}
        try:
            try:
                results, main = await self._read_frames(page, op)
            except PlaywrightError:
                # typically "execution context was destroyed" mid-navigation: let the new document load, retry
                # once (cached iframe handles may belong to the old document)
                self._frame_handles.clear()
                self._frame_tokens.clear()
                with contextlib.suppress(PlaywrightError):
                    await page.wait_for_load_state("domcontentloaded", timeout=load_timeout * 1000)
                results, main = await self._read_frames(page, op)
        except (TimeoutError, PlaywrightTimeoutError):
            raise BrowserTimeoutError(
                f"Reading the page at {short(page.url, 100)} timed out after {MAIN_FRAME_TIMEOUT:g} s: its scripts "
                "kept it too busy to answer (a script that never ends, an address changed thousands of times) "
                "or it kept reloading. Try wait, or go_to_url another page; the tab is checked before its next "
                "use and replaced by a new one if it still does not answer."
            ) from None
        tab_list = await tabs(str(results[main].data.get("title", "")))
        t1 = time.perf_counter()
        snap, refs, self.table_refs = build_snapshot(
            results,
            main,
            full_page=full_page,
            max_elements=max_elements,
            max_chars=max_chars,
            tabs=tab_list,
            notices=notices,
            snapshot_id=seq,
        )
        if "announced" in results[main].data:
            snap.announced = announced_pairs(results[main].data["announced"])
        if isinstance(results[main].data.get("calls"), list):
            snap.calls = frozenset(str(c) for c in results[main].data["calls"])
        t2 = time.perf_counter()
        snap.timings = {
            "total_ms": round((t2 - t0) * 1000, 2),
            "frames_ms": round((t1 - t0) * 1000, 2),
            "script_ms": float(results[main].data.get("ms", 0.0)),
            "build_ms": round((t2 - t1) * 1000, 2),
        }
        self.last_snapshot = snap
        self.refs = refs
        self.refs_page = page
        self.last_time = time.monotonic()
        return snap

    def reference(self, index: int, current: Page | None) -> tuple[Frame, dict[str, Any]]:
        """Where element ``[index]`` of the latest snapshot lives: its frame and the page-script op that answers
        with it (no round trip), or :class:`ActionError` saying why there is none. The op answers with a
        detached stand-in when the element is gone, so a query chained after it never waits for a match."""
        frame, _, arg = _where(self, index, current)
        return frame, {**arg, "gone": True}

    async def resolve(self, index: int, current: Page | None) -> tuple[ElementHandle, ElementInfo, Frame, int]:
        """Element ``[index]`` of the latest snapshot as a live handle, or :class:`ActionError` saying why not."""
        frame, local, arg = _where(self, index, current)
        snap = self.last_snapshot
        assert snap is not None
        info = snap.elements[index]
        try:
            element = await page_api_element(frame, arg)
            code = "ok" if element is not None else await call_page_api(frame, {**arg, "op": "check"}, timeout=5)
        except PlaywrightError as exc:
            raise ActionError(
                f"element [{index}] could not be found ({first_line(exc)}). Use an index from the latest browser state."
            ) from None
        if element is None:
            if code == "detached":
                reason = "it was removed from the page since the last browser state"
            else:
                reason = "the page changed (navigated or reloaded) since the last browser state"
            raise ActionError(
                f"element [{index}] {info.describe(60)} is no longer on the page: {reason}. "
                "Use an index from the latest browser state."
            )
        live = await _reads_otherwise(element, info)
        if live is not None:
            raise ActionError(
                f"element [{index}] is not what the browser state showed: it was {info.describe(60)} but now "
                f"reads '{short(live, 60)}', so nothing was done. Use an index from the latest browser state."
            )
        return element, info, frame, local


async def find_table(reader: PageReader, name: str, current: Page | None) -> tuple[ElementHandle, Frame]:
    """Table ``name`` ("T1") of ``reader``'s latest snapshot as a live handle, or :class:`ActionError` saying why
    not (the tab, frame or snapshot it came from is gone, or it left the page)."""
    snap = reader.last_snapshot
    known = ", ".join(snap.tables) if snap is not None and snap.tables else "none"
    where = reader.table_refs.get(name) if current is not None and current is reader.refs_page else None
    if snap is None or where is None or where[0].is_detached():
        raise ActionError(
            f"no table {name} in the current browser state (its tables: {known}). Use a name from its "
            "[Table T1] lines, or the index of an element in the table."
        )
    frame, local = where
    try:
        element = await page_api_element(frame, {"op": "table", "i": local, "id": snap.snapshot_id})
    except PlaywrightError as exc:
        raise ActionError(f"table {name} could not be found ({first_line(exc)}).") from None
    if element is None:
        raise ActionError(
            f"table {name} is no longer on the page: the page changed since the last browser state. "
            "Use a name from the latest browser state."
        )
    return element, frame


async def index_in_snapshot(reader: PageReader, element: ElementHandle, frame: Frame) -> int | None:
    """The index ``element`` (an element of ``frame``) has in ``reader``'s latest snapshot, or None when it has
    none (not indexed, or the snapshot is of another page). The reverse of :meth:`PageReader.resolve`."""
    snap = reader.last_snapshot
    if snap is None:
        return None
    try:
        local = await call_page_api(frame, {"op": "indexOf", "id": snap.snapshot_id}, scope=element)
    except PlaywrightError:
        return None
    if not isinstance(local, int) or local < 0:
        return None
    return next((g for g, (f, i) in reader.refs.items() if f == frame and i == local), None)


async def index_by_locator(reader: PageReader, locator: Locator, frame: Frame) -> int | None:
    """The index in ``reader``'s latest snapshot of the one element ``locator`` (of ``frame``) matches, or None
    (it matches none or several, or the snapshot does not list it): a count, and the locator chained with the
    page script's ``indexOf`` (read the way the snapshot was taken, in the page script's own world, and strict:
    several matches fail it). Both are asked at once, one round trip instead of two; the chained read is only
    taken when the count is one (it would wait its timeout for an element that is not there)."""
    snap = reader.last_snapshot
    if snap is None:
        return None
    op = op_selector(frame, {"op": "indexOf", "id": snap.snapshot_id})
    # the element may leave between the two reads: the chained one waits a short while, then it is not found
    read = asyncio.ensure_future(locator.locator(op).text_content(timeout=1000))
    try:
        if await locator.count() != 1:
            return None
        local = json.loads(await read or "null")
    except (PlaywrightError, ValueError):
        return None
    finally:
        if not read.done():
            read.cancel()
        elif not read.cancelled():
            read.exception()  # retrieved, so a failed read left behind is not reported as never retrieved
    if not isinstance(local, int) or local < 0:
        return None
    return next((g for g, (f, i) in reader.refs.items() if f == frame and i == local), None)

"""Element fingerprints: what a step saw of the element it acted on, and finding that element again later on a
page that may have changed (a renamed id, a reordered list, a cookie banner, an element moved into an iframe).

A run that worked is a recipe replayed with no model call, and a snapshot index (``[12]``) names another element
on a changed page. So each action records a :class:`Fingerprint` (:func:`fingerprint_of`): the element's
accessible role and name, label, test id, id, text, link, where it sits (frames, landmark, heading, the texts
beside it), and the best Playwright locator for it, each locator checked to match exactly that element then.
:func:`find_again` tries that locator, then scores every candidate in every frame by the recorded parts
(score.py) and answers with the element only when one clearly wins; a tie or a weak best is "not
found", with the reason, for the model to heal. :func:`playwright_source` is the locator as Python source.

What a fingerprint says is read by ``fingerprint.js`` in Playwright's isolated world of each frame, the
mechanism of the page script (page_script.py): a content-script selector engine, so page script can neither see
nor spoof what it reads. Playwright gives each document the engines registered when the document's isolated
world starts, so :func:`register_fingerprint_engine` must run before the pages it serves load (at launch, next to
``register_page_engine``); on an older document the calls raise :class:`FingerprintUnavailable`.

A fingerprint never holds what was typed: a field's value is not read, only its label, placeholder and names.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import itertools
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from playwright.async_api import ElementHandle, Frame, Locator, Page, Playwright
from playwright.async_api import Error as PlaywrightError

from ...core import JSONValue
from ...core.aio import wait_for
from ..errors import BrowserError, first_line
from ..page.page_script import _clean_json
from .model import TEST_ID_ATTRS, Fingerprint, FrameStep, LocatorSpec, safe_css
from .score import decide, score

__all__ = [
    "FP_ENGINE",
    "Fingerprint",
    "FingerprintUnavailable",
    "Found",
    "LocatorSpec",
    "find_again",
    "fingerprint_at",
    "fingerprint_of",
    "live_locator",
    "playwright_source",
    "register_fingerprint_engine",
]

#: The selector engine ``fingerprint.js`` is registered as.
FP_ENGINE = "notebook_agent_fp"

#: The length fingerprint.js cuts names at (NAME_MAX there).
NAME_CAP = 300

#: Seconds each round trip to a frame may take.
TIMEOUT = 5.0

#: How many matches of a locator are searched for the element before ``.nth()`` gives up on it.
MAX_NTH = 50

#: What the finder asks each frame for: the recorded parts that pick candidates (fingerprint.js "fp:candidates").
_QUERY_PARTS = ("role", "name", "tag", "test_id", "id", "name_attr", "href", "label", "placeholder", "text")

_tokens = itertools.count(1)

_MISSING = (
    "The fingerprint script is not in this page's documents: register_fingerprint_engine(playwright) must run "
    "before the pages load (Playwright adds an engine only to documents that start after it is registered)."
)


class FingerprintUnavailable(BrowserError):
    """An element's fingerprint could not be read, or candidates could not be searched, and why."""


@dataclass
class Found:
    """What :func:`find_again` found. ``element`` is None when nothing was found with confidence, and then
    ``why_not`` says why (nothing close enough, a tie, hidden, disabled). ``confidence`` (0..1) is the share of
    the recorded evidence that agrees with the element; ``how`` is the signal that found it: "locator" (the
    recorded locator found it and it wins), "test id", "role+name", "role+name (case-insensitive)", "label",
    "id", "name attr", "href", "placeholder", "text" or "context"."""

    element: ElementHandle | None
    frame: Frame | None
    confidence: float
    how: str
    why_not: str = ""


# -- the channel ---------------------------------------------------------------------------------------------


@cache
def fingerprint_script() -> str:
    """``fingerprint.js`` (package data), read once."""
    return resources.files(__package__).joinpath("fingerprint.js").read_text(encoding="utf-8").strip()


async def register_fingerprint_engine(pw: Playwright) -> None:
    """Register ``fingerprint.js`` with ``pw`` as a content-script selector engine (Playwright's isolated world
    of every frame). Contexts that exist get it too, but only documents that start afterwards; registering
    twice is a no-op."""
    try:
        await pw.selectors.register(FP_ENGINE, fingerprint_script(), content_script=True)
    except PlaywrightError as exc:
        if "already registered" not in str(exc):
            raise


def _selector(arg: dict[str, Any]) -> str:
    return f"{FP_ENGINE}={base64.b64encode(json.dumps(arg).encode('ascii')).decode('ascii')}"


def _engine_missing(exc: Exception) -> bool:
    text = str(exc)
    return "reading 'queryAll'" in text or "Unknown engine" in text or FP_ENGINE + '"' in text


async def _data(frame: Frame, arg: dict[str, Any]) -> Any:
    """One data op in ``frame``'s isolated world: its JSON answer, decoded."""
    try:
        raw = await frame.locator(_selector(arg)).text_content(timeout=TIMEOUT * 1000)
    except PlaywrightError as exc:
        if _engine_missing(exc):
            raise FingerprintUnavailable(_MISSING) from exc
        raise
    return json.loads(_clean_json(raw or "null"))


async def _element(scope: ElementHandle | Frame, arg: dict[str, Any]) -> ElementHandle | None:
    """One element op, with ``scope`` (an element) as its root when it is an element."""
    try:
        return await wait_for(scope.query_selector(_selector(arg)), TIMEOUT)
    except PlaywrightError as exc:
        if _engine_missing(exc):
            raise FingerprintUnavailable(_MISSING) from exc
        raise


async def _mark(handle: ElementHandle) -> str:
    """Remember ``handle``'s element in its frame's isolated world under a new token."""
    k = f"m{next(_tokens)}"
    if await _element(handle, {"op": "fp:mark", "k": k}) is None:
        raise FingerprintUnavailable("The element is no longer in the page.")
    return k


async def _is(handle: ElementHandle, k: str) -> bool:
    return await _element(handle, {"op": "fp:is", "k": k}) is not None


def live_locator(root: Page | Frame, spec: LocatorSpec) -> Locator:
    """The Playwright locator ``spec`` describes, from ``root`` (the calls its Python source shows)."""
    obj: Any = root
    for method, args, kwargs in spec.calls():
        obj = getattr(obj, method)(*args, **kwargs)
    assert isinstance(obj, Locator)
    return obj


async def _position(loc: Locator, k: str) -> tuple[int, int | None]:
    """How many elements ``loc`` matches now, and which of them (0-based) is the element marked ``k`` (None:
    not among the first :data:`MAX_NTH`)."""
    # the common answer, "only that element", in one concurrent pair of queries instead of a handle per match
    n, hit = await wait_for(
        asyncio.gather(loc.count(), loc.locator(_selector({"op": "fp:is", "k": k})).count()), TIMEOUT
    )
    if hit == 0:
        return n, None
    if n == 1:
        return n, 0
    for i in range(min(n, MAX_NTH)):
        handle = await loc.nth(i).element_handle(timeout=TIMEOUT * 1000)
        try:
            if await _is(handle, k):
                return n, i
        finally:
            await handle.dispose()
    return n, None


# -- fingerprinting ------------------------------------------------------------------------------------------


async def fingerprint_of(frame: Frame, element_handle: ElementHandle) -> Fingerprint:
    """The fingerprint of ``element_handle``, an element of ``frame``, as the page is now, with the best
    locator for it (see :func:`_best_locator`). Raises :class:`FingerprintUnavailable` when the element left
    the page or the fingerprint script is not in the frame."""
    k = await _mark(element_handle)
    parts = await _data(frame, {"op": "fp:describe", "k": k, "positions": True})
    return await _completed(frame, parts, k)


async def fingerprint_at(frame: Frame, element: str) -> Fingerprint:
    """:func:`fingerprint_of` the element the selector ``element`` answers with in ``frame`` (the page script's
    op for a snapshot index, say): found, remembered and described in one query of the isolated world, since
    this read sits before every action on an element."""
    k = f"m{next(_tokens)}"
    chain = f"{element} >> {_selector({'op': 'fp:describe', 'k': k, 'positions': True, 'here': True})}"
    try:  # one round trip: the chain answers at once (with null for an element that is gone, see reference())
        raw = await wait_for(frame.text_content(chain, timeout=TIMEOUT * 1000), TIMEOUT)
    except PlaywrightError as exc:
        if _engine_missing(exc):
            raise FingerprintUnavailable(_MISSING) from exc
        raise
    return await _completed(frame, json.loads(_clean_json(raw or "null")), k)


async def _completed(frame: Frame, parts: JSONValue, k: str) -> Fingerprint:
    """The fingerprint from the element's ``parts`` (marked ``k``): its frames and its best locator added."""
    if not isinstance(parts, dict):
        raise FingerprintUnavailable("The element is not in the given frame, or it left the page.")
    chain, frame_selectors = await _frame_chain(frame, locate=True)
    fp = Fingerprint.from_dict({**parts, "frame": [s.to_dict() for s in chain], "nth": None, "locator": None})
    locator, fp.nth = await _best_locator(frame, fp, parts, k)
    if locator is not None and all(frame_selectors):
        fp.locator = dataclasses.replace(locator, frames=tuple(frame_selectors))
    return fp


async def _best_locator(
    frame: Frame, fp: Fingerprint, parts: dict[str, Any], k: str
) -> tuple[LocatorSpec | None, int | None]:
    """The first locator, in order of preference (test id, role+name, label, placeholder, text, ``#id`` when
    the id does not look generated, the CSS path), that matches exactly the element in ``frame`` now; failing
    that, the first that matches it among others, with ``.nth()``. Also the element's position among those of
    its role and name when it is not the only one."""
    specs: list[LocatorSpec] = []
    attr = parts.get("test_id_attr")
    if fp.test_id and attr in TEST_ID_ATTRS:
        specs.append(LocatorSpec("test_id", attr=str(attr), value=fp.test_id))
    if fp.role and fp.name:
        specs.append(LocatorSpec("role", role=fp.role, name=fp.name))
    if fp.label:
        specs.append(LocatorSpec("label", text=fp.label))
    if fp.placeholder:
        specs.append(LocatorSpec("placeholder", text=fp.placeholder))
    if fp.text and len(fp.text) < 120:  # a text cut at the cap would not match exactly
        specs.append(LocatorSpec("text", text=fp.text))
    if fp.id and parts.get("id_readable") is True:
        specs.append(LocatorSpec("id", value=fp.id))
    path = safe_css(parts.get("path"))
    if path:
        specs.append(LocatorSpec("css", value=path))
    nth: int | None = None
    role_checked = False
    fallback: LocatorSpec | None = None
    chosen: LocatorSpec | None = None
    for spec in specs:
        try:
            role = spec.kind == "role"
            n, i = await (_role_position(frame, spec, k, parts) if role else _position(live_locator(frame, spec), k))
        except (PlaywrightError, TimeoutError):
            continue  # a name Playwright cannot take as given, say: the next kind
        if spec.kind == "role":
            role_checked = True
            nth = i if n > 1 else None
        if n == 1 and i == 0 and (spec.kind != "css" or fallback is None):
            chosen = spec
            break
        if i is not None and fallback is None:
            fallback = dataclasses.replace(spec, nth=i)
    if fp.role and fp.name and not role_checked:
        try:
            n, i = await _role_position(frame, LocatorSpec("role", role=fp.role, name=fp.name), k, parts)
            nth = i if n > 1 else None
        except (PlaywrightError, TimeoutError):
            pass
    return chosen or fallback, nth


async def _role_position(frame: Frame, spec: LocatorSpec, k: str, parts: dict[str, Any]) -> tuple[int, int | None]:
    """:func:`_position` for a role locator, read in one walk of the isolated world when that finds exactly
    the element (the common case, and on a large page ~10x cheaper than Playwright's role engine, which walks
    the page twice, and sat before every action); any other answer is asked of Playwright's engine, so our
    reading only ever picks a locator it finds unique to the element. Replay checks the locator again anyway
    (it must match one element) before trusting it."""
    # a capped name would not match exactly; one with U+FFFD may have been a lone surrogate on the page, which
    # our walk compared raw and Playwright will compare with the replacement character
    if spec.role and spec.name and len(spec.name) < NAME_CAP and "\ufffd" not in spec.name:
        found = parts.get("role_position")  # read with the parts, of the same role and name
        if (spec.role, spec.name) != (parts.get("role"), parts.get("name")):
            found = await _data(frame, {"op": "fp:rolepos", "k": k, "role": spec.role, "name": spec.name})
        if isinstance(found, dict) and found.get("n") == 1 and found.get("i") == 0:
            return 1, 0
    return await _position(live_locator(frame, spec), k)


async def _frame_chain(frame: Frame, *, locate: bool) -> tuple[list[FrameStep], list[str]]:
    """The frames from the page down to ``frame`` (outermost first) as described by their ``<iframe>``
    elements, and (``locate``) for each a CSS selector that matches exactly that ``<iframe>`` in its parent
    ("" when none does)."""
    steps: list[FrameStep] = []
    selectors: list[str] = []
    child = frame
    while (parent := child.parent_frame) is not None:
        el = await child.frame_element()
        try:
            k = await _mark(el)
            info = await _data(parent, {"op": "fp:frameinfo", "k": k})
            info = info if isinstance(info, dict) else {}
            steps.insert(0, FrameStep.from_dict(info))
            chosen = ""
            candidates = info.get("selectors") if locate else None
            for raw in candidates[:8] if isinstance(candidates, list) else []:
                sel = safe_css(raw)
                if sel and await _position(parent.locator(sel), k) == (1, 0):
                    chosen = sel
                    break
            selectors.insert(0, chosen)
        finally:
            await el.dispose()
        child = parent
    return steps, selectors


def playwright_source(fp: Fingerprint, *, page_var: str = "page") -> str:
    """The fingerprint's locator as Python source on ``page_var`` (``fp.locator.source(page_var)``), for an
    exported script; raises ValueError when the fingerprint has no locator."""
    if fp.locator is None:
        raise ValueError("This fingerprint has no locator: no locator matched the element when it was recorded.")
    return fp.locator.source(page_var)


# -- finding again -------------------------------------------------------------------------------------------


async def find_again(page: Page, fp: Fingerprint) -> Found:
    """The element ``fp`` describes on ``page`` now, in any of its frames, or why it cannot be told.

    The recorded locator is tried first; then every element of every frame that shares an identity signal
    with the fingerprint is scored by all its parts (score.py), and only a clear winner that is
    visible and enabled is returned. ``how`` is "locator" when the recorded locator matched exactly the winner.
    """
    if fp.empty:
        return Found(None, None, 0.0, "", "The fingerprint is empty: nothing was recorded to find an element by.")
    # the recorded locator is tried while the frames are searched: round trips side by side, not one by one
    locating = asyncio.ensure_future(_locate(page, fp))
    try:
        return await _search(page, fp, locating)
    finally:
        if not locating.done():
            locating.cancel()  # the search ended without needing it (nothing clear was found)
        elif (located := locating.result()) is not None:
            await located.dispose()


async def _locate(page: Page, fp: Fingerprint) -> ElementHandle | None:
    """The element the recorded locator matches, when it matches exactly one."""
    if fp.locator is None:
        return None
    try:
        loc = live_locator(page, fp.locator)
        if await wait_for(loc.count(), TIMEOUT) != 1:
            return None
        return await loc.element_handle(timeout=TIMEOUT * 1000)
    except (PlaywrightError, TimeoutError):
        return None


async def _search(page: Page, fp: Fingerprint, locating: asyncio.Future[ElementHandle | None]) -> Found:
    round_id = f"r{next(_tokens)}"
    query = {part: getattr(fp, part) for part in _QUERY_PARTS}
    scored = []
    where: list[tuple[Frame, int]] = []
    unsearched: list[str] = []
    for frame in page.frames:
        if frame.is_detached():
            continue
        try:
            res = await _data(frame, {"op": "fp:candidates", "n": round_id, "fp": query})
        except FingerprintUnavailable:
            raise
        except (PlaywrightError, TimeoutError) as exc:
            if not frame.is_detached():  # one that went away meanwhile holds nothing to act on
                unsearched.append(f"{frame.url[:100]} ({first_line(exc)})")
            continue
        items = res.get("items") if isinstance(res, dict) else None
        if isinstance(res, dict) and res.get("capped") is True:
            unsearched.append(f"{frame.url[:100]} (only its first 200 candidates were compared)")
        if not isinstance(items, list) or not items:
            continue
        try:
            chain = (await _frame_chain(frame, locate=False))[0] if frame.parent_frame is not None else []
        except (PlaywrightError, TimeoutError) as exc:
            if not frame.is_detached():
                unsearched.append(f"{frame.url[:100]} ({first_line(exc)})")
            continue
        for item in items:
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], int)):
                continue
            if not isinstance(item[1], dict):
                continue
            candidate = Fingerprint.from_dict({**item[1], "frame": [s.to_dict() for s in chain]})
            scored.append((score(fp, candidate), item[1].get("visible") is True, candidate))
            where.append((frame, item[0]))
    decision = decide(fp, scored)
    if decision.index is None or decision.score is None:
        note = f" The frame at {unsearched[0]} could not be searched in full." if unsearched else ""
        return Found(None, None, 0.0, "", decision.why_not + note)
    frame, i = where[decision.index]
    handle = await _element(frame, {"op": "fp:get", "n": round_id, "i": i})
    if handle is None:
        return Found(None, None, 0.0, "", "The element left the page while it was being found.")
    same, visible, enabled = await asyncio.gather(
        _same(handle, await locating), handle.is_visible(), handle.is_enabled()
    )
    how = "locator" if same else decision.score.how
    what = fp.describe()
    if not visible:
        return Found(None, frame, 0.0, how, f"The element that matches the recorded {what} is hidden.")
    if not enabled:
        return Found(None, frame, 0.0, how, f"The element that matches the recorded {what} is disabled.")
    return Found(handle, frame, decision.score.confidence, how)


async def _same(handle: ElementHandle, located: ElementHandle | None) -> bool:
    """Whether ``handle`` is the element the recorded locator matched."""
    return located is not None and await _is(handle, await _mark(located))

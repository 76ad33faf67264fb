"""The element an action targets, kept so a recorded step can find it again: fingerprint by index, and the
index a fingerprint has on the page now.

A step names its element by the snapshot's index, which means nothing on another visit of the page. So when an
action runs, its element's fingerprint is recorded (:func:`target_of`), and a replay finds the element again by
that fingerprint and asks for its index in the current snapshot (:func:`find_target`), then acts through the
same action as the model would, approval gate and all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from playwright.async_api import Error as PlaywrightError

from ..errors import ActionError, first_line
from ..fingerprint.finder import Fingerprint, FingerprintUnavailable, find_again, fingerprint_at, live_locator
from ..fingerprint.score import score
from ..page.reader import index_by_locator
from .browser_session import BrowserSession


async def target_of(session: BrowserSession, index: int) -> dict[str, Any] | None:
    """The fingerprint (as a dict) of element ``[index]`` of the latest snapshot, or None when it cannot be
    read (gone, or a document older than the fingerprint script); never raises for the page's sake."""
    try:
        frame, element = session.reference(index)
        return (await fingerprint_at(frame, element)).to_dict()
    except (ActionError, FingerprintUnavailable, PlaywrightError, TimeoutError):
        return None


@dataclass
class Target:
    """Where a recorded element is now: its index in the latest snapshot, or why it has none."""

    index: int | None
    how: str = ""
    confidence: float = 0.0
    why_not: str = ""


async def find_target(session: BrowserSession, recorded: dict[str, Any]) -> Target:
    """The current index of the element ``recorded`` (a fingerprint dict, from a run file: hostile input)
    describes, found on the session's current tab, or a :class:`Target` without one saying why."""
    fp = Fingerprint.from_dict(recorded)
    quick = await _by_locator(session, fp)
    if quick is not None:
        return quick
    try:
        page = await session.ensure_page()
        found = await find_again(page, fp)
    except (FingerprintUnavailable, PlaywrightError, TimeoutError) as exc:
        return Target(None, why_not=f"the page could not be searched ({first_line(exc)})")
    if found.element is None or found.frame is None:
        return Target(None, why_not=found.why_not or "no element matches what the step acted on")
    index = await session.index_of(found.element, found.frame)
    if index is None:
        return Target(
            None,
            found.how,
            found.confidence,
            "the element was found, but the browser state does not list it (hidden, covered, or not interactive)",
        )
    return Target(index, found.how, found.confidence)


#: Recorded locators that name an element by what a person sees or a test id, not by where it sits.
SURE_LOCATORS = frozenset({"test_id", "role", "label", "placeholder"})


async def _by_locator(session: BrowserSession, fp: Fingerprint) -> Target | None:
    """The recorded element found without the full search, when that cannot differ from what the search would
    decide: its recorded locator names it by what it is (:data:`SURE_LOCATORS`) and matches exactly one element
    now, listed in the latest snapshot and enabled, whose fingerprint agrees with every part recorded (its
    context included: the same "Add to cart" under another product's heading does not). Any element within the
    search's margin of it would match the locator too (score.py's weights), so it is the search's clear winner.
    Three short queries instead of a dozen; else None, and :func:`find_again` decides."""
    spec = fp.locator
    if spec is None or spec.frames or spec.nth is not None or spec.kind not in SURE_LOCATORS:
        return None
    try:
        page = await session.ensure_page()
        reader = session._reader  # the latest snapshot's own page: the index is only good for it
        if reader.last_snapshot is None or reader.refs_page is not page:
            return None
        index = await index_by_locator(reader, live_locator(page, spec), page.main_frame)
    except (PlaywrightError, TimeoutError):
        return None
    info = session.element(index) if index is not None else None
    if index is None or info is None or info.disabled:
        return None
    now = await target_of(session, index)
    if now is None:
        return None
    agreed = score(fp, Fingerprint.from_dict(now))
    if agreed.confidence < 1.0 or agreed.differs or agreed.loose_name:
        return None
    return Target(index, "locator", 1.0)

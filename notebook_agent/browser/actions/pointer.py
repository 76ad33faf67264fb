"""Pointer actions: click and hover an indexed element with trusted input (a click: a mouse event at a point the
isolated world checked, else Playwright's click), and a synthetic JavaScript path only when the trusted one is
impossible; results say what the click changed.
"""

from __future__ import annotations

import asyncio

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame

from ...core.abort import AbortSignal
from ...core.action_facts import ActionFacts, ScriptCall
from ..errors import ActionError, first_line
from ..page.action_watch import NEW_TAB_NOTE
from ..page.page_script import call_page_api
from .base import BrowserTool, describe_state, is_connected, read_after, state_after, words
from .params import IndexParams
from .scripts import SYNTHETIC_CLICK_JS, SYNTHETIC_HOVER_JS


def _click_script(call: ScriptCall) -> list[str]:
    """A click; one that opened a tab the run went on in waits for that popup and goes on there."""
    if NEW_TAB_NOTE.search(call.result):
        return [
            f"{call.with_} page.expect_popup() as popup:",
            f"    {call.aw}{call.target}.click()",
            f"page = {call.aw}popup.value  # the click opened a tab; the run went on there",
        ]
    return [f"{call.aw}{call.target}.click()"]


class ClickTool(BrowserTool):
    name = "click_element_by_index"
    description = "Click the element."
    parameters = IndexParams
    failure = "Failed to click element"
    risk = "element"
    facts = ActionFacts(on_element=True, order=3, small="Click element [index].", script=_click_script)

    async def run(self, args: IndexParams, signal: AbortSignal) -> str:
        el, info, frame, local = await signal.race(self.browser.resolve(args.index))
        if info.tag == "select":
            # A native dropdown's list is drawn by the browser, outside the page: clicking opens nothing the
            # model can see, and small models then click it again and again. Say what works instead.
            options = info.attributes.get("options", "")
            listed = f" (options: {options})" if options else ""
            raise ActionError(
                f"{info.describe()} is a dropdown: clicking it chooses nothing. Use select_dropdown_option with "
                f"index {args.index} and the text of the option to choose{listed}."
            )
        if info.disabled:
            still = await signal.race(
                el.evaluate("(e) => e.matches(':disabled') || e.getAttribute('aria-disabled') === 'true'")
            )
            if still:
                raise ActionError(f"{info.describe()} is disabled, so clicking it does nothing right now.")
        via = ""
        async with self.browser.watch() as watch:
            snapshot = self.browser.last_snapshot
            sid = snapshot.snapshot_id if snapshot is not None else None
            try:
                if not await signal.race(aimed_click(frame, local, sid)):
                    await signal.race(el.click(timeout=self.timeout_ms))
            except PlaywrightError as exc:
                if not await is_connected(el):
                    raise ActionError(
                        f"{info.describe()} disappeared before it could be clicked. Use the latest browser state."
                    ) from None
                if "not visible" in first_line(exc):
                    raise ActionError(
                        f"{info.describe()} is not visible any more, so it cannot be clicked. "
                        "Use the latest browser state."
                    ) from None
                await signal.race(el.evaluate(SYNTHETIC_CLICK_JS))
                via = f" (a trusted click was not possible: {first_line(exc)}; a JavaScript click was used instead)"
            target = info.attributes.get("target", "")
            popup = info.tag == "a" and target not in ("", "_self", "_parent", "_top")
            nav, live = await signal.race(read_after(el))
            quiet = not popup and not nav and not watch.saw_anything
            if not quiet:
                await self.progress("clicked; waiting for a new tab" if popup else "clicked; waiting for the page")
            await watch.settle(signal, expect_popup=popup, may_navigate=not quiet)
            effects = watch.describe()
        parts = [f"Clicked {info.describe()}{via}."]
        # nothing could navigate and nothing did: the state read with the barrier is current
        state = describe_state(live) if quiet else await state_after(el)
        if state:
            parts.append(state)
        if effects:
            parts.append(effects)
        return " ".join(parts)


async def aimed_click(frame: Frame, local: int, snapshot_id: int | None) -> bool:
    """Click element ``local`` of ``frame``'s latest snapshot with a trusted mouse event at a point the page
    script (snapshot.js "aim", in the isolated world) found the element itself hit, in view and not animating.
    False when it did nothing: no such point, another frame than the top one, or the press would have landed on
    something else (the page script stopped it); the caller then clicks through Playwright, whose two-frame
    stability wait is most of a click's cost and is skipped here only where the checks say it has nothing to
    wait for."""
    if frame.parent_frame is not None:  # a frame's coordinates are not the page's: Playwright maps them
        return False
    try:
        point = await call_page_api(frame, {"op": "aim", "i": local, "id": snapshot_id}, timeout=2)
    except (PlaywrightError, TimeoutError):
        return False
    if not isinstance(point, dict) or not all(isinstance(point.get(k), int | float) for k in ("x", "y")):
        return False
    try:
        await frame.page.mouse.click(float(point["x"]), float(point["y"]))
    finally:
        try:
            landed = await asyncio.shield(call_page_api(frame, {"op": "aimed"}, timeout=2))
        except (PlaywrightError, TimeoutError, asyncio.CancelledError):
            landed = "unseen"
    return landed != "blocked"


class HoverTool(BrowserTool):
    name = "hover"
    description = "Hover over the element (opens hover menus, tooltips)."
    parameters = IndexParams
    failure = "Failed to hover"
    risk = "safe"
    facts = ActionFacts(
        on_element=True,
        order=13,
        on_request_in=frozenset({"default"}),
        asked_by=words(r"hover\w*|mouse\s*over|tool-?tips?|menus?|drop-?downs?"),
        script=lambda c: [f"{c.aw}{c.target}.hover()"],
    )

    async def run(self, args: IndexParams, signal: AbortSignal) -> str:
        el, info, _, _ = await signal.race(self.browser.resolve(args.index))
        via = ""
        try:
            await signal.race(el.hover(timeout=self.timeout_ms))
        except PlaywrightError as exc:
            if not await is_connected(el):
                raise ActionError(f"{info.describe()} disappeared. Use the latest browser state.") from None
            await signal.race(el.evaluate(SYNTHETIC_HOVER_JS))
            via = f" (using JavaScript mouse events: {first_line(exc)})"
        return f"Hovered over {info.describe()}{via}. Elements it revealed are marked * in the next browser state."

"""Pointer actions: click and hover an indexed element, with a trusted Playwright input first and a synthetic
JavaScript path only when the trusted one is impossible; results say what the click changed.
"""

from __future__ import annotations

from playwright.async_api import Error as PlaywrightError

from ...core.abort import AbortSignal
from ..report import ActionError, first_line
from .base import BrowserTool, describe_state, is_connected, read_after, state_after
from .params import IndexParams
from .scripts import SYNTHETIC_CLICK_JS, SYNTHETIC_HOVER_JS


class ClickTool(BrowserTool):
    name = "click_element_by_index"
    description = "Click the element (a real mouse click)."
    parameters = IndexParams
    failure = "Failed to click element"

    async def run(self, args: IndexParams, signal: AbortSignal) -> str:
        el, info, _, _ = await signal.race(self.browser.resolve(args.index))
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
            try:
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


class HoverTool(BrowserTool):
    name = "hover"
    description = "Move the mouse over the element with this index (opens hover menus and tooltips)."
    parameters = IndexParams
    failure = "Failed to hover"

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

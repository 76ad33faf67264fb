"""Page-level actions: finish, wait, ask the user, scroll, run JavaScript, open a URL, go back, switch tab."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import secrets
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Page

from ...core.abort import AbortedError, AbortSignal
from ...core.action_facts import ActionFacts, NotScriptable, ScriptCall
from ...core.aio import wait_for
from ...core.tools import Finished, Tool, ToolCallContext, ToolResult
from ..errors import ActionError, first_line
from ..page.snapshot import ElementInfo, call_page_api
from ..urls import URLError, is_download, names_an_address, navigation_error, normalize_url
from .base import ActionHost, AskUser, BrowserTool, ms, title_note, words
from .params import (
    AskUserParams,
    DoneParams,
    ExecuteJavascriptParams,
    GoBackParams,
    GoToUrlParams,
    ScrollHorizontallyParams,
    ScrollParams,
    SwitchTabParams,
    WaitParams,
)
from .scripts import ABORT_USER_SCRIPT_JS, user_script_js


def _done_script(call: ScriptCall) -> list[str]:
    """Print the recorded answer (and its data), and end as the run did: 0 for a success, 1 otherwise."""
    lines = [f"print({call.literal(call.args.get('text'))})"]
    if call.args.get("data") is not None:
        lines.append(f"print({call.literal(json.dumps(call.args['data'], ensure_ascii=False, default=str))})")
    success = call.args.get("success") is True
    return [*lines, "return 0" if success else "return 1  # the recorded run said it did not finish the task"]


class DoneTool(Tool):
    name = "done"
    description = "Finish: text is the answer or summary; success=false unless fully done."
    parameters = DoneParams
    execution_mode = "sequential"
    risk = "safe"
    facts = ActionFacts(
        replay="anywhere",
        repeatable=True,
        quiet=True,
        finishes=True,
        order=0,
        small="Finish. text: the answer. success: true only if the whole task is done.",
        script=_done_script,
    )

    async def execute(self, args: DoneParams, ctx: ToolCallContext) -> ToolResult:
        return ToolResult.finish(
            args.text, Finished(args.text, args.success), details={"success": args.success, "text": args.text}
        )


class WaitTool(BrowserTool):
    name = "wait"
    description = "Wait for the page to load or change."
    parameters = WaitParams
    needs_page = False
    risk = "safe"
    facts = ActionFacts(
        replay="anywhere",
        repeatable=True,
        quiet=True,
        order=1,
        small="Wait for the page.",
        script=lambda c: [f"{c.aw}page.wait_for_timeout({round(c.number(c.args.get('seconds'), 1.0, 0, 60) * 1000)})"],
    )

    async def run(self, args: WaitParams, signal: AbortSignal) -> str:
        since = self.browser.seconds_since_snapshot
        already = min(since, args.seconds) if since is not None else 0.0
        left = max(0.0, args.seconds - already)
        waited = already
        while left > 0:  # one progress line a second
            await self.progress(f"waiting: {waited:.0f} of {args.seconds:g} s")
            chunk = min(1.0, left)
            await signal.sleep(chunk)
            left -= chunk
            waited += chunk
        return f"Waited for {args.seconds:g} second{'' if args.seconds == 1 else 's'}."


def _ask_script(call: ScriptCall) -> list[str]:
    """The question and the answer the run got, as comments: a script has no one to ask."""
    answer = call.result.removeprefix("User answered: ")
    return [
        f"# The recorded run asked the user: {call.comment(call.args.get('question'))}",
        f"# and was told: {call.comment(answer)}",
    ]


WAITED = "while the action waited for the person's answer"
"""What a stop during a question is recorded as (after who stopped the run)."""


class AskUserTool(BrowserTool):
    """Asks the person; a stop while it waits is recorded as that (:data:`WAITED`), not as a failure."""

    name = "ask_user"
    description = "Ask the user for missing information or a decision; returns the answer."
    parameters = AskUserParams
    needs_page = False
    risk = "safe"
    facts = ActionFacts(
        replay="anywhere", order=2, opt_in=True, small="Ask the user; returns the answer.", script=_ask_script
    )
    runs_on_browser = False  # it waits for the person (a widget on the kernel's loop), not for the page

    def __init__(self, browser: ActionHost, on_ask_user: AskUser | None = None) -> None:
        super().__init__(browser)
        self.on_ask_user = on_ask_user

    def unavailable_reason(self) -> str | None:
        return None if self.on_ask_user is not None else "no on_ask_user callback was given"

    async def run(self, args: AskUserParams, signal: AbortSignal) -> str:
        if self.on_ask_user is None:
            raise ActionError("asking the user is not available here (no on_ask_user callback).")
        params = [
            p
            for p in inspect.signature(self.on_ask_user).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
        ]
        if len(params) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in params):
            answer = await signal.race(self.on_ask_user(args.question, signal), during=WAITED)
        else:
            answer = await signal.race(self.on_ask_user(args.question), during=WAITED)
        return f"User answered: {answer}"


def _wheel(call: ScriptCall, horizontal: bool) -> list[str]:
    """A recorded scroll as a mouse wheel turn (over its element when it scrolled one): its pixels, else its
    pages of the agent's window height (``PAGE_HEIGHT`` in the script)."""
    forward = call.args.get("right" if horizontal else "down", True) is not False
    pixels = call.number(call.args.get("pixels"), -1, -1, 1_000_000)
    pages = call.number(call.args.get("num_pages"), 1.0, 0, 10)
    amount = str(round(pixels)) if pixels >= 0 else f"{pages:g} * PAGE_HEIGHT"
    amount = amount if forward else f"-{amount}"
    turn = f"{call.aw}page.mouse.wheel({f'{amount}, 0' if horizontal else f'0, {amount}'})"
    if call.args.get("index") is None:
        return [turn]
    return [f"{call.aw}{call.target}.hover()", turn]  # the wheel scrolls what is under the mouse


class _ScrollBase(BrowserTool):
    axis = "y"
    risk = "safe"

    async def _scroll(self, index: int | None, px: int | None, pages: float, forward: bool, signal: AbortSignal) -> str:
        if self.axis == "y":
            direction, end, rest = ("down", "bottom", "below") if forward else ("up", "top", "above")
        else:
            direction, end, rest = (
                ("right", "right edge", "to the right") if forward else ("left", "left edge", "to the left")
            )
        await self.progress(f"scrolling {direction}" + (f" in element [{index}]" if index is not None else ""))
        page = await self.browser.ensure_page()
        frame: Frame = page.main_frame
        arg: dict[str, Any] = {
            "op": "scroll",
            "axis": self.axis,
            "px": px,
            "pages": pages,
            "sign": 1 if forward else -1,
        }
        info: ElementInfo | None = None
        if index is not None:
            _, info, frame, local = await signal.race(self.browser.resolve(index))
            snap = self.browser.last_snapshot
            arg.update(i=local, id=snap.snapshot_id if snap else None)
        res = await signal.race(call_page_api(frame, arg))
        if "error" in res:
            raise ActionError(
                f"element [{index}] is no longer on the page. Use an index from the latest browser state."
            )
        moved = abs(int(res["moved"]))
        remaining = int(res["remaining"]) if forward else int(res["after"])
        kind = res["kind"]
        ident = " id=" + res["elId"] if res["elId"] else ""
        prefix = ""
        if kind == "container" and info is not None:
            what = (
                info.describe(60)
                if res["self"]
                else f"the scrollable <{res['tag']}{ident}> holding {info.describe(60)}"
            )
        elif kind == "fallback":
            what = f"the largest scrollable area <{res['tag']}{ident}> (the page itself does not scroll)"
        else:
            what = "the frame's page" if frame is not page.main_frame else "the page"
            if kind == "page-from-element" and info is not None:
                prefix = f"No scrollable container holds {info.describe(60)}, so {what} scrolled. "
        if moved == 0:
            return f"{prefix}Already at the {end} of {what}; cannot scroll {direction} further."
        text = f"{prefix}Scrolled {what} {direction} by {moved}px."
        text += f" Reached the {end}." if remaining <= 4 else f" {remaining}px more {rest}."
        return text


class ScrollTool(_ScrollBase):
    name = "scroll"
    description = "Scroll down or up by pixels, else num_pages screens (index: inside that element)."
    parameters = ScrollParams
    failure = "Failed to scroll"
    facts = ActionFacts(
        on_element=True,
        repeatable=True,
        quiet=True,
        order=6,
        small="Scroll the page down (or up).",
        script=lambda c: _wheel(c, horizontal=False),
    )

    async def run(self, args: ScrollParams, signal: AbortSignal) -> str:
        return await self._scroll(args.index, args.pixels, args.num_pages, args.down, signal)


class ScrollHorizontallyTool(_ScrollBase):
    name = "scroll_horizontally"
    description = "Scroll sideways (index: inside that element)."
    parameters = ScrollHorizontallyParams
    failure = "Failed to scroll horizontally"
    axis = "x"
    facts = ActionFacts(
        on_element=True,
        repeatable=True,
        quiet=True,
        order=7,
        on_request_in=frozenset({"default"}),
        asked_by=words(r"horizontal\w*|sideways|scroll\w*\s+(to\s+the\s+)?(left|right)|carousels?|sliders?|wide"),
        script=lambda c: _wheel(c, horizontal=True),
    )

    async def run(self, args: ScrollHorizontallyParams, signal: AbortSignal) -> str:
        return await self._scroll(args.index, args.pixels, 0, args.right, signal)


class ExecuteJavascriptTool(BrowserTool):
    """Runs the model's script in the page's main world (where the page's own scripts and globals are; the
    actions' own scripts run in Playwright's isolated world instead).

    The script has ``signal`` in scope, an ``AbortSignal`` of the page: when the run is stopped, during the
    script or after it, that signal aborts too, so work the script left running (a ``setInterval`` checking
    ``signal.aborted``, a ``fetch(url, {signal})``) stops with the run. After the script, a navigation or new
    tab it started is waited for as after a click that may navigate (what a script does cannot be known
    beforehand), and the result says so."""

    name = "execute_javascript"
    description = (
        "Run JavaScript in the page (an expression, or statements with return; await works); gets JSON. Last resort."
    )
    parameters = ExecuteJavascriptParams
    failure = "Error executing JavaScript"
    risk = "script"
    facts = ActionFacts(
        order=8,
        opt_in=True,
        small="Run JavaScript in the page; returns its result.",
        script=lambda c: [
            "# The recorded run ran this JavaScript (the model wrote it): read it before you run this script.",
            f"{c.aw}run_js(page, {c.literal(c.args.get('script'))})",
        ],
    )
    timeout = 30.0
    max_result = 4000

    async def run(self, args: ExecuteJavascriptParams, signal: AbortSignal) -> str:
        page = await self.browser.ensure_page()
        script = args.script.strip()
        expr = script.rstrip(";").strip()
        is_expression = False
        if expr:
            try:
                # compile-only check: defining the function does not run the script
                await signal.race(page.evaluate(f"() => {{ const f = async () => ({expr}\n); return typeof f; }}"))
                is_expression = True
            except PlaywrightError:
                is_expression = False
        inner = f"async () => ({expr}\n)" if is_expression else f"async () => {{\n{script}\n}}"
        key = f"__notebookAgentAbort_{secrets.token_hex(8)}"
        _abort_on_stop(signal, page, key)
        navigated_away = False
        async with self.browser.watch() as watch:
            try:
                out = await signal.race(wait_for(page.evaluate(user_script_js(inner, key)), self.timeout))
            except AbortedError:
                await _abort_in_page(page, key, signal.reason or "Operation aborted")
                raise
            except TimeoutError:
                await _abort_in_page(page, key, "the script took too long")
                raise ActionError(f"the script did not finish within {self.timeout:g} seconds.") from None
            except PlaywrightError as exc:
                if "context was destroyed" not in str(exc):
                    raise ActionError(f"JavaScript threw: {first_line(exc)}") from None
                navigated_away, out = True, {}  # the page left (a navigation) while the script was still running
            if watch.saw_anything:
                await self.progress("script ran; waiting for the page")
            await watch.settle(signal)
            effects = watch.describe()
        if navigated_away:
            result = "none (the page navigated away before the script finished)"
        elif out.get("u"):
            result = "undefined" + ("" if is_expression else " (end the script with `return value` to get a result)")
        else:
            result = out.get("j") or "null"
            if len(result) > self.max_result:
                result = result[: self.max_result] + f"… ({len(result)} characters, truncated)"
        return f"Executed JavaScript. Result: {result}" + (" " + effects if effects else "")


_aborting: set[asyncio.Task[None]] = set()
"""In-page aborts started from a signal callback (kept referenced until done)."""


async def _abort_in_page(page: Page, key: str, reason: str) -> None:
    """Abort the page-side controller of one ``execute_javascript`` call; quietly nothing if the page went."""
    with contextlib.suppress(PlaywrightError, TimeoutError):
        await wait_for(page.evaluate(ABORT_USER_SCRIPT_JS, [key, reason]), 1.0)


def _abort_on_stop(signal: AbortSignal, page: Page, key: str) -> None:
    """When ``signal`` fires (from any thread, possibly after the action has ended), abort the script's
    controller in the page, on the loop the page lives on."""
    loop = asyncio.get_running_loop()

    def start(reason: str) -> None:
        task = loop.create_task(_abort_in_page(page, key, reason))
        _aborting.add(task)
        task.add_done_callback(_aborting.discard)

    def on_abort(reason: str) -> None:
        with contextlib.suppress(RuntimeError):  # the loop has closed: so has the page
            loop.call_soon_threadsafe(start, reason)

    signal.add_callback(on_abort)


class GoToUrlTool(BrowserTool):
    name = "go_to_url"
    description = "Open an absolute URL in the current tab."
    parameters = GoToUrlParams
    failure = "Failed to open URL"
    risk = "url"
    facts = ActionFacts(
        replay="unread",
        order=10,
        small="Open a URL.",
        # a 1.5B model, measured, opened addresses it made up (/docs, /account: 404s) instead of clicking the link
        on_request_in=frozenset({"small"}),
        asked_by=names_an_address,
        slots={"url": "url"},
        script=lambda c: [f"{c.aw}page.goto(at({c.literal(c.args.get('url'))}))"],
    )

    async def run(self, args: GoToUrlParams, signal: AbortSignal) -> str:
        page = await self.browser.ensure_page()
        try:
            url = normalize_url(args.url, files=False)
        except URLError as exc:
            raise ActionError(str(exc)) from None
        refusal = self.browser.navigation_refusal(url)
        if refusal:
            raise ActionError(f"{refusal} The page stayed at {page.url}.")
        await self.progress(f"loading {url}")
        started = self.browser.downloads_started
        try:
            response = await signal.race(self.browser.navigate(url))
        except PlaywrightError as exc:
            if is_download(exc):  # a file, not a page: handled like any download a page starts
                await signal.race(self.browser.downloads_settled(started))
                return (
                    f"{url} is a file to download, not a page, so the tab stayed at {page.url}; "
                    "what became of the file is said below."
                )
            raise ActionError(navigation_error(url, exc, self.browser.navigation_timeout)) from None
        page = await self.browser.ensure_page()  # a new tab when the old one would not let go (see navigate)
        text = f"Navigated to {page.url}{await title_note(page)}."
        if response is not None and response.status >= 400:
            text += f" The server answered HTTP {response.status}."
        return text


class GoBackTool(BrowserTool):
    name = "go_back"
    description = "Go back one page."
    parameters = GoBackParams
    failure = "Failed to go back"
    risk = "safe"
    facts = ActionFacts(order=11, small="Go back one page.", script=lambda c: [f"{c.aw}page.go_back()"])

    async def run(self, args: GoBackParams, signal: AbortSignal) -> str:
        page = await self.browser.ensure_page()
        before = page.url
        if await signal.race(_back_is_blank(page)):
            raise ActionError("there is no earlier page to go back to: before this one the tab was empty.")
        try:
            await signal.race(page.go_back(wait_until="domcontentloaded", timeout=ms(self.browser.navigation_timeout)))
        except PlaywrightError as exc:
            raise ActionError(f"could not go back: {first_line(exc)}") from None
        if page.url == before:
            raise ActionError("there is no previous page in this tab's history.")
        return f"Went back to {page.url}{await title_note(page)}."


async def _back_is_blank(page: Page) -> bool:
    """Whether going back would leave for the empty tab a run was opened in (``about:blank``): a blank page, where
    a model that went back from its start page (measured, a 1.5B one did, twice) has nothing left to act on."""
    try:
        cdp = await page.context.new_cdp_session(page)
        try:
            history = await cdp.send("Page.getNavigationHistory")
        finally:
            await cdp.detach()
        index, entries = int(history["currentIndex"]), history["entries"]
        return index >= 1 and str(entries[index - 1].get("url", "")) == "about:blank"
    except (PlaywrightError, KeyError, TypeError, ValueError, IndexError):
        return False


def _switch_script(call: ScriptCall) -> list[str]:
    """The agent's tab ids are its own: a script finds the tab by the page the next step was on."""
    if not call.next_url:
        raise NotScriptable("it switched tabs, and no later step says which page that tab showed")
    return [
        "# The agent's tab ids are its own: the tab is found by the page the next step was on.",
        f"page = {call.aw}tab_at(page, url_re({call.literal(call.next_url)}))",
    ]


class SwitchTabTool(BrowserTool):
    name = "switch_tab"
    description = "Make the tab with this id (see Tabs) the current one."
    parameters = SwitchTabParams
    failure = "Failed to switch tab"
    risk = "safe"
    facts = ActionFacts(
        replay="anywhere",
        quiet=True,
        order=12,
        on_request_in=frozenset({"default"}),
        asked_by=words(r"tabs?|windows?|pop-?ups?"),
        script=_switch_script,
    )

    async def run(self, args: SwitchTabParams, signal: AbortSignal) -> str:
        page = await self.browser.switch_tab(args.tab_id)
        return f"Switched to tab {args.tab_id}: {page.url}{await title_note(page)}."

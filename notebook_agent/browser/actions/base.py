"""What every built-in action shares: the small interface it needs from a browser session, the base class
that turns failures into model-facing "Error: ..." results, and small helpers for result text.

Actions depend on :class:`ActionHost`, not on ``BrowserSession``: resolve an index, watch what an action
caused, finish a result with pending notices. That keeps the session free to change how it does those.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Literal, Protocol, TypeAlias

from playwright.async_api import ElementHandle, Frame, Page, Response
from playwright.async_api import Error as PlaywrightError

from ...core.abort import AbortSignal
from ...core.aio import wait_for
from ...core.tools import Tool, ToolCallContext, ToolResult
from ..errors import ActionError, first_line, short
from ..page.action_watch import ActionWatch
from ..page.snapshot import ElementInfo, Snapshot
from .scripts import AFTER_ACTION_JS, STATE_JS

AskUser: TypeAlias = Callable[..., Awaitable[str]]
"""``async def on_ask_user(question: str, signal: AbortSignal) -> str`` (the signal argument is optional)."""


HELD = "while what the action started waited for approval"
"""What a stop while the network door held the action's request is recorded as (after who stopped the run)."""


class ActionHost(Protocol):
    """The part of a browser session the actions use."""

    action_timeout: float
    navigation_timeout: float

    async def ensure_page(self) -> Page: ...

    async def resolve(self, index: int) -> tuple[ElementHandle, ElementInfo, Frame, int]: ...

    async def resolve_table(self, name: str) -> tuple[ElementHandle, Frame]: ...

    def watch(self) -> AbstractAsyncContextManager[ActionWatch]: ...

    def finish(self, text: str, *, is_error: bool = False, details: object = None) -> ToolResult: ...

    async def switch_tab(self, tab_id: int) -> Page: ...

    def navigation_refusal(self, url: str) -> str | None: ...

    async def navigate(
        self, url: str, wait_until: Literal["domcontentloaded", "load"] = "domcontentloaded"
    ) -> Response | None: ...

    async def is_responsive(self) -> bool: ...

    async def replace_hung_page(self) -> str: ...

    def mark_suspect(self) -> None: ...

    @property
    def last_snapshot(self) -> Snapshot | None: ...

    @property
    def seconds_since_snapshot(self) -> float | None: ...

    @property
    def effects_asked(self) -> int: ...

    async def effects_settled(self) -> None: ...

    @property
    def downloads_started(self) -> int: ...

    async def downloads_settled(self, started: int) -> None: ...


def words(pattern: str) -> Callable[[str], bool]:
    """Whether a request speaks of something (``pattern``: alternatives of whole words, any case): an action's
    :attr:`~notebook_agent.core.action_facts.ActionFacts.asked_by`."""
    found = re.compile(rf"\b({pattern})\b", re.IGNORECASE).search
    return lambda task: found(task) is not None


def ms(seconds: float) -> float:
    return seconds * 1000.0


async def title_note(page: Page) -> str:
    """`` (title '...')`` for an action result, or nothing when the page has no title (or is gone)."""
    try:
        title = await page.title()
    except PlaywrightError:
        return ""
    return f" (title {quote(title)})" if title else ""


def quote(text: str, limit: int = 80) -> str:
    return "'" + short(text, limit) + "'"


def match_option(options: list[str], wanted: str) -> tuple[int | None, list[int]]:
    """Index of the option matching ``wanted``: exact, then case-insensitive, then a unique substring.
    Returns (index or None, candidate indices when the substring match was ambiguous)."""
    w = " ".join(wanted.split())
    norm = [" ".join(o.split()) for o in options]
    for i, o in enumerate(norm):
        if o == w:
            return i, []
    lw = w.casefold()
    for i, o in enumerate(norm):
        if o.casefold() == lw:
            return i, []
    if not lw:
        return None, []
    subs = [i for i, o in enumerate(norm) if lw in o.casefold()]
    if len(subs) == 1:
        return subs[0], []
    return None, subs


class BrowserTool(Tool):
    """Base for browser actions: binds the session, turns failures into "Error: ..." results, adds notices.

    ``execute(args, ctx)`` takes the abort signal from ``ctx`` and hands it to :meth:`run`; while it runs,
    :meth:`progress` reports through ``ctx`` and :attr:`context` is that call's context (actions run one at a
    time: ``execution_mode = "sequential"``)."""

    execution_mode = "sequential"
    needs_page = True
    runs_on_browser = True
    """It touches Playwright objects, so it executes where they live (the browser thread in threaded mode)."""
    failure = "Failed"

    def __init__(self, browser: ActionHost) -> None:
        self.browser = browser
        self._ctx: ToolCallContext | None = None

    async def run(self, args: Any, signal: AbortSignal) -> str | ToolResult:
        """The action itself; ``args``: the validated arguments, of the type the subclass's ``run`` names."""
        raise NotImplementedError

    @property
    def context(self) -> ToolCallContext | None:
        """The context of the call now running (None between calls)."""
        return self._ctx

    async def progress(self, text: str) -> None:
        """Report what the action is doing while it takes time (a view shows it on the step)."""
        if self._ctx is not None:
            await self._ctx.progress(text)

    async def execute(self, args: Any, ctx: ToolCallContext) -> ToolResult | str:
        self._ctx = ctx
        try:
            return await self._execute(args, ctx.signal)
        finally:
            self._ctx = None

    async def _execute(self, args: object, signal: AbortSignal) -> ToolResult | str:
        asked = self.browser.effects_asked
        error: str | None = None
        out: str | ToolResult = ""
        try:
            if self.needs_page:
                await signal.race(self.browser.ensure_page())
                out = await self._watched(self.run(args, signal))
            else:
                out = await self.run(args, signal)
        except ActionError as exc:
            error = f"Error: {exc}"
        except PlaywrightError as exc:
            error = f"Error: {self.failure}: {first_line(exc)}"
        if self.browser.effects_asked != asked:
            # What the action started was held at the network door while the policy (maybe a person) decided:
            # wait for that, and do not blame the page for the time it took.
            await signal.race(self.browser.effects_settled(), during=HELD)
            if error is not None:
                return self.browser.finish("Done; what it started was held for approval (see below).")
        if error is not None:
            return self.browser.finish(error, is_error=True)
        if isinstance(out, ToolResult):
            return out
        return self.browser.finish(out)

    async def _watched(self, work: Awaitable[str | ToolResult]) -> str | ToolResult:
        """Run ``work`` while watching the page: once it has taken longer than an action should, check that
        the page still answers; a page whose script never yields (``while(true){}`` in a click handler) is
        replaced and the action fails with a sentence saying so, instead of hanging the run."""
        task = asyncio.ensure_future(work)
        patience = self.browser.action_timeout + 1.0
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=patience)
                if done:
                    return task.result()
                if not await self.browser.is_responsive():
                    task.cancel()
                    url = await self.browser.replace_hung_page()
                    raise ActionError(
                        f"the page at {url} stopped responding while the action ran (a script on it never "
                        "finished), so its tab was closed and a new tab opened at about:blank."
                    )
                patience = 2.0
        except BaseException:
            if not task.done():
                task.cancel()
                self.browser.mark_suspect()  # stopped mid-action: check the page before it is used again
            raise

    @property
    def timeout_ms(self) -> float:
        return ms(self.browser.action_timeout)


async def is_connected(el: ElementHandle) -> bool:
    try:
        return bool(await el.evaluate("(e) => e.isConnected"))
    except PlaywrightError:
        return False


async def read_after(el: ElementHandle) -> tuple[bool, dict[str, Any]]:
    """One round trip right after an action: whether activating ``el`` can start a navigation (see
    ``MAY_NAVIGATE_JS``; True when unsure) and its live state (``STATE_JS``). Being a round trip to the page
    after the action, it also lets a navigation the action started at once show up in the watch first."""
    try:
        nav, st = await wait_for(el.evaluate(AFTER_ACTION_JS), 2)
    except (TimeoutError, PlaywrightError):
        return True, {}
    return bool(nav), st


async def state_after(el: ElementHandle) -> str:
    """ "It is now checked." and the like, read live after a click."""
    try:
        st = await wait_for(el.evaluate(STATE_JS), 2)
    except (TimeoutError, PlaywrightError):
        return ""
    return describe_state(st)


def describe_state(st: dict[str, Any]) -> str:
    """ "It is now checked." and the like, from what ``STATE_JS`` read."""
    if not st.get("connected"):
        return ""
    bits = []
    if "checked" in st:
        bits.append("checked" if st["checked"] else "not checked")
    for key, word in (("aria-checked", "checked"), ("aria-pressed", "pressed"), ("aria-selected", "selected")):
        if key in st and "checked" not in st:
            bits.append(f"{word}={st[key]}")
    if "aria-expanded" in st:
        bits.append("expanded" if st["aria-expanded"] == "true" else "collapsed")
    return f"It is now {', '.join(bits)}." if bits else ""

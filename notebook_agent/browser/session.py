"""BrowserSession: one Playwright browser, its context and the current tab, made safe to use from a notebook.

The session owns Playwright, the browser, one context and the current page (``browser.page``, a plain
Playwright ``Page`` that users may drive directly). Around that it adds what an agent needs:

* the browser survives "Interrupt kernel" (the driver runs in its own process session, see ``launch.py``);
* a closed or crashed browser or tab is replaced on the next use, and the next result says so;
* tabs the site opens are tracked and the newest becomes current; ``switch_tab`` goes back;
* dialogs are answered by a policy and reported, never silently lost;
* :meth:`snapshot` builds the indexed browser state, :meth:`act` runs one built-in action by name.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from playwright.async_api import (
    Browser,
    BrowserContext,
    Dialog,
    ElementHandle,
    Frame,
    Page,
    Playwright,
    Request,
    ViewportSize,
)
from playwright.async_api import Error as PlaywrightError

from ..core.abort import AbortSignal
from ..core.tools import Tool, ToolArgumentError, ToolResult
from .launch import DEFAULT_ARGS, find_browser, start_playwright
from .snapshot import (
    LISTENER_TRACKER,
    MISSING,
    ElementInfo,
    FrameResult,
    Snapshot,
    TabInfo,
    build_snapshot,
    call_page_api,
    page_api_handle,
)

if TYPE_CHECKING:
    from .actions import AskUser

log = logging.getLogger(__name__)


@dataclass
class DialogInfo:
    """What a dialog policy callable receives."""

    type: str  # "alert" | "confirm" | "prompt" | "beforeunload"
    message: str
    default_value: str
    url: str


DialogDecision: TypeAlias = bool | str | None
DialogPolicy: TypeAlias = (
    Literal["accept", "dismiss"] | Callable[[DialogInfo], DialogDecision | Awaitable[DialogDecision]]
)


class ActionError(Exception):
    """A model-facing failure; the message (without the "Error: " prefix) is what the model reads."""


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


_REASONS = (
    "intercepts pointer events",
    "not visible",
    "not stable",
    "not enabled",
    "outside of the viewport",
    "not attached",
    "not editable",
    "detached",
)


def _first_line(exc: BaseException) -> str:
    """The informative line of a Playwright error: its first line, or for timeouts the line saying why the
    element was not actionable (e.g. "<div id=overlay> intercepts pointer events")."""
    msg = str(exc).strip().splitlines()
    first = msg[0] if msg else type(exc).__name__
    if "Timeout" in first:
        for line in reversed(msg):
            text = line.strip(" -")
            if any(r in text for r in _REASONS) and not text.startswith(("waiting for", "retrying")):
                first = text
                break
    for prefix in ("Error: ", "TimeoutError: "):
        if first.startswith(prefix):
            first = first[len(prefix) :]
    return _short(first, 200)


class ActionWatch:
    """Notices what an action caused: a navigation of the current tab, or new tabs. See :meth:`settle`."""

    def __init__(self, session: BrowserSession, page: Page) -> None:
        self.session = session
        self.page = page
        self.start_url = page.url
        self.nav_started = False
        self.committed = False
        self.new_pages: list[Page] = []
        self._event = asyncio.Event()
        self._committed_event = asyncio.Event()
        page.on("request", self._on_request)
        page.on("framenavigated", self._on_navigated)

    def _on_request(self, request: Request) -> None:
        try:
            if request.is_navigation_request() and request.frame == self.page.main_frame:
                self.nav_started = True
                self._event.set()
        except PlaywrightError:
            pass

    def _on_navigated(self, frame: Frame) -> None:
        if frame == self.page.main_frame:
            self.committed = True
            self._event.set()
            self._committed_event.set()

    def on_new_page(self, page: Page) -> None:
        self.new_pages.append(page)
        self._event.set()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.page.remove_listener("request", self._on_request)
            self.page.remove_listener("framenavigated", self._on_navigated)

    async def settle(
        self,
        signal: AbortSignal | None = None,
        grace: float = 0.1,
        timeout: float = 5.0,
        expect_popup: bool = False,
    ) -> None:
        """Wait up to ``grace`` seconds for a navigation or tab to start; if one did, wait (bounded by
        ``timeout``) until its document is parsed. No fixed sleep when something happened at once.
        ``expect_popup`` (a target=_blank link) waits up to ``timeout`` for the new tab instead of ``grace``."""

        async def run() -> None:
            if not self._event.is_set():
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._event.wait(), min(timeout, 3.0) if expect_popup else grace)
            if self.nav_started and not self.committed:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._committed_event.wait(), timeout)
            if self.committed and not self.page.is_closed():
                with contextlib.suppress(PlaywrightError):
                    await self.page.wait_for_load_state("domcontentloaded", timeout=timeout * 1000)
            for p in self.new_pages:
                with contextlib.suppress(PlaywrightError):
                    await p.wait_for_load_state("domcontentloaded", timeout=timeout * 1000)

        if signal is not None:
            await signal.race(run())
        else:
            await run()

    def describe(self) -> str:
        """Sentences for the action result, e.g. "The page navigated to …"."""
        out = []
        if not self.page.is_closed() and (self.committed or self.nav_started) and self.page.url != self.start_url:
            out.append(f"The page navigated to {self.page.url}.")
        elif self.committed and self.nav_started and not self.page.is_closed():
            out.append("The page reloaded.")
        for p in self.new_pages:
            if p.is_closed():
                continue
            tab = self.session.tab_id(p)
            current = " and is now the current tab" if p is self.session._page else ""
            out.append(f"It opened a new tab (tab {tab}: {p.url}){current}.")
        return " ".join(out)


class BrowserSession:
    """A Chromium browser for an agent, usable as ``async with BrowserSession() as browser:``.

    ``executable_path``/``$NOTEBOOK_AGENT_BROWSER`` pick a binary (else :func:`find_browser` searches);
    ``cdp_url`` connects to a running Chrome over CDP; ``ws_endpoint`` connects to a Playwright server.
    ``dialog_policy`` answers alert/confirm/prompt dialogs: "accept" (default; prompts get their default
    value), "dismiss", or a callable taking a :class:`DialogInfo` and returning True (accept), False (dismiss),
    a string (answer a prompt) or None (accept), possibly awaitable.

    Interrupt safety has two layers: the Playwright driver runs in a new process session
    (``new_process_session``), and the driver is told not to close the browser on SIGINT/SIGTERM/SIGHUP
    (override through ``launch_options``, which are passed to ``chromium.launch``).
    """

    def __init__(
        self,
        headless: bool = True,
        viewport: tuple[int, int] = (1280, 800),
        executable_path: str | None = None,
        cdp_url: str | None = None,
        ws_endpoint: str | None = None,
        *,
        args: tuple[str, ...] | list[str] = (),
        dialog_policy: DialogPolicy = "accept",
        on_ask_user: AskUser | None = None,
        track_listeners: bool = True,
        new_process_session: bool = True,
        action_timeout: float = 5.0,
        navigation_timeout: float = 20.0,
        context_options: Mapping[str, Any] | None = None,
        launch_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.headless = headless
        self.viewport = viewport
        self.executable_path = executable_path
        self.cdp_url = cdp_url
        self.ws_endpoint = ws_endpoint
        self.args = list(args)
        self.dialog_policy: DialogPolicy = dialog_policy
        self.on_ask_user = on_ask_user
        self.track_listeners = track_listeners
        self.new_process_session = new_process_session
        self.action_timeout = action_timeout
        self.navigation_timeout = navigation_timeout
        self.context_options = dict(context_options or {})
        self.launch_options = dict(launch_options or {})

        self._pw: Playwright | None = None
        self._browser: Browser | None = None
        self._context: BrowserContext | None = None
        self._page: Page | None = None
        self._owns_context = True
        self._started = False
        self._closing = False
        self._tab_ids: dict[Page, int] = {}
        self._next_tab = 0
        self._crashed: set[Page] = set()
        self._watchers: list[ActionWatch] = []
        self._frame_handles: dict[Frame, ElementHandle] = {}
        self._pending: list[str] = []
        self._creating_page = False
        self._last_relaunched = False
        self._lock = asyncio.Lock()
        self._snapshot_seq = 0
        self._last_snapshot: Snapshot | None = None
        self._refs: dict[int, tuple[Frame, int]] = {}
        self._refs_page: Page | None = None
        self._last_snapshot_time: float | None = None
        self._tools: dict[str, Tool] | None = None
        #: Every notice the session produced (dialogs, relaunches, tabs), oldest first, for UIs and logs.
        self.log: list[str] = []
        #: Which browser binary was launched ("" when connected to a running browser).
        self.browser_path = ""
        self._fork_of: BrowserSession | None = None

    # -- lifecycle ------------------------------------------------------------------------------------------
    async def __aenter__(self) -> BrowserSession:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> BrowserSession:
        """Start Playwright and the browser, open one tab. Idempotent."""
        if self._started:
            return self
        self._closing = False
        if self._pw is None:
            self._pw = await start_playwright(new_session=self.new_process_session)
        try:
            await self._open_browser()
        except BaseException:
            await self._stop_playwright()
            raise
        self._started = True
        return self

    async def _open_browser(self) -> None:
        assert self._pw is not None
        chromium = self._pw.chromium
        viewport: ViewportSize = {"width": self.viewport[0], "height": self.viewport[1]}
        if self.cdp_url:
            self._browser = await chromium.connect_over_cdp(self.cdp_url)
            if self._browser.contexts:
                self._context = self._browser.contexts[0]
                self._owns_context = False
            else:
                self._context = await self._browser.new_context(viewport=viewport, **self.context_options)
                self._owns_context = True
        else:
            if self.ws_endpoint:
                self._browser = await chromium.connect(self.ws_endpoint)
            else:
                pw_path = ""
                with contextlib.suppress(Exception):
                    pw_path = chromium.executable_path
                path = find_browser(self.executable_path, headless=self.headless, playwright_path=pw_path or None)
                self.browser_path = path
                # The driver must not close the browser on signals either: SIGINT is the notebook's interrupt.
                options: dict[str, Any] = {
                    "executable_path": path,
                    "headless": self.headless,
                    "args": [*DEFAULT_ARGS, *self.args],
                    "handle_sigint": False,
                    "handle_sigterm": False,
                    "handle_sighup": False,
                    **self.launch_options,
                }
                self._browser = await chromium.launch(**options)
            self._context = await self._browser.new_context(viewport=viewport, **self.context_options)
            self._owns_context = True
        if self.track_listeners:
            await self._context.add_init_script(LISTENER_TRACKER)
        self._context.on("page", self._on_context_page)
        existing = [p for p in self._context.pages if not p.is_closed()]
        for p in existing:
            self._register_page(p)
        if existing:
            self._page = existing[-1]
        else:
            await self._new_page()

    async def _new_page(self) -> Page:
        assert self._context is not None
        self._creating_page = True
        try:
            page = await self._context.new_page()
        finally:
            self._creating_page = False
        self._register_page(page)
        self._page = page
        return page

    async def fork(self) -> BrowserSession:
        """A new session in the same browser with a context of its own (fresh cookies, storage and tabs), so
        parallel runs share one browser process without seeing each other's state. Closing the fork closes
        only its context."""
        await self.start()
        assert self._pw is not None and self._browser is not None
        child = BrowserSession(
            headless=self.headless,
            viewport=self.viewport,
            dialog_policy=self.dialog_policy,
            track_listeners=self.track_listeners,
            action_timeout=self.action_timeout,
            navigation_timeout=self.navigation_timeout,
            context_options=self.context_options,
        )
        child._pw, child._browser, child._fork_of = self._pw, self._browser, self
        child._context = await self._browser.new_context(
            viewport={"width": self.viewport[0], "height": self.viewport[1]}, **self.context_options
        )
        if self.track_listeners:
            await child._context.add_init_script(LISTENER_TRACKER)
        child._context.on("page", child._on_context_page)
        await child._new_page()
        child._started = True
        return child

    async def close(self) -> None:
        """Close the browser (or disconnect from it) and stop Playwright. Safe to call twice."""
        if self._fork_of is not None:  # a fork owns only its context
            context, self._context, self._page, self._started = self._context, None, None, False
            self._refs.clear()
            if context is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(context.close(), 10)
            return
        self._closing = True
        self._started = False
        browser, self._browser = self._browser, None
        context, self._context = self._context, None
        self._page = None
        self._frame_handles.clear()
        self._refs.clear()
        try:
            if context is not None and self._owns_context and (self.cdp_url or self.ws_endpoint):
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(context.close(), 10)
            if browser is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(browser.close(), 10)
        finally:
            await self._stop_playwright()

    async def _stop_playwright(self) -> None:
        pw, self._pw = self._pw, None
        if pw is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(pw.stop(), 10)

    # -- accessors ------------------------------------------------------------------------------------------
    @property
    def page(self) -> Page:
        """The current tab. Raises if the session was not started."""
        if self._page is None:
            raise RuntimeError("BrowserSession is not started: use `async with BrowserSession()` or `await .start()`")
        return self._page

    @property
    def context(self) -> BrowserContext:
        if self._context is None:
            raise RuntimeError("BrowserSession is not started")
        return self._context

    @property
    def browser(self) -> Browser:
        if self._browser is None:
            raise RuntimeError("BrowserSession is not started")
        return self._browser

    @property
    def playwright(self) -> Playwright:
        if self._pw is None:
            raise RuntimeError("BrowserSession is not started")
        return self._pw

    @property
    def last_snapshot(self) -> Snapshot | None:
        return self._last_snapshot

    def element(self, index: int) -> ElementInfo | None:
        """The latest snapshot's element ``[index]`` (tag, text, attributes, box), or None."""
        if self._last_snapshot is None:
            return None
        return self._last_snapshot.elements.get(index)

    @property
    def notices(self) -> list[str]:
        """Notices not yet reported to the model (the next action result or snapshot takes them)."""
        return list(self._pending)

    def take_notices(self) -> list[str]:
        out, self._pending = self._pending, []
        return out

    def _notice(self, text: str) -> None:
        if self._closing:
            return
        self._pending.append(text)
        self.log.append(text)
        log.info("browser: %s", text)

    @property
    def tools(self) -> dict[str, Tool]:
        """The built-in action tools bound to this session (created once)."""
        if self._tools is None:
            from .actions import builtin_tools

            self._tools = builtin_tools(self, on_ask_user=self.on_ask_user)
        return self._tools

    # -- tabs -----------------------------------------------------------------------------------------------
    def tab_id(self, page: Page) -> int:
        return self._tab_ids.get(page, -1)

    def _open_pages(self) -> list[Page]:
        return [p for p in self._tab_ids if not p.is_closed()]

    def _register_page(self, page: Page) -> None:
        if page in self._tab_ids:
            return
        self._tab_ids[page] = self._next_tab
        self._next_tab += 1
        page.on("dialog", self._on_dialog)
        page.on("crash", self._on_crash)
        page.on("close", self._on_close)
        page.on("framedetached", self._on_frame_detached)

    def _on_context_page(self, page: Page) -> None:
        if page in self._tab_ids:
            return
        self._register_page(page)
        if self._creating_page:
            return
        self._page = page
        if self._watchers:
            for w in self._watchers:
                w.on_new_page(page)
        else:
            self._notice(f"A new tab was opened (tab {self.tab_id(page)}); it is now the current tab.")

    def _on_close(self, page: Page) -> None:
        # The replacement (and its notice) happens lazily in ensure_page(), which can tell a closed tab from a
        # browser that went away as a whole.
        self._crashed.discard(page)

    def _on_crash(self, page: Page) -> None:
        self._crashed.add(page)

    def _on_frame_detached(self, frame: Frame) -> None:
        self._frame_handles.pop(frame, None)

    async def tab_infos(self, current_title: str | None = None) -> list[TabInfo]:
        """Open tabs in opening order; ``current_title`` spares a round trip when the caller knows it."""
        pages = self._open_pages()

        async def title(p: Page) -> str:
            if p is self._page and current_title is not None:
                return current_title
            try:
                return await asyncio.wait_for(p.title(), 2)
            except (TimeoutError, PlaywrightError):
                return ""

        titles = await asyncio.gather(*(title(p) for p in pages))
        return [TabInfo(self.tab_id(p), p.url, t, p is self._page) for p, t in zip(pages, titles, strict=True)]

    async def new_tab(self, url: str | None = None) -> Page:
        """Open a tab (optionally at ``url``) and make it current; no "new tab" notice, since the caller knows."""
        await self.ensure_page()
        page = await self._new_page()
        if url:
            await page.goto(url, wait_until="domcontentloaded", timeout=self.navigation_timeout * 1000)
        return page

    async def switch_tab(self, tab_id: int) -> Page:
        """Make tab ``tab_id`` current; raises :class:`ActionError` naming the open tabs if there is none."""
        for p in self._open_pages():
            if self.tab_id(p) == tab_id:
                self._page = p
                with contextlib.suppress(PlaywrightError):
                    await p.bring_to_front()
                return p
        tabs = ", ".join(f"{self.tab_id(p)} ({p.url})" for p in self._open_pages())
        raise ActionError(f"there is no tab {tab_id}. Open tabs: {tabs}.")

    # -- dialogs --------------------------------------------------------------------------------------------
    async def _on_dialog(self, dialog: Dialog) -> None:
        info = DialogInfo(dialog.type, dialog.message, dialog.default_value, dialog.page.url if dialog.page else "")
        decision: DialogDecision = True
        policy = self.dialog_policy
        try:
            if policy == "dismiss":
                decision = False
            elif callable(policy):
                result = policy(info)
                if inspect.isawaitable(result):
                    result = await result
                decision = True if result is None else result
        except Exception as exc:  # a broken policy must not leave the page blocked
            log.warning("dialog policy failed: %s", exc)
            decision = False
        try:
            if isinstance(decision, str) and not isinstance(decision, bool):
                await dialog.accept(decision)
                outcome = f"it was answered with '{_short(decision)}'"
            elif decision:
                await dialog.accept()
                outcome = "it was accepted"
            else:
                await dialog.dismiss()
                outcome = "it was dismissed"
        except PlaywrightError as exc:
            outcome = f"it could not be answered ({_first_line(exc)})"
        article = "An" if info.type[:1] in "aeiou" else "A"
        message = f"{article} {info.type} dialog said '{_short(info.message, 200)}'; {outcome}."
        self._notice(message)

    # -- health ---------------------------------------------------------------------------------------------
    async def ensure_page(self) -> Page:
        """The current page, replacing a closed or crashed browser/tab first (with a notice)."""
        async with self._lock:
            if not self._started:
                await self.start()
            if self._browser is None or not self._browser.is_connected():
                await self._relaunch()
                self._notice("The browser was closed; it was relaunched at about:blank.")
                assert self._page is not None
                return self._page
            page = self._page
            if page is not None and page in self._crashed:
                self._crashed.discard(page)
                self._forget_snapshot()
                tab = self.tab_id(page)
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(page.close(), 5)
                self._page = None
                new = await self._safe_new_page()
                self._notice(f"The page in tab {tab} crashed; it was reopened at about:blank (tab {self.tab_id(new)}).")
                return new
            if page is None or page.is_closed():
                self._forget_snapshot()
                remaining = self._open_pages()
                if remaining:
                    self._page = remaining[-1]
                    self._notice(
                        f"Tab {self.tab_id(page) if page else '?'} was closed; tab {self.tab_id(self._page)} "
                        f"({self._page.url}) is now the current tab."
                    )
                    return self._page
                new = await self._safe_new_page()
                if self._browser is not None and new is not None and self._last_relaunched:
                    self._last_relaunched = False
                    self._notice("The browser was closed; it was relaunched at about:blank.")
                else:
                    self._notice("The browser tab was closed; a new tab was opened at about:blank.")
                return new
            return page

    def _forget_snapshot(self) -> None:
        """Indices of a tab that went away must not resolve against its replacement."""
        self._refs = {}
        self._refs_page = None

    async def _safe_new_page(self) -> Page:
        try:
            return await self._new_page()
        except PlaywrightError:
            # the context went away (closed by the user): start a fresh browser
            await self._relaunch()
            self._last_relaunched = True
            assert self._page is not None
            return self._page

    async def _relaunch(self) -> None:
        log.warning("browser disconnected; relaunching")
        old_browser, self._browser = self._browser, None
        self._context = None
        self._page = None
        self._tab_ids.clear()
        self._frame_handles.clear()
        self._refs.clear()
        self._crashed.clear()
        if old_browser is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(old_browser.close(), 5)
        try:
            await self._open_browser()
        except PlaywrightError:
            # the driver itself died: start Playwright again
            await self._stop_playwright()
            self._pw = await start_playwright(new_session=self.new_process_session)
            await self._open_browser()

    # -- snapshot -------------------------------------------------------------------------------------------
    async def _frame_element(self, frame: Frame) -> ElementHandle | None:
        cached = self._frame_handles.get(frame)
        if cached is not None:
            return cached
        try:
            handle = await asyncio.wait_for(frame.frame_element(), 3)
        except (TimeoutError, PlaywrightError):
            return None
        self._frame_handles[frame] = handle
        return handle

    async def _read_frames(
        self, page: Page, op: dict[str, Any], *, max_frames: int = 60, resend: bool = False
    ) -> tuple[dict[Frame, FrameResult], Frame]:
        main = page.main_frame
        frames = [f for f in page.frames if not f.is_detached()][:max_frames]
        if main not in frames:
            frames.insert(0, main)
        children: dict[Frame, list[Frame]] = {}
        others = [f for f in frames if f is not main]
        handles = await asyncio.gather(*(self._frame_element(f) for f in others))
        handle_of = {f: h for f, h in zip(others, handles, strict=True) if h is not None}
        for f in others:
            parent = f.parent_frame
            if parent is not None and f in handle_of:
                children.setdefault(parent, []).append(f)

        async def run(frame: Frame) -> FrameResult | None:
            kids = children.get(frame, [])
            arg = {**op, "frames": [handle_of[c] for c in kids]}
            timeout = 15.0 if frame is main else 5.0
            try:
                raw = await asyncio.wait_for(call_page_api(frame, arg, resend=resend), timeout)
            except (TimeoutError, PlaywrightError) as exc:
                if frame is main:
                    raise
                log.debug("frame %s not read: %s", frame.url, exc)
                return None
            return FrameResult(frame, json.loads(raw), kids, frame.url)

        done = await asyncio.gather(*(run(f) for f in frames))
        results = {r.frame: r for r in done if r is not None}
        return results, main

    async def snapshot(
        self,
        full_page: bool = False,
        max_elements: int | None = None,
        max_chars: int | None = None,
        *,
        _resend_script: bool = False,
    ) -> Snapshot:
        """Read the current tab: URL, title, tabs, scroll position, indexed elements and page text.

        Viewport mode (default) lists what is on screen with "N pixels above/below" hints; ``full_page`` lists
        the whole page. ``max_elements``/``max_chars`` cap the text, keeping what is nearest the viewport and
        saying what was cut. Indices are valid until the next snapshot.
        """
        page = await self.ensure_page()
        t0 = time.perf_counter()
        self._snapshot_seq += 1
        seq = self._snapshot_seq
        op = {"op": "snapshot", "full": full_page, "id": seq}
        try:
            results, main = await self._read_frames(page, op, resend=_resend_script)
        except PlaywrightError:
            # typically "execution context was destroyed" mid-navigation: let the new document load, retry once
            # (cached iframe handles may belong to the old document)
            self._frame_handles.clear()
            with contextlib.suppress(PlaywrightError):
                await page.wait_for_load_state("domcontentloaded", timeout=self.navigation_timeout * 1000)
            results, main = await self._read_frames(page, op, resend=_resend_script)
        tabs = await self.tab_infos(str(results[main].data.get("title", "")))
        t1 = time.perf_counter()
        snap, refs = build_snapshot(
            results,
            main,
            full_page=full_page,
            max_elements=max_elements,
            max_chars=max_chars,
            tabs=tabs,
            notices=self.take_notices(),
            snapshot_id=seq,
        )
        t2 = time.perf_counter()
        snap.timings = {
            "total_ms": round((t2 - t0) * 1000, 2),
            "frames_ms": round((t1 - t0) * 1000, 2),
            "script_ms": float(results[main].data.get("ms", 0.0)),
            "build_ms": round((t2 - t1) * 1000, 2),
        }
        self._last_snapshot = snap
        self._refs = refs
        self._refs_page = page
        self._last_snapshot_time = time.monotonic()
        return snap

    # -- element resolution (for actions) -------------------------------------------------------------------
    async def resolve(self, index: int) -> tuple[ElementHandle, ElementInfo, Frame, int]:
        """Element ``[index]`` of the latest snapshot as a live handle, or :class:`ActionError` saying why not."""
        snap = self._last_snapshot
        info = snap.elements.get(index) if snap is not None else None
        if snap is None or info is None or index not in self._refs:
            raise ActionError(
                f"no element [{index}] in the current page snapshot. Use an index from the latest browser state."
            )
        frame, local = self._refs[index]
        page = self._page
        if page is None or page is not self._refs_page or page.is_closed():
            raise ActionError(
                f"element [{index}] belongs to a tab that is no longer current. "
                "Use an index from the latest browser state."
            )
        if frame.is_detached():
            raise ActionError(
                f"element [{index}] is no longer on the page (its frame was removed or reloaded). "
                "Use an index from the latest browser state."
            )
        try:
            handle = await page_api_handle(frame, {"op": "get", "i": local, "id": snap.snapshot_id})
        except PlaywrightError as exc:
            raise ActionError(
                f"element [{index}] could not be found ({_first_line(exc)}). "
                "Use an index from the latest browser state."
            ) from None
        element = handle.as_element()
        if element is None:
            code = await handle.json_value()
            with contextlib.suppress(PlaywrightError):
                await handle.dispose()
            if code == "detached":
                reason = "it was removed from the page since the last browser state"
            else:
                reason = "the page changed (navigated or reloaded) since the last browser state"
            del code
            raise ActionError(
                f"element [{index}] {info.describe(60)} is no longer on the page: {reason}. "
                "Use an index from the latest browser state."
            )
        return element, info, frame, local

    # -- actions --------------------------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def watch(self) -> AsyncIterator[ActionWatch]:
        """Track navigations and new tabs caused by the actions inside the block."""
        page = await self.ensure_page()
        watcher = ActionWatch(self, page)
        self._watchers.append(watcher)
        try:
            yield watcher
        finally:
            watcher.close()
            with contextlib.suppress(ValueError):
                self._watchers.remove(watcher)

    def finish(self, text: str, *, is_error: bool = False, details: Any = None) -> ToolResult:
        """An action result with pending notices (dialogs, relaunches, tabs) appended."""
        notes = self.take_notices()
        if notes:
            text = text.rstrip() + " " + " ".join(notes)
        return ToolResult.text(text, is_error=is_error, details=details)

    async def act(
        self,
        action: Mapping[str, Any] | str,
        args: Mapping[str, Any] | None = None,
        *,
        signal: AbortSignal | None = None,
    ) -> ToolResult:
        """Run one built-in action: ``act({"click_element_by_index": {"index": 3}})`` or
        ``act("scroll", {"down": True})``. Arguments are validated by the tool; problems come back as
        error results, never as exceptions."""
        if isinstance(action, str):
            name, raw = action, dict(args or {})
        else:
            if len(action) != 1:
                return ToolResult.text(
                    f"Error: give exactly one action, got {len(action)}: {', '.join(action) or 'none'}.", is_error=True
                )
            name, value = next(iter(action.items()))
            raw = value
        tool = self.tools.get(name)
        if tool is None:
            return ToolResult.text(
                f"Error: unknown action '{name}'. Available: {', '.join(self.tools)}.", is_error=True
            )
        reason = tool.unavailable_reason()
        if reason:
            return ToolResult.text(f"Error: action '{name}' is not available: {reason}.", is_error=True)
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            raw = _coerce_primitive(tool, raw)
        try:
            parsed = tool.validate(tool.prepare_arguments(dict(raw)))
        except ToolArgumentError as exc:
            return ToolResult.text(f"Error: {exc}", is_error=True)

        async def no_update(_: Any) -> None:
            return None

        result = await tool.execute(f"act-{name}", parsed, signal or AbortSignal(), no_update)
        if isinstance(result, str):
            result = ToolResult.text(result)
        return result

    # -- screenshot -----------------------------------------------------------------------------------------
    async def _live_boxes(self, page: Page) -> list[list[float]]:
        """Current boxes of the latest snapshot's elements, in top-viewport coordinates."""
        by_frame: dict[Frame, dict[int, int]] = {}
        for index, (frame, local) in self._refs.items():
            by_frame.setdefault(frame, {})[local] = index

        offsets: dict[Frame, tuple[float, float] | None] = {page.main_frame: (0.0, 0.0)}

        async def offset(frame: Frame) -> tuple[float, float] | None:
            if frame in offsets:
                return offsets[frame]
            parent = frame.parent_frame
            handle = await self._frame_element(frame)
            if parent is None or handle is None:
                offsets[frame] = None
                return None
            base = await offset(parent)
            if base is None:
                offsets[frame] = None
                return None
            try:
                rel = await call_page_api(parent, {"op": "frameOffsets", "frames": [handle]})
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

    async def screenshot(
        self,
        highlight: bool = False,
        format: Literal["png", "jpeg"] = "png",
        full_page: bool = False,
        quality: int | None = None,
    ) -> bytes:
        """A screenshot of the current tab. ``highlight`` draws each indexed element's box and index (taking a
        snapshot first if there is none for this tab), then removes the overlay again."""
        page = await self.ensure_page()
        overlay = False
        try:
            if highlight:
                if self._last_snapshot is None or self._refs_page is not page:
                    await self.snapshot()
                boxes = await self._live_boxes(page)
                size = page.viewport_size
                if not full_page and size:  # draw only what the picture will show
                    w, h = size["width"], size["height"]
                    boxes = [b for b in boxes if b[1] + b[3] > 0 and b[1] < w and b[2] + b[4] > 0 and b[2] < h]
                await call_page_api(page.main_frame, {"op": "overlay", "boxes": boxes})
                overlay = True
            kwargs: dict[str, Any] = {"type": format, "full_page": full_page}
            if format == "jpeg":
                kwargs["quality"] = quality if quality is not None else 80
            return await page.screenshot(**kwargs)
        finally:
            if overlay:
                with contextlib.suppress(PlaywrightError):
                    await call_page_api(page.main_frame, {"op": "removeOverlay"})

    @property
    def seconds_since_snapshot(self) -> float | None:
        if self._last_snapshot_time is None:
            return None
        return time.monotonic() - self._last_snapshot_time


def _coerce_primitive(tool: Tool, value: Any) -> dict[str, Any]:
    """``{"wait": 3}`` → ``{"seconds": 3}``: put a bare value on the tool's first required field (or first)."""
    schema = tool.json_schema()
    props = list(schema.get("properties", {}))
    required = [p for p in schema.get("required", []) if p in props]
    key = (required or props or ["value"])[0]
    return {key: value}


__all__ = ["MISSING", "ActionError", "ActionWatch", "BrowserSession", "DialogInfo", "DialogPolicy"]

"""BrowserSession: one Playwright browser, its context and the current tab, made safe to use from a notebook.

The session owns Playwright, the browser, one context and the current page (``browser.page``, a plain
Playwright ``Page`` that users may drive directly). This module is the facade: every public method, and when
things happen (start on first use, a closed or crashed browser or tab replaced on the next use, with the next
result saying so, close). How each thing is done belongs to a part it composes, each in a module of its own:

* :class:`~.lifecycle.Lifecycle`: opening the browser, opening tabs, relaunching, reopening, closing;
  :mod:`~.tab_sessions`: what tab sessions and forks share and may close;
* :class:`~.tabs.Tabs`: tab ids, tabs the site opens, dialogs answered by a policy, downloads;
* :class:`~.reader.PageReader`: the indexed snapshot, element resolution, screenshots;
* :class:`~.guard.NavigationGate`: the navigation guard; :class:`~.hung.HungPages`: pages that stopped
  answering; :class:`~.ownership.Ownership`: which run drives the session;
* :class:`~.watch.ActionWatch`: what an action caused (navigation, new tabs);
* :class:`~.report.Notices`: what happened outside any action, reported with the next result;
* the built-in actions (``actions/``), which see the session only through their ``ActionHost`` interface;
  :meth:`act` runs one of them by name.

The browser survives "Interrupt kernel": the driver runs in its own process session (see ``launch.py``).

Where the caller's event loop cannot start subprocesses (Jupyter on Windows), the session runs the browser on
a thread of its own (see ``threaded.py``): its public coroutine methods hop to that thread's loop, so callers
do not need to know which mode it is in.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

from playwright.async_api import (
    Browser,
    BrowserContext,
    ElementHandle,
    Frame,
    Page,
    Playwright,
)
from playwright.async_api import Error as PlaywrightError

from ..core.abort import AbortSignal
from ..core.text import clean_text
from ..core.tools import Tool, ToolResult
from .actions import AskUser, builtin_tools, run_action
from .guard import NavigationGate, NavigationGuard
from .hung import HungPages, is_responsive
from .lifecycle import Lifecycle
from .ownership import BrowserBusyError, Ownership
from .reader import SENSITIVE_FIELDS, PageReader
from .report import ActionError, Notices
from .snapshot import FULL_PAGE_MAX_CHARS, ElementInfo, Snapshot, TabInfo
from .tab_sessions import ForkLifecycle, TabSessionLifecycle
from .tabs import DialogInfo, DialogPolicy, Tabs
from .threaded import BrowserThread, bridge_tools, loop_can_spawn, on_browser_loop, remember_refusal
from .urls import URLError, navigation_error, normalize_url
from .watch import ActionWatch

T = TypeVar("T")


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

    ``threaded``: None (default) runs the browser on the caller's event loop when that loop can start
    subprocesses, and on a thread with its own loop when it cannot (Jupyter on Windows); True or False forces
    one mode. In threaded mode ``page``, ``context`` and every other Playwright object belong to the browser
    thread: use them inside ``await browser.call(fn)``, not directly from the kernel's loop.
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
        downloads_dir: str = "agent_downloads",
        threaded: bool | None = None,
    ) -> None:
        self.headless = headless
        self.viewport = viewport
        self.executable_path = executable_path
        self.cdp_url = cdp_url
        self.ws_endpoint = ws_endpoint
        self.args = list(args)
        self.on_ask_user = on_ask_user
        self.track_listeners = track_listeners
        self.new_process_session = new_process_session
        self.action_timeout = action_timeout
        self.navigation_timeout = navigation_timeout
        self.context_options = dict(context_options or {})
        self.launch_options = dict(launch_options or {})
        self.threaded = threaded
        self._thread: BrowserThread | None = None

        self._started = False
        self._lock = asyncio.Lock()
        self._tools: dict[str, Tool] | None = None
        self._notices = Notices()
        self._reader = PageReader()
        self._tabs = Tabs(self._notices, dialog_policy, self._reader.on_frame_detached, downloads_dir)
        self._gate = NavigationGate(self._tabs, self._notices)
        self._hung = HungPages(self._tabs, self._reader, self._notices)
        self._life = Lifecycle(self, self._tabs, self._reader, self._notices, self._gate)
        self._tab_of: BrowserSession | None = None
        self._ownership = Ownership()

    # -- lifecycle (the mechanics are in lifecycle.py; sessions sharing a browser in tab_sessions.py) ---------
    async def __aenter__(self) -> BrowserSession:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _choose_mode(self) -> None:
        """Decide, before anything Playwright exists, which loop the browser will live on (see ``threaded``)."""
        if self._thread is not None or self._started or self._life.pw is not None:
            return
        threaded = self.threaded if self.threaded is not None else not await loop_can_spawn()
        if threaded:
            self._thread = BrowserThread()

    @on_browser_loop
    async def start(self) -> BrowserSession:
        """Start Playwright and the browser, open one tab. Idempotent."""
        if self._started:
            return self
        if self._tab_of is not None:
            raise RuntimeError("This tab session was closed; ask the browser session for a new one (tab_session()).")
        self._notices.closing = False
        if self._life.pw is None:
            try:
                await self._life.start_playwright()
            except NotImplementedError:
                # the loop looked able to spawn but Playwright's spawn was refused: switch to a browser thread
                if self._thread is not None or self.threaded is False:
                    raise
                remember_refusal(asyncio.get_running_loop())
                self._thread = BrowserThread()
                return await self._thread.call(self.start())
        try:
            await self._life.open()
        except BaseException:
            await self._life.stop_playwright()
            raise
        self._started = True
        return self

    @on_browser_loop
    async def tab_session(self, url: str | None = None) -> BrowserSession:
        """A session bound to a new tab of this browser, for a run that must not share a tab with another.

        It shares the browser and the context (cookies, storage, logins) but has its own current tab, tab
        list, snapshot and notices: its actions, snapshots and screenshots only ever touch its own tabs, and
        tabs its pages open (popups, ``target=_blank``) are its own too. Tab ids are unique across the
        browser. Closing it closes only its tabs. It cannot relaunch the browser; if the browser goes away,
        its next use raises.
        """
        await self.ensure_page()
        root = self._tab_of or self
        child = BrowserSession(
            headless=root.headless,
            viewport=root.viewport,
            dialog_policy=root.dialog_policy,
            on_ask_user=root.on_ask_user,
            track_listeners=root.track_listeners,
            action_timeout=root.action_timeout,
            navigation_timeout=root.navigation_timeout,
        )
        child._tab_of, child._thread = root, root._thread  # its Playwright objects live where the root's do
        child.downloads_dir = root.downloads_dir
        child._life = TabSessionLifecycle(child._life, root._life)
        try:
            await child._life.new_page()
            child._started = True
            if url:
                await child.page.goto(url, wait_until="domcontentloaded", timeout=child.navigation_timeout * 1000)
        except BaseException:
            await child.close()
            raise
        return child

    @property
    def is_tab_session(self) -> bool:
        """True for a session made by :meth:`tab_session` (bound to its own tabs of a shared browser)."""
        return self._tab_of is not None

    @on_browser_loop
    async def fork(self) -> BrowserSession:
        """A new session in the same browser with a context of its own (fresh cookies, storage and tabs), so
        parallel runs share one browser process without seeing each other's state. Closing the fork closes
        only its context."""
        await self.start()
        assert self._life.pw is not None and self._life.browser is not None
        child = BrowserSession(
            headless=self.headless,
            viewport=self.viewport,
            dialog_policy=self.dialog_policy,
            track_listeners=self.track_listeners,
            action_timeout=self.action_timeout,
            navigation_timeout=self.navigation_timeout,
            context_options=self.context_options,
        )
        child._thread = self._thread  # the fork's Playwright objects live where its parent's do
        child._life = fork = ForkLifecycle(child._life, self._life)
        await fork.open_context(self._life)
        child._started = True
        return child

    async def close(self) -> None:
        """Close the browser (or disconnect from it) and stop Playwright. Safe to call twice. In threaded mode
        the browser thread ends too (a fork leaves it to its parent), so a later start decides afresh."""
        try:
            await self._close()
        finally:
            thread = self._thread
            if thread is not None and not self._life.shared:  # forks and tab sessions share it
                self._thread = None
                await thread.stop()

    @on_browser_loop
    async def _close(self) -> None:
        self._started = False
        await self._life.close()  # a tab session closes only its tabs, a fork only its context

    @on_browser_loop
    async def ensure_page(self) -> Page:
        """The current page, replacing a closed or crashed browser/tab first (with a notice)."""
        async with self._lock:
            if not self._started:
                await self.start()
            life, tabs = self._life, self._tabs
            if await life.relaunched_if_gone() or (
                tabs.current is not None and await self._hung.replaced(tabs.current, life.safe_new_page)
            ):
                assert tabs.current is not None
                return tabs.current
            return await life.reopen(tabs.current)

    # -- who drives it (see ownership.py) ----------------------------------------------------------------
    @contextlib.contextmanager
    def claim(self, owner: str) -> Iterator[None]:
        """Hold the session for one run: two runs acting on one tab see and undo each other's work (a click
        lands on the page the other opened), so a second claim is refused with :class:`BrowserBusyError`."""
        with self._ownership.claim(owner):
            yield

    @property
    def owner(self) -> str | None:
        """The run holding the session, if any."""
        return self._ownership.owner

    # -- hung pages (see hung.py) -----------------------------------------------------------------------------
    @on_browser_loop
    async def is_responsive(self, page: Page | None = None, timeout: float = 2.0) -> bool:
        """Whether the page's main thread still runs scripts (a page stuck in ``while(true){}`` does not)."""
        return await is_responsive(page or self._tabs.current, timeout)

    def mark_suspect(self) -> None:
        """An action was cut off mid-flight: check the page answers before it is used again."""
        self._hung.mark_suspect()

    @on_browser_loop
    async def replace_hung_page(self) -> str:
        """Close the current tab (without running its unload handlers, which could hang too) and open a new
        one at about:blank; returns the URL the hung tab was at."""
        return await self._hung.replace_current(self._life.safe_new_page)

    # -- accessors ------------------------------------------------------------------------------------------
    @property
    def page(self) -> Page:
        """The current tab. Raises if the session was not started."""
        if self._tabs.current is None:
            raise RuntimeError("BrowserSession is not started: use `async with BrowserSession()` or `await .start()`")
        return self._tabs.current

    @property
    def context(self) -> BrowserContext:
        if self._life.context is None:
            raise RuntimeError("BrowserSession is not started")
        return self._life.context

    @property
    def browser(self) -> Browser:
        if self._life.browser is None:
            raise RuntimeError("BrowserSession is not started")
        return self._life.browser

    @property
    def playwright(self) -> Playwright:
        if self._life.pw is None:
            raise RuntimeError("BrowserSession is not started")
        return self._life.pw

    @property
    def browser_path(self) -> str:
        """Which browser binary was launched ("" when connected to a running browser)."""
        return self._life.path

    @browser_path.setter
    def browser_path(self, path: str) -> None:
        self._life.path = path

    @property
    def _pw(self) -> Playwright | None:  # read by tests (the lifecycle holds it)
        return self._life.pw

    @property
    def _browser(self) -> Browser | None:
        return self._life.browser

    @property
    def is_started(self) -> bool:
        return self._started

    @property
    def dialog_policy(self) -> DialogPolicy:
        return self._tabs.dialog_policy

    @dialog_policy.setter
    def dialog_policy(self, policy: DialogPolicy) -> None:
        self._tabs.dialog_policy = policy

    @property
    def log(self) -> list[str]:
        """Every notice the session produced (dialogs, relaunches, tabs), oldest first, for UIs and logs."""
        return self._notices.log

    @property
    def notices(self) -> list[str]:
        """Notices not yet reported to the model (the next action result or snapshot takes them)."""
        return list(self._notices.pending)

    def take_notices(self) -> list[str]:
        return self._notices.take()

    @property
    def last_snapshot(self) -> Snapshot | None:
        return self._reader.last_snapshot

    @property
    def seconds_since_snapshot(self) -> float | None:
        if self._reader.last_time is None:
            return None
        return time.monotonic() - self._reader.last_time

    def element(self, index: int) -> ElementInfo | None:
        """The latest snapshot's element ``[index]`` (tag, text, attributes, box), or None."""
        snap = self._reader.last_snapshot
        return None if snap is None else snap.elements.get(index)

    @property
    def is_threaded(self) -> bool:
        """Whether the browser runs on a thread of its own (the caller's loop could not start subprocesses)."""
        return self._thread is not None

    @on_browser_loop
    async def call(self, fn: Callable[..., Awaitable[T]], /, *args: Any, **kwargs: Any) -> T:
        """``await fn(*args, **kwargs)`` where the browser's Playwright objects live: in place normally, on the
        browser thread in threaded mode. The way to drive ``browser.page`` yourself in either mode::

            title = await browser.call(lambda: browser.page.title())
        """
        return await fn(*args, **kwargs)

    def bridge_tools(self, tools: Mapping[str, Tool]) -> dict[str, Tool]:
        """``tools`` made safe to execute from the caller's loop: in threaded mode the browser-driving ones
        (``runs_on_browser``) execute on the browser thread; otherwise they are returned as they are."""
        return bridge_tools(tools, self._thread)

    @property
    def tools(self) -> dict[str, Tool]:
        """The built-in action tools bound to this session (created once)."""
        if self._tools is None:
            self._tools = builtin_tools(self, on_ask_user=self.on_ask_user)
        return self._tools

    # -- tabs -----------------------------------------------------------------------------------------------
    def tab_id(self, page: Page) -> int:
        return self._tabs.tab_id(page)

    @on_browser_loop
    async def tab_infos(self, current_title: str | None = None) -> list[TabInfo]:
        """Open tabs in opening order; ``current_title`` spares a round trip when the caller knows it."""
        return await self._tabs.infos(current_title)

    @on_browser_loop
    async def new_tab(self, url: str | None = None) -> Page:
        """Open a tab (optionally at ``url``) and make it current; no "new tab" notice, since the caller knows."""
        await self.ensure_page()
        page = await self._life.new_page()
        if url:
            await page.goto(url, wait_until="domcontentloaded", timeout=self.navigation_timeout * 1000)
        return page

    @property
    def popup_mark(self) -> frozenset[Page]:
        """A mark for :meth:`close_popups`: the tabs open now."""
        return frozenset(self._tabs.open_pages())

    @on_browser_loop
    async def close_popups(self, mark: frozenset[Page]) -> int:
        """Close every tab opened since ``mark`` (see :attr:`popup_mark`) except the current one: a run's
        popups do not outlive it. Returns how many were closed."""
        return await self._tabs.close_since(mark)

    @property
    def downloads_dir(self) -> Path:
        """Where downloads are saved (``agent_downloads`` under the working folder unless set)."""
        return self._tabs.downloads_dir

    @downloads_dir.setter
    def downloads_dir(self, folder: str | Path) -> None:
        self._tabs.downloads_dir = Path(folder)

    @property
    def downloads(self) -> list[Path]:
        """Files the pages downloaded, where they were saved."""
        return list(self._tabs.downloads)

    @property
    def download_filter(self) -> Callable[[str, str], str | None] | None:
        """Decides each download this session's tabs start: given (file name, URL), a reason to cancel it, or
        None to save it. None (the default) saves every download. A run sets it from its approval policy."""
        return self._tabs.download_filter

    @download_filter.setter
    def download_filter(self, decide: Callable[[str, str], str | None] | None) -> None:
        self._tabs.download_filter = decide

    @on_browser_loop
    async def open(self, url: str, wait_until: Literal["domcontentloaded", "load"] = "domcontentloaded") -> Page:
        """Open ``url`` in the current tab, read the way people type it (``localhost:8000``, ``example.com``,
        a file path; see :func:`~.urls.normalize_url`). Raises :class:`~.urls.URLError` saying, in a sentence,
        why the URL is not one or why the page could not be opened."""
        target = normalize_url(url)
        page = await self.ensure_page()
        try:
            await page.goto(target, wait_until=wait_until, timeout=self.navigation_timeout * 1000)
        except PlaywrightError as exc:
            raise URLError(navigation_error(target, exc, self.navigation_timeout)) from None
        return page

    @on_browser_loop
    async def switch_tab(self, tab_id: int) -> Page:
        """Make tab ``tab_id`` current; raises :class:`ActionError` naming the open tabs if there is none."""
        return await self._tabs.switch(tab_id)

    # -- reading the page -----------------------------------------------------------------------------------
    @on_browser_loop
    async def snapshot(
        self,
        full_page: bool = False,
        max_elements: int | None = None,
        max_chars: int | None = None,
    ) -> Snapshot:
        """Read the current tab: URL, title, tabs, scroll position, indexed elements and page text.

        Viewport mode (default) lists what is on screen with "N pixels above/below" hints; ``full_page`` lists
        the whole page. ``max_elements``/``max_chars`` cap the text, keeping what is nearest the viewport and
        saying what was cut; a full-page snapshot given neither is capped at ``FULL_PAGE_MAX_CHARS`` (pass a
        larger ``max_chars`` for more). Indices are valid until the next snapshot.
        """
        if full_page and max_chars is None and max_elements is None:
            max_chars = FULL_PAGE_MAX_CHARS
        page = await self.ensure_page()
        return await self._reader.snapshot(
            page,
            tabs=self._tabs.infos,
            notices=self._notices.take(),
            full_page=full_page,
            max_elements=max_elements,
            max_chars=max_chars,
            load_timeout=self.navigation_timeout,
        )

    @on_browser_loop
    async def resolve(self, index: int) -> tuple[ElementHandle, ElementInfo, Frame, int]:
        """Element ``[index]`` of the latest snapshot as a live handle, or :class:`ActionError` saying why not."""
        return await self._reader.resolve(index, self._tabs.current)

    @on_browser_loop
    async def screenshot(
        self,
        highlight: bool = False,
        format: Literal["png", "jpeg"] = "png",
        full_page: bool = False,
        quality: int | None = None,
        mask_sensitive: bool = True,
    ) -> bytes:
        """A screenshot of the current tab. ``highlight`` draws each indexed element's box and index (taking a
        snapshot first if there is none for this tab), then removes the overlay again. Fields that look
        sensitive (passwords, one-time codes, card numbers, tokens, keys, secrets) are painted over unless
        ``mask_sensitive=False``, so a typed secret never lands in a picture."""
        page = await self.ensure_page()
        if highlight and (self._reader.last_snapshot is None or self._reader.refs_page is not page):
            await self.snapshot()
        mask = [page.locator(SENSITIVE_FIELDS)] if mask_sensitive else None
        return await self._reader.screenshot(
            page, highlight=highlight, format=format, full_page=full_page, quality=quality, mask=mask
        )

    # -- where navigation may go (see guard.py) ------------------------------------------------------------
    def navigation_refusal(self, url: str) -> str | None:
        """Why the guard refuses a navigation to ``url`` (a sentence), or None."""
        return self._gate.refusal(url)

    @on_browser_loop
    async def set_navigation_guard(self, guard: NavigationGuard | None) -> None:
        """Check every top-level navigation of every tab (typed URLs, link clicks, redirects, popups) with
        ``guard(url) -> reason or None``. A refused one is aborted before it loads, so the page stays where it
        was, and a notice says so. None removes the guard. Subframes are not checked (embedded widgets)."""
        await self._gate.set(guard, self._life.context)

    # -- acting ---------------------------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def watch(self) -> AsyncIterator[ActionWatch]:
        """Track navigations and new tabs caused by the actions inside the block. For actions, which run where
        the page lives; in threaded mode it cannot be entered from the caller's loop (it yields live objects)."""
        page = await self.ensure_page()
        watcher = ActionWatch(page, self._tabs.tab_of)
        self._tabs.watchers.append(watcher)
        try:
            yield watcher
        finally:
            watcher.close()
            with contextlib.suppress(ValueError):
                self._tabs.watchers.remove(watcher)

    def finish(self, text: str, *, is_error: bool = False, details: Any = None) -> ToolResult:
        """An action result with pending notices (dialogs, relaunches, tabs) appended."""
        notes = self._notices.take()
        if notes:
            text = text.rstrip() + " " + " ".join(notes)
        return ToolResult.text(clean_text(text), is_error=is_error, details=details)

    async def act(
        self,
        action: Mapping[str, Any] | str,
        args: Mapping[str, Any] | None = None,
        *,
        signal: AbortSignal | None = None,
    ) -> ToolResult:
        """Run one built-in action: ``act({"click_element_by_index": {"index": 3}})`` or
        ``act("scroll", {"down": True})``. Arguments are validated by the tool; problems come back as
        error results, never as exceptions. In threaded mode the browser actions execute on the browser thread
        and ``ask_user`` stays on the caller's loop, as in an agent run."""
        await self._choose_mode()
        return await run_action(self.bridge_tools(self.tools), action, args, signal=signal)


__all__ = [
    "ActionError",
    "ActionWatch",
    "BrowserBusyError",
    "BrowserSession",
    "DialogInfo",
    "DialogPolicy",
    "URLError",
]

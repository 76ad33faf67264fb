"""BrowserSession: one Playwright browser, its context and the current tab, made safe to use from a notebook.

The session owns Playwright, the browser, one context and the current page (``browser.page``, a plain
Playwright ``Page`` that users may drive directly). This class decides when things happen (start on first use, a
closed or crashed browser or tab replaced on the next use, with the next result saying so, close) and inherits
its public methods from its sides, each a class of its own module: what it holds (``accessors.py``), its tabs,
navigation and door (``pages.py``), reading a tab (``reading.py``) and acting (``acting.py``). How each thing is
done belongs to a part it composes:

* :class:`~.lifecycle.Lifecycle`: opening the browser, opening tabs, relaunching, reopening, closing;
  :mod:`~.tab_sessions`: what tab sessions and forks share and may close;
* :class:`~notebook_agent.browser.page.tabs.Tabs`: tab ids, tabs the site opens, dialogs answered by a policy,
  downloads;
* :class:`~notebook_agent.browser.page.reader.PageReader`: the indexed snapshot, element resolution;
* :class:`~notebook_agent.browser.door.route.Door`: the door (where navigation may go, what may leave);
  :class:`~notebook_agent.browser.page.hung_tabs.HungPages`: pages that stopped answering;
  :class:`~.ownership.Ownership`: which run drives the session;
* :class:`~notebook_agent.browser.page.action_watch.ActionWatch`: what an action caused (navigation, new tabs);
* :class:`~notebook_agent.browser.errors.Notices`: what happened outside any action, reported with the next
  result;
* the built-in actions (``actions/``), which see the session only through their ``ActionHost`` interface;
  :meth:`BrowserSession.act` runs one of them by name.

The browser survives "Interrupt kernel": the driver runs in its own process session (see ``launch.py``).

Where the caller's event loop cannot start subprocesses (Jupyter on Windows), the session runs the browser on
a thread of its own (see ``browser_thread.py``): its public coroutine methods hop to that thread's loop, so
callers do not need to know which mode it is in.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

from playwright.async_api import Page

from ...core.tools import Tool
from ..actions import AskUser
from ..door.live import Source as LiveSource
from ..door.route import Door
from ..errors import ActionError, Notices
from ..page.action_watch import ActionWatch
from ..page.hung_tabs import HungPages, is_responsive
from ..page.prefetch import Prefetch
from ..page.reader import PageReader
from ..page.tabs import DialogInfo, DialogPolicy, Tabs
from ..urls import URLError
from .accessors import SessionAccessors
from .acting import SessionActing
from .browser_thread import BrowserThread, loop_can_spawn, on_browser_loop, remember_refusal
from .lifecycle import Lifecycle
from .ownership import BrowserBusyError, Ownership
from .pages import SessionPages
from .reading import SessionReading
from .tab_sessions import ForkLifecycle, TabSessionLifecycle

T = TypeVar("T")


class BrowserSession(SessionAccessors, SessionPages, SessionReading, SessionActing):
    """A Chromium browser for an agent, usable as ``async with BrowserSession() as browser:``.

    ``executable_path``/``$NOTEBOOK_AGENT_BROWSER`` pick a binary (else :func:`~.launch.find_browser` searches);
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
        self._tools: tuple[AskUser | None, dict[str, Tool]] | None = None  # (for which on_ask_user, tools)
        self._notices = Notices()
        self._reader = PageReader()
        self._prefetch = Prefetch()
        self._tabs = Tabs(self._notices, dialog_policy, self._reader.on_frame_detached, downloads_dir)
        self._door = Door(self._tabs, self._notices)
        self._hung = HungPages(self._tabs, self._reader, self._notices)
        self._life = Lifecycle(self, self._tabs, self._reader, self._notices, self._door)
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
        """Hold the session for one run: two runs acting on one tab see and undo each other's work (a click lands on the
        page the other opened), so a second claim is refused with :class:`BrowserBusyError`. The tab is checked once
        before the run uses it and replaced if it does not answer (see browser/page/hung_tabs.py)."""
        with self._ownership.claim(owner):
            # the last run may have left its tab on a page that stopped answering: check it once before use
            self._hung.mark_suspect()
            yield

    @property
    def owner(self) -> str | None:
        """The run holding the session, if any."""
        return self._ownership.owner

    # -- hung pages (see browser/page/hung_tabs.py) ----------------------------------------------------------
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

    @on_browser_loop
    async def hold_secrets(self, source: LiveSource) -> None:
        """``source()``'s secrets are live in this session from now until it closes (browser/door/live.py): a
        request, WebSocket or frame of its tabs carrying one to a site not its own is refused whatever the
        approval policy, and data to such a site is judged (refused when no run is there to judge it)."""
        await self._door.hold(source, self._life.context)

    def keep_secrets(self, source: LiveSource) -> None:
        """The run that held ``source`` ended: its secrets stay live, as they are now, until the session closes."""
        self._door.keep(source)

    def _live_values(self) -> list[str]:
        return [secret.value for secret in self._door.live.secrets()]

    @property
    def secrets_live(self) -> bool:
        """Whether a secret is live in this session (see :meth:`hold_secrets`)."""
        return self._door.live.live


__all__ = [
    "ActionError",
    "ActionWatch",
    "BrowserBusyError",
    "BrowserSession",
    "DialogInfo",
    "DialogPolicy",
    "URLError",
]

"""The acting side of :class:`~notebook_agent.browser.session.browser_session.BrowserSession`: its built-in
actions, running one by name, what an action caused, and where the Playwright objects live.

One job: what the actions need of the session that is not reading a page (``reading.py``) or managing its tabs
(``pages.py``): the tools bound to it (made once per ``on_ask_user``), run on the browser's thread in threaded
mode (:func:`~notebook_agent.browser.session.browser_thread.bridge_tools`), the watch an action runs inside
(:class:`~notebook_agent.browser.page.action_watch.ActionWatch`) and its result with the notices that came
meanwhile. The session inherits it, so these stay methods of the session.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, TypeVar, cast

from playwright.async_api import Page

from ...core.abort import AbortSignal
from ...core.text import clean_text
from ...core.tools import Tool, ToolResult
from ..actions import ActionHost, AskUser, builtin_tools, run_action
from ..errors import Notices
from ..page.action_watch import ActionWatch
from ..page.tabs import Tabs
from .browser_thread import BrowserThread, bridge_tools, on_browser_loop

T = TypeVar("T")


class SessionActing:
    """The tools, the watch and the results of a session's actions, over the parts it composes (set by its
    ``__init__``)."""

    _tabs: Tabs
    _notices: Notices
    _thread: BrowserThread | None
    _tools: tuple[AskUser | None, dict[str, Tool]] | None
    on_ask_user: AskUser | None

    async def ensure_page(self) -> Page:
        """The current page, replacing a closed or crashed browser/tab first: the session's."""
        raise NotImplementedError

    async def _choose_mode(self) -> None:
        """Decide, once, whether the browser runs on the caller's loop or a thread of its own: the session's."""
        raise NotImplementedError

    # -- where the browser runs (see threaded.py) and its tools ----------------------------------------------
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
        """The built-in action tools bound to this session: made once, and again when ``on_ask_user`` changed
        (``ask_user`` is offered, and answered, by the callback set now, not by the one set first)."""
        if self._tools is None or self._tools[0] is not self.on_ask_user:
            host = cast(ActionHost, self)  # the session it is part of is the actions' host
            self._tools = (self.on_ask_user, builtin_tools(host, on_ask_user=self.on_ask_user))
        return self._tools[1]

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

"""The read side of :class:`~.browser_session.BrowserSession`: the Playwright objects, notices and flags it holds.

One job: answering what a session has (its current tab, context, browser and Playwright, the binary it launched, its
dialog policy, its notices, its latest snapshot, whether it started and which loop it runs on) without doing anything.
The session (``browser_session.py``) inherits it, so these stay ``browser.page``, ``browser.log``..., and keeps in its
own class what starts, drives and closes the browser."""

from __future__ import annotations

import time

from playwright.async_api import Browser, BrowserContext, Page, Playwright

from ..errors import Notices
from ..page.reader import PageReader
from ..page.snapshot import ElementInfo, Snapshot
from ..page.tabs import DialogPolicy, Tabs
from .browser_thread import BrowserThread
from .lifecycle import Lifecycle


class SessionAccessors:
    """Properties of a :class:`~.browser_session.BrowserSession` over the parts it composes (set by its
    ``__init__``)."""

    _tabs: Tabs
    _life: Lifecycle
    _notices: Notices
    _reader: PageReader
    _started: bool
    _thread: BrowserThread | None

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

"""A DevTools session on each tab of every context the door adopts: the part of the door that holds what the
context's route cannot (tab_door.py: requests sent while a page unloads, native WebSockets; redirects.py: hops
the browser follows on its own).

One skeleton for both: a context adopted with :meth:`TabDevTools.watch` gets a session on each of its tabs, now
and to come; :meth:`TabDevTools.close` leaves every tab (the context may be shared with sessions that go on).
What each part does with a tab's session is its :meth:`~TabDevTools.setup` hook; a paused request is always
answered, whatever its handler does (:meth:`~TabDevTools.answer`).

A frame of another site runs in a process of its own, a target DevTools reaches only through a session of its
own; so does a dedicated worker. A part that must hold those too (``holds_children``) auto-attaches the tab's
session to them with ``waitForDebuggerOnStart``: each such frame or worker, at any depth (a frame of a third
site inside one), is paused before its first script runs, gets :meth:`~TabDevTools.child_commands` (sent
through the tab's session, ``Target.sendMessageToTarget``), and only then runs. Whatever happens, it is let run.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import Coroutine
from typing import Any

from playwright.async_api import BrowserContext, CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from ..page.frozen_tabs import confirmed

#: Seconds ``watch`` waits for the existing tabs to be attached, and ``close`` for them to be left: a tab whose
#: script never yields (another session's frozen page) cannot answer and must not stop a session starting.
ATTACH_WAIT = 5.0

#: Every out-of-process frame and worker of the tab attached, paused at its start (DevTools' non-flat sessions:
#: Playwright's CDP session carries no session ids of its own).
AUTO_ATTACH = {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": False}

Path = tuple[str, ...]
"""A child target's session ids, from the tab's session down (a frame inside a frame has two)."""

_ids = itertools.count(1_000_000)


class TabDevTools:
    """Keeps a DevTools session on each tab of the adopted contexts; subclasses say what it does there."""

    def __init__(self) -> None:
        self._contexts: list[BrowserContext] = []  # by identity: a relaunched browser's context may reuse an id()
        self._pages: dict[Page, CDPSession] = {}
        self._attaching: set[Page] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        """Handlers in flight, held here: the loop keeps only a weak reference to a task, and a handler that
        vanished would leave its request paused for good."""
        self._closed = False
        self._children: dict[Page, set[Path]] = {}
        self._ready: dict[Page, asyncio.Task[Any]] = {}

    holds_children = False
    """Whether the tab's out-of-process frames and workers are held at their start for :meth:`child_commands`."""

    # -- the hooks --------------------------------------------------------------------------------------------
    async def setup(self, page: Page, session: CDPSession) -> None:
        """Set up ``page``'s new ``session`` (listeners, domains); a :class:`PlaywrightError` gives the tab up."""

    def failed(self, page: Page, exc: PlaywrightError) -> None:
        """``page`` could not be attached (a closed tab, or a browser without these domains)."""

    def forget(self) -> None:
        """Drop what is kept per tab, at :meth:`close`."""

    def child_commands(self, page: Page) -> list[tuple[str, dict[str, Any]]]:
        """What each out-of-process frame or worker of ``page`` is sent before it may run."""
        return []

    # -- the skeleton -----------------------------------------------------------------------------------------
    async def watch(self, context: BrowserContext) -> None:
        """Attach to every tab of ``context``, now and to come (idempotent). Waits for the existing tabs at most
        ``ATTACH_WAIT`` seconds each: a tab that cannot answer is attached in the background, taking effect when
        it answers (until then its script cannot start a request either)."""
        if any(c is context for c in self._contexts):
            return
        self._closed = False
        self._contexts.append(context)
        context.on("page", self._on_page)
        pages = list(context.pages)
        await asyncio.gather(*(confirmed(page, self.spawn(self._attach(page)), ATTACH_WAIT) for page in pages))

    async def close(self) -> None:
        """Leave every tab: the context may be shared with sessions that go on, and this part of the door must
        not stay on their tabs."""
        self._closed = True
        for context in self._contexts:
            with contextlib.suppress(Exception):
                context.remove_listener("page", self._on_page)
        self._contexts.clear()
        sessions, self._pages = list(self._pages.items()), {}
        self._children.clear()
        self._ready.clear()
        self.forget()
        await asyncio.gather(*(confirmed(page, _detach(session), ATTACH_WAIT) for page, session in sessions))

    def attached(self, page: Page) -> bool:
        return page in self._pages

    def session_of(self, page: Page) -> CDPSession | None:
        return self._pages.get(page)

    def children(self, page: Page) -> list[Path]:
        """The out-of-process frames and workers of ``page`` attached now."""
        return list(self._children.get(page, ()))

    async def send_to(self, page: Page, path: Path, method: str, params: dict[str, Any]) -> None:
        """Send ``method`` to the child target at ``path`` of ``page`` (its answer is not awaited)."""
        session = self._pages.get(page)
        if session is not None:
            with contextlib.suppress(PlaywrightError):
                await _send_to(session, path, method, params)

    def spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run ``work`` as a task held until it ends."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def answer(self, session: CDPSession, request_id: Any, verdict: str | None) -> None:
        """Let a paused request go on (None) or fail it as aborted (no error page, the tab stays where it was).
        Sent as a task of its own, so even a handler that is cancelled answers."""
        self.spawn(_answer(session, request_id, verdict))

    def _on_page(self, page: Page) -> None:
        self._ready.setdefault(page, self.spawn(self._attach(page)))

    async def ready(self, page: Page) -> None:
        """Wait until ``page`` (a tab of an adopted context) is attached, at most ``ATTACH_WAIT`` seconds: the
        door holds a popup's first request until then, so nothing the popup's first document sends (an unload
        beacon as it is closed or sent on) passes before its own session holds it."""
        if self._closed or page in self._pages or page.is_closed():
            return
        task = self._ready.get(page)
        if task is None or task.done():
            task = self._ready[page] = self.spawn(self._attach(page))
        await asyncio.wait({task}, timeout=ATTACH_WAIT)

    async def _attach(self, page: Page) -> None:
        if page in self._pages or page in self._attaching or page.is_closed():
            return
        self._attaching.add(page)
        try:
            session = await page.context.new_cdp_session(page)
            await self.setup(page, session)
            if self.holds_children:
                session.on("Target.attachedToTarget", lambda event: self._child(page, session, (), event))
                session.on("Target.receivedMessageFromTarget", lambda event: self._message(page, session, (), event))
                session.on("Target.detachedFromTarget", lambda event: self._gone(page, (), event))
                await session.send("Target.setAutoAttach", AUTO_ATTACH)
        except PlaywrightError as exc:
            self.failed(page, exc)
            return
        finally:
            self._attaching.discard(page)
        if self._closed:  # closed while this tab was being attached
            await confirmed(page, _detach(session), ATTACH_WAIT)
            return
        self._pages[page] = session
        page.once("close", self._closed_page)

    def _closed_page(self, page: Page) -> None:
        self._pages.pop(page, None)
        self._children.pop(page, None)
        self._ready.pop(page, None)

    def _child(self, page: Page, session: CDPSession, parent: Path, event: dict[str, Any]) -> None:
        """A frame or worker attached (paused at its start): set it up, hold its own children, let it run."""
        sid = event.get("sessionId")
        if not isinstance(sid, str):
            return
        path = (*parent, sid)
        self._children.setdefault(page, set()).add(path)
        self.spawn(self._hold(page, session, path))

    async def _hold(self, page: Page, session: CDPSession, path: Path) -> None:
        try:
            for method, params in [*self.child_commands(page), ("Target.setAutoAttach", AUTO_ATTACH)]:
                await _send_to(session, path, method, params)
        except PlaywrightError:
            pass  # the frame is gone (or the tab): nothing to hold
        finally:  # whatever happened, it runs: a frame held for good would be a page that never loads
            with contextlib.suppress(PlaywrightError):
                await _send_to(session, path, "Runtime.runIfWaitingForDebugger", {})

    def _message(self, page: Page, session: CDPSession, parent: Path, event: dict[str, Any]) -> None:
        """A child's message: the attach and detach of its own children (others are not asked for)."""
        sid = event.get("sessionId")
        try:
            message = json.loads(event.get("message") or "")
        except (TypeError, ValueError):
            return
        if not isinstance(sid, str) or not isinstance(message, dict):
            return
        method, params = message.get("method"), message.get("params")
        if not isinstance(params, dict):
            return
        here = (*parent, sid)
        if method == "Target.attachedToTarget":
            self._child(page, session, here, params)
        elif method == "Target.receivedMessageFromTarget":
            self._message(page, session, here, params)
        elif method == "Target.detachedFromTarget":
            self._gone(page, here, params)

    def _gone(self, page: Page, parent: Path, event: dict[str, Any]) -> None:
        sid = event.get("sessionId")
        kept = self._children.get(page)
        if kept is not None and isinstance(sid, str):
            path = (*parent, sid)
            self._children[page] = {p for p in kept if p[: len(path)] != path}


async def _send_to(session: CDPSession, path: Path, method: str, params: dict[str, Any]) -> None:
    """``method`` for the target at ``path``, wrapped once per level in ``Target.sendMessageToTarget``."""
    message: dict[str, Any] = {"id": next(_ids), "method": method, "params": params}
    for sid in reversed(path[1:]):
        inner = json.dumps(message)
        message = {
            "id": next(_ids),
            "method": "Target.sendMessageToTarget",
            "params": {"sessionId": sid, "message": inner},
        }
    await session.send("Target.sendMessageToTarget", {"sessionId": path[0], "message": json.dumps(message)})


async def _detach(session: CDPSession) -> None:
    """Leave a tab (the caller bounds the wait, as a frozen tab may never confirm it)."""
    with contextlib.suppress(PlaywrightError):
        await session.detach()


async def _answer(session: CDPSession, request_id: Any, verdict: str | None) -> None:
    with contextlib.suppress(PlaywrightError):
        if verdict is None:
            await session.send("Fetch.continueRequest", {"requestId": request_id})
        else:
            await session.send("Fetch.failRequest", {"requestId": request_id, "errorReason": "Aborted"})

"""Tabs known not to answer: what every tab of a context must confirm is waited for once per frozen tab.

A route of the context, a redirect watch and its removal need every tab to confirm, and the tab list of every
snapshot reads every tab's title; a tab whose script never yields (another session's frozen page) answers none
of them. Each such wait is bounded; this remembers the tabs that let a bound run out, so later work does not wait
for them again (a frozen tab cost every snapshot 2 s, and every gated run 10 s): the work goes on in the
background and clears the mark when it completes. Until a frozen tab answers, its script cannot send a request
either, so a change it has not confirmed yet cannot be bypassed by it.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable

from playwright.async_api import Page

_unanswering: weakref.WeakSet[Page] = weakref.WeakSet()
_pending: set[asyncio.Future[object]] = set()  # confirmations still to come (the loop holds tasks weakly)


def unanswering(page: Page) -> bool:
    """Whether ``page`` let the last bounded wait for it run out, and has not answered since."""
    return page in _unanswering


async def confirmed(page: Page, work: Awaitable[object], timeout: float) -> bool:
    """Wait at most ``timeout`` seconds for ``work`` (something ``page`` must answer), and not at all when the
    page is known not to answer. Work that is not done goes on; the page is marked until it completes. True
    when it completed in time (with or without an error: the caller's work reports its own failures)."""
    task = asyncio.ensure_future(work)
    if page not in _unanswering:
        done, _ = await asyncio.wait({task}, timeout=timeout)
        if task in done:
            if not task.cancelled():
                task.exception()  # retrieved: the work reports its own failures
            return True
    _unanswering.add(page)
    _pending.add(task)
    task.add_done_callback(lambda t: _answered(page, t))
    return False


def later(work: Awaitable[object]) -> None:
    """Let ``work`` go on in the background (held, its error retrieved)."""
    task = asyncio.ensure_future(work)
    _pending.add(task)
    task.add_done_callback(_done)


def _done(task: asyncio.Future[object]) -> None:
    _pending.discard(task)
    if not task.cancelled():
        task.exception()


def _answered(page: Page, task: asyncio.Future[object]) -> None:
    _done(task)
    _unanswering.discard(page)

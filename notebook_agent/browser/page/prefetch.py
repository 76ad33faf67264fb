"""The element of the next action, found ahead: while the step's picture is taken and the gate judges.

Finding an element by its index is a round trip to the page (and a check that it still reads as the state showed
it), and it only reads. A run starts it as soon as the model's call names an index, so the action that follows
takes the handle at once instead of asking the page after the picture and the gate. The handle is kept for one
(snapshot, index, tab): a new snapshot, another index or another tab finds the element again, and a handle
nobody took is released.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from playwright.async_api import Page

from .frozen_tabs import later

Key = tuple[int, int, Page | None]  # (snapshot id, index, tab)


class Prefetch:
    """At most one element being found ahead of its action."""

    def __init__(self) -> None:
        self._pending: tuple[Key, asyncio.Task[Any]] | None = None

    def start(self, key: Key, find: Coroutine[Any, Any, Any]) -> None:
        """Find an element now (``find``: the session's lookup of the index) for :meth:`take` with ``key``."""
        self.drop()
        self._pending = (key, asyncio.ensure_future(find))

    def take(self, key: Key) -> asyncio.Task[Any] | None:
        """The lookup started for ``key`` (its result or its error is the action's), or None."""
        pending = self._pending
        if pending is None or pending[0] != key:
            return None
        self._pending = None
        return pending[1]

    def drop(self) -> None:
        """Forget the element found ahead (the page may have changed); its handle is released."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending[1].add_done_callback(_release)


def _release(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is None:
        later(task.result()[0].dispose())  # held until done, its error retrieved

"""A pool of browser contexts for the rows of a map: one context per running row, reused by the next row.

Opening a context for every row and closing it after costs more than a short replayed row; a pool keeps the contexts its
rows used, cleans each between rows (browser/session/reset.py: tabs, storage, cookies, ``about:blank``) and hands it to
the next row, so ``concurrency`` rows use ``concurrency`` contexts however many rows there are. A context that cannot be
cleaned, or that has served ``max_uses`` rows, is closed and a fresh one opened. One pool per process: in the map's
process (:func:`~notebook_agent.agent.recipes.recipe_map.map_recipe`) or per executor worker (:func:`worker_pool`,
beside the worker's browser), where rows from several threads share it.

A map's own pool is told when no row is left to start (``more``): a context whose row ends then is not
cleaned for a row that will never come (the last ``concurrency`` rows of every map would pay for it), and
is closed with the pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Callable

from ...browser.session.browser_session import BrowserSession
from ...browser.session.reset import reset_context

MAX_USES = 200


class BrowserPool:
    """``async with pool.lease() as session:`` a clean context of ``browser`` of its own for one row."""

    def __init__(
        self, browser: BrowserSession, *, max_uses: int = MAX_USES, more: Callable[[], bool] | None = None
    ) -> None:
        self.browser = browser
        self.max_uses = max_uses
        self.more = more
        """Whether another row may still lease a context (None: always, as in an executor worker's pool)."""
        self._idle: list[tuple[BrowserSession, int]] = []
        self._spent: list[BrowserSession] = []
        """Contexts whose row ended when no row was left to start: closed, not cleaned, with the pool."""
        self._lock = threading.Lock()  # rows on several executor threads share a worker's pool
        self.opened = 0
        """Contexts opened so far (what reuse saves shows as opened ≪ rows)."""
        self.leases = 0

    @contextlib.asynccontextmanager
    async def lease(self) -> AsyncIterator[BrowserSession]:
        with self._lock:
            taken = self._idle.pop() if self._idle else None
            self.leases += 1
        if taken is None:
            session, uses = await self.browser.fork(), 0
            with self._lock:
                self.opened += 1
        else:
            session, uses = taken
        clean = False
        try:
            yield session
        finally:
            if self.more is not None and not self.more():
                with self._lock:
                    self._spent.append(session)
            else:
                if uses + 1 < self.max_uses:
                    with contextlib.suppress(Exception):
                        clean = await reset_context(session)
                if clean:
                    with self._lock:
                        self._idle.append((session, uses + 1))
                else:
                    with contextlib.suppress(Exception):
                        await session.close()

    async def close(self) -> None:
        """Close every context the pool holds, side by side (each is a context of its own)."""
        with self._lock:
            held = [session for session, _ in self._idle] + self._spent
            self._idle, self._spent = [], []
        await asyncio.gather(*(session.close() for session in held), return_exceptions=True)


_pools: dict[int, BrowserPool] = {}
_pools_lock = threading.Lock()


def worker_pool(browser: BrowserSession) -> BrowserPool:
    """This process's pool over ``browser`` (a worker's browser: :func:`~.map_rows.worker_browser`)."""
    with _pools_lock:
        pool = _pools.get(id(browser))
        if pool is None or pool.browser is not browser:
            pool = _pools[id(browser)] = BrowserPool(browser)
        return pool


def forget_worker_pools() -> None:
    """Drop this process's pools (their browser was closed: :func:`~.map_rows.close_worker_browser`)."""
    with _pools_lock:
        _pools.clear()

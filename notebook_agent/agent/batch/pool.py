"""A pool of browser contexts for the rows of a map: one context per running row, reused by the next row.

Opening a context for every row and closing it after costs more than a short replayed row; a pool keeps the
contexts its rows used, cleans each between rows (browser/reset.py: tabs, storage, cookies, ``about:blank``)
and hands it to the next row, so ``concurrency`` rows use ``concurrency`` contexts however many rows there
are. A context that cannot be cleaned, or that has served ``max_uses`` rows, is closed and a fresh one
opened. One pool per process: in the map's process (:func:`~.recipe_map.map_recipe`) or per executor worker
(:func:`worker_pool`, beside the worker's browser), where rows from several threads share it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import AsyncIterator

from ...browser.session.browser_session import BrowserSession
from ...browser.session.reset import reset_context

MAX_USES = 200


class BrowserPool:
    """``async with pool.lease() as session:`` a clean context of ``browser`` of its own for one row."""

    def __init__(self, browser: BrowserSession, *, max_uses: int = MAX_USES) -> None:
        self.browser = browser
        self.max_uses = max_uses
        self._idle: list[tuple[BrowserSession, int]] = []
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
        with self._lock:
            idle, self._idle = self._idle, []
        for session, _ in idle:
            with contextlib.suppress(Exception):
                await session.close()


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

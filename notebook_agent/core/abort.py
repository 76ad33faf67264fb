"""Cooperative cancellation shared by the loop, the model stream and every tool.

Task cancellation alone cannot carry a reason, and a tool may want to finish a write before it stops, so the
loop hands each participant an :class:`AbortSignal` (the asyncio counterpart of the web's AbortSignal).
``signal.race(awaitable)`` is the usual way to make a long await stop promptly.

One signal may be awaited on two loops at once (the kernel's, and the browser thread's when the browser runs
on a thread of its own) and fired from a third thread (a widget callback), so registering a waiter and firing
are done under a lock: a waiter registered while the signal fires is either woken or sees the reason.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

from .errors import NotebookAgentError

T = TypeVar("T")


STOPPED = "The run was stopped"
"""The reason of a stop that gave none."""


def stopped_text(reason: str | None, during: str) -> str:
    """How an interrupted call is recorded, in one place for every wait a stop can end: who stopped the run
    (the signal's reason, as the person or the program said it) and what the call was doing then, e.g.
    "Stopped by the user while the action waited for approval; it did not run." ``during`` starts with
    "while" or "before"."""
    return f"{(reason or STOPPED).rstrip('. ')} {during}."


class AbortedError(NotebookAgentError):
    """Raised inside a participant when its run was aborted. ``during`` says what the participant was waiting
    for ("while the action waited for approval; it did not run"), so the record can say it plainly."""

    during: str
    """What the participant was waiting for when the stop came ("" when it does not say)."""

    def __init__(self, reason: str = STOPPED, *, during: str = "") -> None:
        super().__init__(stopped_text(reason, during) if during else reason)
        self.reason = reason
        self.during = during


class AbortSignal:
    """Read side of an :class:`AbortController`. Thread-safe to abort, asyncio-safe to wait on."""

    def __init__(self) -> None:
        self._reason: str | None = None
        self._callbacks: list[Callable[[str], None]] = []
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._lock = threading.Lock()

    @property
    def aborted(self) -> bool:
        return self._reason is not None

    @property
    def reason(self) -> str | None:
        return self._reason

    def throw_if_aborted(self) -> None:
        if self._reason is not None:
            raise AbortedError(self._reason)

    def add_callback(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call ``callback(reason)`` once on abort (at once if already aborted). Returns a remover."""
        with self._lock:
            reason = self._reason
            if reason is None:
                self._callbacks.append(callback)
        if reason is not None:
            callback(reason)
            return lambda: None

        def remove() -> None:
            with self._lock:
                if callback in self._callbacks:
                    self._callbacks.remove(callback)

        return remove

    async def wait(self) -> str:
        """Wait until aborted; returns the reason."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        with self._lock:
            if self._reason is not None:
                return self._reason
            self._waiters.append((loop, fut))
        try:
            await fut
        finally:
            with self._lock:
                self._waiters = [(lp, f) for lp, f in self._waiters if f is not fut]
        assert self._reason is not None
        return self._reason

    async def race(self, awaitable: Awaitable[T], *, during: str = "") -> T:
        """Await ``awaitable`` unless the signal fires first; then cancel it and raise AbortedError (``during``:
        what the wait was, for the record: "while the action waited for approval; it did not run")."""
        if self._reason is not None:
            close = getattr(awaitable, "close", None)
            if close is not None:
                close()  # a coroutine that will never run: close it so Python does not warn
            raise AbortedError(self._reason, during=during)
        task = asyncio.ensure_future(awaitable)
        stop = asyncio.ensure_future(self.wait())
        try:
            done, _ = await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()
            stop.cancel()
            raise
        if task in done:
            stop.cancel()
            return task.result()
        task.cancel()
        try:
            await task
        except (asyncio.CancelledError, Exception):
            pass
        raise AbortedError(self._reason or STOPPED, during=during)

    async def sleep(self, seconds: float) -> None:
        """``asyncio.sleep`` that ends early with AbortedError when aborted."""
        await self.race(asyncio.sleep(seconds))

    def _fire(self, reason: str) -> None:
        with self._lock:
            if self._reason is not None:
                return
            self._reason = reason
            callbacks, self._callbacks = self._callbacks, []
            waiters = list(self._waiters)
        for cb in callbacks:
            try:
                cb(reason)
            except Exception:
                continue
        for loop, fut in waiters:
            if loop.is_closed():
                continue

            def _set(f: asyncio.Future[None] = fut) -> None:
                if not f.done():
                    f.set_result(None)

            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is loop:
                _set()
            else:
                loop.call_soon_threadsafe(_set)


class AbortController:
    """Owns a signal; ``abort()`` may be called from any thread (a widget callback, a signal handler)."""

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: str = "Agent run aborted") -> None:
        self.signal._fire(reason)

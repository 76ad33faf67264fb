"""The asyncio helpers the package shares: a ``wait_for`` that never loses a cancellation, and
:func:`events_of`, a run that emits events turned into an async iterator of them.

Python 3.11's ``asyncio.wait_for`` returns the awaited result when the waiting task is cancelled in the same
moment the result arrives (fixed in 3.12 by building it on ``asyncio.timeout``): the cancellation is lost, so
Interrupt, a map's stop or Ctrl-C landing at that moment is ignored and the work goes on. Every timed wait in
the package goes through :func:`wait_for`, built on ``asyncio.timeout`` (3.11+), which re-raises the
cancellation.

Both the core agent and the page agent run their work as a task that hands each event to a queue, and give the
caller an ``async for`` over the queue (:func:`events_of`). Leaving that loop early (a ``break``, an exception, a
cancelled cell) must stop the run, let it settle (so it keeps what it finished), and never leave the task behind.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from .abort import AbortController

T = TypeVar("T")

_END = object()


async def wait_for(awaitable: Awaitable[T], timeout: float | None) -> T:
    """``await awaitable``, raising ``TimeoutError`` after ``timeout`` seconds (None: no limit), as
    ``asyncio.wait_for``; a cancellation of the caller always propagates, whatever the awaited did meanwhile."""
    async with asyncio.timeout(timeout):
        return await awaitable


async def events_of(
    work: Callable[[Callable[[T], None]], Awaitable[Any]], controller: AbortController, *, grace: float = 10.0
) -> AsyncIterator[T]:
    """Run ``work(put)`` and yield each event it puts, in order, until it returns (its exception is raised
    after the events it put). If the consumer stops early, ``controller`` aborts the run, which gets ``grace``
    seconds to settle before it is cancelled."""
    queue: asyncio.Queue[Any] = asyncio.Queue()

    async def runner() -> None:
        try:
            await work(queue.put_nowait)
        finally:
            queue.put_nowait(_END)

    task = asyncio.create_task(runner())
    try:
        while True:
            event = await queue.get()
            if event is _END:
                break
            yield event
        await task
    finally:
        if not task.done():
            controller.abort("The consumer stopped reading the run")
            with contextlib.suppress(TimeoutError, asyncio.CancelledError, Exception):
                await wait_for(task, grace)

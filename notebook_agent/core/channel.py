"""Turning a run that emits events into an async iterator of them: :func:`events_of`.

Both the core agent and the page agent run their work as a task that hands each event to a queue, and give
the caller an ``async for`` over the queue. Leaving that loop early (a ``break``, an exception, a cancelled
cell) must stop the run, let it settle (so it keeps what it finished), and never leave the task behind.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from ..core.aio import wait_for
from .abort import AbortController

T = TypeVar("T")

_END = object()


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

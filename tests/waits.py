"""Waiting in tests for a state rather than for a time: poll the condition itself, with a deadline that is a hang
guard (generous, since the machine may be busy), not a timing threshold."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

#: How often the condition is checked (the first check is at once).
POLL_SECONDS = 0.02


async def wait_until(predicate: Callable[[], T | Awaitable[T]], timeout: float = 10.0, message: str = "") -> T:
    """Return the first truthy value of ``predicate()`` (awaited when it returns an awaitable), checked at once
    and then every :data:`POLL_SECONDS` while the event loop runs; fail the test with ``message`` if it is still
    falsy after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value  # type: ignore[return-value]
        if time.monotonic() >= deadline:
            raise AssertionError(f"{message or 'the condition'} (still not true after {timeout:g} s)")
        await asyncio.sleep(POLL_SECONDS)

"""``wait_for`` that never loses a cancellation.

Python 3.11's ``asyncio.wait_for`` returns the awaited result when the waiting task is cancelled in the same
moment the result arrives (fixed in 3.12 by building it on ``asyncio.timeout``): the cancellation is lost, so
Interrupt, a map's stop or Ctrl-C landing at that moment is ignored and the work goes on. Every timed wait in
the package goes through this one, built on ``asyncio.timeout`` (3.11+), which re-raises the cancellation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def wait_for(awaitable: Awaitable[T], timeout: float | None) -> T:
    """``await awaitable``, raising ``TimeoutError`` after ``timeout`` seconds (None: no limit), as
    ``asyncio.wait_for``; a cancellation of the caller always propagates, whatever the awaited did meanwhile."""
    async with asyncio.timeout(timeout):
        return await awaitable

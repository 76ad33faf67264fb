"""The package's ``wait_for`` never loses a cancellation: a task cancelled in the moment the result it waits for
arrives stops (Python 3.11's ``asyncio.wait_for`` returns the result there, and Interrupt is lost)."""

from __future__ import annotations

import asyncio

import pytest

from notebook_agent.core.aio import wait_for


async def _cancelled_as_it_arrives(waiter: object) -> str:
    """Run ``waiter(future, timeout)`` in a task; complete the future and cancel the task in the same loop turn."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str] = loop.create_future()
    task = asyncio.create_task(waiter(future, 5))  # type: ignore[operator]
    await asyncio.sleep(0)  # the task now waits
    future.set_result("answer")
    task.cancel()
    return await task


async def test_a_cancellation_as_the_result_arrives_is_not_lost() -> None:
    with pytest.raises(asyncio.CancelledError):
        await _cancelled_as_it_arrives(wait_for)


async def test_it_times_out_and_returns_like_asyncio_wait_for() -> None:
    assert await wait_for(asyncio.sleep(0, result=7), 1) == 7
    assert await wait_for(asyncio.sleep(0, result=8), None) == 8
    with pytest.raises(TimeoutError):
        await wait_for(asyncio.sleep(5), 0.01)

"""Stopping a recipe map mid-run keeps every finished row, exactly as it finished: by ``agent.stop()`` (the Stop
button, ``%agent stop``, Kernel → Interrupt), by cancelling the map's task, and by Ctrl-C in plain code
(``map_sync``). A row stopped on its way is ``stopped`` and nothing is healed for it; rows not reached are
``not_started``."""

from __future__ import annotations

import asyncio
import signal
import threading
from typing import Any

import pytest
from pydantic import BaseModel

from notebook_agent.agent import MapInterrupted, MapProgress, PageAgent, Recipe, RecipeMapResult
from notebook_agent.browser import BrowserSession
from notebook_agent.demo import PRICE_TASK, serve_demo
from notebook_agent.llm.scripted import ScriptedModel

PRICES = {"Cascade Hiking Boots": 159.0, "Lumen 400 Headlamp": 34.5, "Basecamp 28L Daypack": 79.0}
ROWS = [{"product": p} for p in PRICES] * 6  # 18 rows: the stop comes long before the last


class Price(BaseModel):
    name: str
    price: float


async def _recipe(browser: BrowserSession, shop: str) -> Recipe:
    agent = PageAgent(model="demo", browser=browser, start_url=shop, output=Price, screenshots=False)
    recorded = await agent.run(PRICE_TASK.format(product="Ridgeline Rain Jacket"))
    assert recorded.success
    return Recipe.from_run(recorded, template=PRICE_TASK)


def _kept_as_finished(result: RecipeMapResult, at_least: int) -> None:
    """Every row that ended before the stop is there with its right answer and no healing; the others are
    stopped or not started, none healed, none with an answer it did not read."""
    finished = [r for r in result.rows if r.status == "completed"]
    assert len(finished) >= at_least, result.summary()
    for row in finished:
        assert row.facts is not None and row.facts.success
        assert row.facts.output == {"name": row.values["product"], "price": PRICES[row.values["product"]]}
    assert {r.status for r in result.rows} <= {"completed", "stopped", "not_started"}, result.summary()
    assert "not_started" in {r.status for r in result.rows}
    assert result.healed_rows == []
    for row in result.rows:
        if row.status != "completed":
            assert row.facts is None or not row.facts.success


def _after(done: int, act: Any) -> Any:
    def on_event(event: Any) -> None:
        if isinstance(event, MapProgress) and event.ended and event.done == done:
            act()

    return on_event


async def test_stop_and_cancel_keep_every_finished_row() -> None:
    with serve_demo() as shop:
        async with BrowserSession() as browser:
            recipe = await _recipe(browser, shop.url)
            healer = ScriptedModel([])  # called only if a row healed
            # no output=: the rows run a copy of this agent typed as the recipe's answer; its stop() stops them
            agent = PageAgent(model=healer, browser=browser, screenshots=False)
            stopped = await recipe.map(ROWS, agent, concurrency=2, on_event=_after(3, lambda: agent.stop("enough")))
            _kept_as_finished(stopped, 3)
            assert not agent.is_running and healer.requests == []

            task: asyncio.Task[Any] | None = None

            def cancel() -> None:
                assert task is not None
                task.cancel()

            task = asyncio.create_task(recipe.map(ROWS, agent, concurrency=2, on_event=_after(3, cancel)))
            with pytest.raises(MapInterrupted) as info:
                await task
            assert isinstance(info.value.result, RecipeMapResult)
            _kept_as_finished(info.value.result, 3)
            assert not agent.is_running and healer.requests == []


def _ctrl_c() -> None:
    """A real SIGINT to the main thread, as a terminal's Ctrl-C is: it wakes the main thread from a blocking wait
    (``_thread.interrupt_main`` only sets a flag that a thread blocked in C does not see until it returns)."""
    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)


def test_ctrl_c_in_plain_code_keeps_every_finished_row() -> None:
    """``recipe.map_sync`` from plain code, and Ctrl-C (a real SIGINT to the main thread) after the third row."""
    with serve_demo() as shop:

        async def make() -> Recipe:
            async with BrowserSession() as browser:
                return await _recipe(browser, shop.url)

        recipe = asyncio.run(make())
        agent = PageAgent(model=ScriptedModel([]), screenshots=False)
        handler = signal.getsignal(signal.SIGINT)
        try:
            out = recipe.map_sync(ROWS, agent, concurrency=2, on_event=_after(3, _ctrl_c))
        except MapInterrupted as stopped:
            assert isinstance(stopped.result, RecipeMapResult)
            _kept_as_finished(stopped.result, 3)
        else:  # say what the map saw, so a failure is more than "did not raise"
            pytest.fail(f"Ctrl-C was lost: the map returned {out.summary()}; SIGINT handler before it: {handler!r}")

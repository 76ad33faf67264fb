"""A recipe on a real engine: a ``distributed.LocalCluster`` of two worker processes, one browser and one pool of
contexts per worker, rows streamed to whichever worker is free; a worker killed mid-map loses no finished row and
its row runs again on a worker that lives."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator
from typing import Any

import pytest

from notebook_agent.agent import PageAgent, Recipe
from notebook_agent.agent.batch.map_rows import close_worker_browser
from notebook_agent.browser import BrowserSession
from notebook_agent.demo import PRICE_TASK, serve_demo
from tests.agent.batch.test_map_dask import PRICES, Price

distributed = pytest.importorskip("distributed", reason="the [dask] extra: pip install 'notebook-agent[dask]'")


@pytest.fixture(scope="module")
def shop() -> Iterator[str]:
    with serve_demo() as server:
        yield server.url


@pytest.fixture
def dask_client() -> Iterator[Any]:
    """Two worker processes with one thread each, restarted by their nanny when killed (as a cluster does)."""
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        env={"PYTHONPATH": os.pathsep.join(p for p in (os.getcwd(), os.environ.get("PYTHONPATH")) if p)},
    )
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.run(close_worker_browser)
        client.close()
        cluster.close()


async def recorded_recipe(shop: str) -> Recipe:
    async with BrowserSession() as browser:
        agent = PageAgent(model="demo", browser=browser, start_url=shop, output=Price, screenshots=False)
        run = await agent.run(PRICE_TASK.format(product="Ridgeline Rain Jacket"))
    return Recipe.from_run(run, template=PRICE_TASK)


async def test_a_worker_killed_mid_map_loses_no_finished_row(dask_client: Any, shop: str) -> None:
    recipe = await recorded_recipe(shop)
    names = list(PRICES) * 3
    rows = [{"product": name} for name in names]
    finished: dict[int, str] = {}  # row → run id, as the rows end
    killed: list[int] = []
    pids = dask_client.run(os.getpid)

    def on_event(event: Any) -> None:
        if event.type == "map_progress" and event.ended and event.record.facts is not None:
            finished[event.row] = event.record.facts.run_id
            if len(finished) == 4 and not killed:  # a worker is lost while rows are running on both
                victim = int(event.record.worker.rsplit(":", 1)[1])
                killed.append(victim)
                os.kill(victim, signal.SIGKILL)

    agent = PageAgent(model="demo", start_url=shop, output=Price, screenshots=False)
    result = await asyncio.wait_for(
        recipe.map(rows, agent, executor=dask_client.get_executor(), concurrency=4, heal=False, on_event=on_event),
        timeout=300,
    )
    assert killed and killed[0] in pids.values()
    assert [r.status for r in result.rows] == ["completed"] * len(rows), [(r.status, r.error) for r in result.rows]
    table = result.records()
    assert [r["price"] for r in table] == [PRICES[n] for n in names]
    assert all(r["tokens"] == 0 and r["replayed"] == 2 for r in table)
    # every row that had finished before the kill is in the result as it finished
    before = dict(list(finished.items())[:4])
    assert all(result.rows[i].facts is not None and result.rows[i].facts.run_id == rid for i, rid in before.items())
    # and every row that ended after it ran in a process that lived (the killed one's row went elsewhere)
    after = {int(result.rows[i].worker.rsplit(":", 1)[1]) for i in list(finished)[4:]}
    assert after and killed[0] not in after

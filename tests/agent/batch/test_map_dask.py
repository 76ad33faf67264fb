"""``agent.map`` on a real engine: a ``distributed.LocalCluster`` of two worker *processes*, through
``client.get_executor()``. Each worker keeps one browser for every row it runs (counted in the worker), and the
rows' typed answers come back to this process."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from notebook_agent.agent import PageAgent
from notebook_agent.agent.batch.map_rows import close_worker_browser, worker_browser_launches
from notebook_agent.demo import PRICE_TASK, serve_demo

distributed = pytest.importorskip("distributed", reason="the [dask] extra: pip install 'notebook-agent[dask]'")

PRICES = {  # no headphones: the demo model reads "wireless headphones" as its shopping task
    "Pebble Wireless Earbuds": 29.99,
    "Merino Trail Socks (2-pack)": 24.0,
    "Ridgeline Rain Jacket": 129.0,
    "Cascade Hiking Boots": 159.0,
    "Basecamp 28L Daypack": 79.0,
    "Lumen 400 Headlamp": 34.5,
    "Insulated Steel Bottle 750 ml": 27.0,
}


class Price(BaseModel):
    """The answer's type: it travels to the workers with the agent, and its instances come back."""

    name: str
    price: float


@pytest.fixture(scope="module")
def shop() -> Iterator[str]:
    with serve_demo() as server:
        yield server.url


@pytest.fixture(scope="module")
def dask_client() -> Iterator[Any]:
    """Two worker processes with one thread each on loopback, no dashboard; their browsers are closed first."""
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        # the workers unpickle notebook_agent's functions and this module's answer type: they import them from
        # where this process does (a worktree on PYTHONPATH, too)
        env={"PYTHONPATH": os.pathsep.join(p for p in (os.getcwd(), os.environ.get("PYTHONPATH")) if p)},
    )
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.run(close_worker_browser)
        client.close()
        cluster.close()


@pytest.mark.parametrize("isolation", ["tab", "context"])
async def test_rows_on_a_dask_cluster_reuse_one_browser_per_worker(dask_client: Any, shop: str, isolation: str) -> None:
    agent = PageAgent(model="demo", start_url=f"{shop}/", output=Price, screenshots=False)
    rows = [{"product": name} for name in [*PRICES, "Unicorn Saddle"]]
    result = await agent.map(
        PRICE_TASK, rows, executor=dask_client.get_executor(), model="demo", concurrency=4, isolation=isolation
    )
    assert [r.status for r in result.rows] == ["completed"] * len(PRICES) + ["failed"]
    assert result.failed == [len(PRICES)]
    table = result.to_pandas()
    assert dict(zip(table["product"][:-1], table["price"][:-1], strict=True)) == PRICES
    assert list(table["name"][:-1]) == list(PRICES)
    assert all(isinstance(r.output, Price) for r in result.results[:-1] if r is not None)

    # the rows ran in the cluster's worker processes, not here
    pids = dask_client.run(os.getpid)  # {worker address: pid}
    ran_in = {int(r.worker.rsplit(":", 1)[1]) for r in result.rows if r.worker}
    assert ran_in and ran_in <= set(pids.values()) and os.getpid() not in ran_in
    # one browser per worker process, however many rows (and maps: both isolations use the same ones)
    launches = dask_client.run(worker_browser_launches)
    assert all(n <= 1 for n in launches.values()), launches
    assert all(launches[address] == 1 for address, pid in pids.items() if pid in ran_in), launches
    assert sum(launches.values()) <= 2 < len(rows)

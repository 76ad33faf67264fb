"""Rows per minute of ``agent.map`` against a hand-written loop, on the demo shop with the offline demo model.

Each row is the demo's data task (``PRICE_TASK``: "Find the price of {product} on the demo shop.", a typed
answer) for one product of the shop, cycling through the catalogue. Settings, all on one machine:

- baseline: a sequential ``for`` loop of ``await agent.run(task)`` in one browser;
- ``agent.map`` in this process, concurrency 2 and 4, each row in a tab of its own of one browser (and 4 in
  contexts of their own);
- ``agent.map`` on a Dask ``LocalCluster`` of 2 worker processes (``executor=client.get_executor()``), twice:
  the first map pays for each worker's one browser, the second reuses it. Cluster start-up is reported apart.

Each table is printed twice: with the offline model as it is (a row is almost all browser work, so the
machine's cores bound the speed-up), and with ``--latency`` seconds of waiting before each model answer (what
a remote model's time to first token looks like; that wait overlaps across rows). Figures, not asserts.

    .venv/bin/python benchmarks/map_throughput.py [--rows 16] [--latency 0 1] [--no-dask]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from collections.abc import AsyncIterator
from typing import Any

from pydantic import BaseModel

from notebook_agent import BrowserSession, PageAgent
from notebook_agent.demo import PRICE_TASK, serve_demo

# the catalogue's products whose names the demo model reads as a price task (not its headphone-shopping task)
PRODUCTS = [
    "Ridgeline Rain Jacket",
    "Cascade Hiking Boots",
    "Merino Trail Socks (2-pack)",
    "Basecamp 28L Daypack",
    "Lumen 400 Headlamp",
    "Insulated Steel Bottle 750 ml",
    "Pebble Wireless Earbuds",
]


class Price(BaseModel):
    name: str
    price: float


class Waiting:
    """The demo model with a fixed wait before each answer, like a remote model's time to first token."""

    def __init__(self, seconds: float) -> None:
        from notebook_agent import get_model

        self.inner = get_model("demo")
        self.seconds = seconds
        self.provider, self.id = self.inner.provider, self.inner.id

    async def stream(self, context: Any, options: Any) -> AsyncIterator[Any]:
        await asyncio.sleep(self.seconds)
        async for event in self.inner.stream(context, options):
            yield event


LATENCY = 0.0


def model_for(_row: Any = None) -> Any:
    """The model of every setting (a module-level factory, so Dask can ship it to its workers)."""
    return Waiting(LATENCY) if LATENCY else __import__("notebook_agent").get_model("demo")


def line(label: str, rows: int, ok: int, seconds: float, baseline: float | None, extra: str = "") -> float:
    rate = 60 * rows / seconds
    speedup = f"{rate / baseline:5.2f}×" if baseline else "   1×  "
    print(f"{label:34} {rows:5} {ok:4} {seconds:8.1f} {rate:9.1f} {speedup:>7}{extra}", flush=True)
    return rate


async def sequential(url: str, rows: list[dict[str, Any]]) -> tuple[float, int]:
    async with BrowserSession() as browser:
        agent = PageAgent(model=model_for(), browser=browser, start_url=url, output=Price, screenshots=False)
        t0 = time.perf_counter()
        ok = 0
        for row in rows:
            result = await agent.run(PRICE_TASK.format(**row))
            ok += result.success
        return time.perf_counter() - t0, ok


async def in_process(url: str, rows: list[dict[str, Any]], concurrency: int, isolation: str) -> tuple[float, int]:
    async with BrowserSession() as browser:
        agent = PageAgent(model=model_for(), browser=browser, start_url=url, output=Price, screenshots=False)
        t0 = time.perf_counter()
        result = await agent.map(PRICE_TASK, rows, concurrency=concurrency, isolation=isolation)
        return time.perf_counter() - t0, len(result.succeeded)


async def on_dask(url: str, rows: list[dict[str, Any]], baseline: float) -> None:
    from distributed import Client, LocalCluster

    from notebook_agent.agent.batch.map_rows import close_worker_browser, worker_browser_launches

    t0 = time.perf_counter()
    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        env={"PYTHONPATH": os.pathsep.join(p for p in (os.getcwd(), os.environ.get("PYTHONPATH")) if p)},
    )
    client = Client(cluster)
    started = time.perf_counter() - t0
    try:
        agent = PageAgent(model=model_for(), start_url=url, output=Price, screenshots=False)
        for label in ("dask 2 workers, first map", "dask 2 workers, browsers reused"):
            t1 = time.perf_counter()
            result = await agent.map(
                PRICE_TASK, rows, executor=client.get_executor(), model_factory=model_for, concurrency=4
            )
            seconds = time.perf_counter() - t1
            launches = sum(client.run(worker_browser_launches).values())
            extra = f"  (cluster start {started:.1f} s; {launches} browsers in all)"
            line(label, len(rows), len(result.succeeded), seconds, baseline, extra)
        client.run(close_worker_browser)
    finally:
        client.close()
        cluster.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=16, help="rows per setting (default 16)")
    parser.add_argument("--no-dask", action="store_true", help="skip the Dask cluster")
    parser.add_argument(
        "--latency", type=float, nargs="+", default=[0.0, 1.0], help="seconds before each model answer (default 0 1)"
    )
    args = parser.parse_args()
    rows = [{"product": PRODUCTS[i % len(PRODUCTS)]} for i in range(args.rows)]
    global LATENCY
    with serve_demo() as shop:
        url = f"{shop.url}/"
        for LATENCY in args.latency:
            print(
                f"\n{args.rows} rows of {PRICE_TASK!r}, demo model + {LATENCY:g} s per answer, {os.cpu_count()} CPU(s)"
            )
            print(f"{'setting':34} {'rows':>5} {'ok':>4} {'wall s':>8} {'rows/min':>9} {'vs loop':>7}")
            seconds, ok = await sequential(url, rows)
            baseline = line("sequential loop of agent.run", len(rows), ok, seconds, None)
            for concurrency, isolation in ((2, "tab"), (4, "tab"), (4, "context")):
                seconds, ok = await in_process(url, rows, concurrency, isolation)
                line(f"map, concurrency {concurrency}, {isolation}s", len(rows), ok, seconds, baseline)
            if not args.no_dask:
                await on_dask(url, rows, baseline)


if __name__ == "__main__":
    asyncio.run(main())

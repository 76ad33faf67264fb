"""Wall time of an evaluation on a Dask cluster with 1, 2 and 4 worker processes.

Runs the demo suite (examples/demo_suite.yaml: the demo shop, the offline demo model) through
``evaluate(..., executor=client.get_executor())`` on a ``distributed.LocalCluster`` on loopback, one thread per
worker; each run starts its own browser in its worker. Prints the wall time per setting, the cluster's start-up
time apart, and the in-process baseline (one browser, runs in contexts of it). Figures, not asserts: the
machine's cores and load show in them (with fewer cores than workers, more workers only add contention).

    .venv/bin/python benchmarks/eval_workers.py [--repeats 2] [--workers 1 2 4]

Needs the [dask] extra: pip install 'notebook-agent[dask]'.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from pathlib import Path

from notebook_agent.agent.evaluate import EvalReport, evaluate
from notebook_agent.config.models import variant_model
from notebook_agent.demo import demo_url

SUITE = Path(__file__).resolve().parent.parent / "examples" / "demo_suite.yaml"


def line(label: str, seconds: float, report: EvalReport, extra: str = "") -> None:
    runs = len(report.rows)
    passed = sum(r.passed for r in report.rows)
    per_run = statistics.fmean(r.seconds for r in report.rows)
    print(
        f"{label:24} {seconds:6.1f} s wall  {runs} runs ({passed} passed)  {per_run:5.2f} s per run inside{extra}",
        flush=True,
    )


async def in_process(repeats: int, concurrency: int) -> None:
    t0 = time.perf_counter()
    report = await evaluate(
        SUITE, variables={"demo": demo_url()}, repeats=repeats, concurrency=concurrency, model_factory=variant_model
    )
    line(f"in-process, {concurrency} at a time", time.perf_counter() - t0, report)


async def on_cluster(workers: int, repeats: int) -> None:
    from distributed import Client, LocalCluster

    t0 = time.perf_counter()
    cluster = LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    )
    client = Client(cluster)
    started = time.perf_counter() - t0
    try:
        t1 = time.perf_counter()
        report = await evaluate(
            SUITE,
            variables={"demo": demo_url()},
            repeats=repeats,
            concurrency=2 * workers,  # one queued behind each running one, so no worker waits for a hand-off
            executor=client.get_executor(),
            model_factory=variant_model,
        )
        line(f"dask, {workers} worker(s)", time.perf_counter() - t1, report, f"  (cluster start {started:.1f} s)")
    finally:
        client.close()
        cluster.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2, help="runs of each task and variant (default 2)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4], help="cluster sizes (default 1 2 4)")
    args = parser.parse_args()
    print(f"suite {SUITE.name}, repeats {args.repeats}, {os.cpu_count()} CPU(s)", flush=True)
    await in_process(args.repeats, 2)
    for n in args.workers:
        await on_cluster(n, args.repeats)


if __name__ == "__main__":
    asyncio.run(main())

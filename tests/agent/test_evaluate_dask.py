"""Suites on a real engine: a ``distributed.LocalCluster`` with two worker *processes*, through
``client.get_executor()``; each worker starts its own browser, or connects to one Chromium started elsewhere."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import pytest

from notebook_agent.agent.evaluate import Variant, evaluate
from notebook_agent.browser import find_browser
from notebook_agent.config.models import variant_model
from notebook_agent.demo import demo_url
from tests.agent.test_evaluate import SUITE_YAML
from tests.agent.test_evaluate import _factory as title_model  # one step: the page title as the answer

distributed = pytest.importorskip("distributed", reason="the [dask] extra: pip install 'notebook-agent[dask]'")


@pytest.fixture(scope="module")
def dask_client() -> Iterator[Any]:
    """Two worker processes with one thread each on loopback, no dashboard: what a user's laptop cluster is."""
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        # the workers unpickle notebook_agent's functions and these tests' model factory: they import them from
        # where this process does (a worktree on PYTHONPATH, too)
        env={"PYTHONPATH": os.pathsep.join(p for p in (os.getcwd(), os.environ.get("PYTHONPATH")) if p)},
    )
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


REMOTE_MARK = "NotebookAgentRemoteChromium"


@pytest.fixture(scope="module")
def marked_remote_chromium() -> Iterator[str]:
    """A Chromium started as its own process with remote debugging on loopback, whose user agent carries a mark,
    so a check run in the page can tell that page from one in a browser a worker started itself."""
    proc = subprocess.Popen(
        [
            find_browser(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            f"--user-data-dir={tempfile.mkdtemp(prefix='na-dask-remote-')}",
            f"--user-agent=Mozilla/5.0 {REMOTE_MARK}",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stderr is not None
    deadline, url = time.monotonic() + 30, None
    while url is None and time.monotonic() < deadline:
        m = re.search(r"DevTools listening on ws://([^/\s]+)", proc.stderr.readline())
        url = f"http://{m.group(1)}" if m else None
    try:
        assert url, "the remote Chromium did not print its DevTools address"
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)


async def test_a_suite_on_a_local_dask_cluster(dask_client: Any) -> None:
    import yaml

    variants = [
        Variant("cautious", model="demo", approval="deny-risky"),
        Variant("trusting", model="demo", approval="auto"),
    ]
    with distributed.get_task_stream(dask_client) as stream:
        report = await evaluate(
            yaml.safe_load(SUITE_YAML),
            variants,
            variables={"base": demo_url()},
            executor=dask_client.get_executor(),
            concurrency=4,
            model_factory=variant_model,
        )
    by = {(r.variant, r.task, r.repeat): r for r in report.rows}
    assert sorted(by) == sorted((v, t, 1) for v in ("cautious", "trusting") for t in ("cheapest", "delete", "unknown"))
    assert by[("cautious", "cheapest", 1)].passed and by[("trusting", "cheapest", 1)].passed
    assert not by[("cautious", "delete", 1)].passed and by[("trusting", "delete", 1)].passed
    assert "text 'Your account has been deleted' not on the final page" in by[("cautious", "delete", 1)].failures
    assert not by[("cautious", "unknown", 1)].passed and not by[("trusting", "unknown", 1)].passed
    assert all(r.steps >= 1 and r.run_id and r.status in ("completed", "failed") for r in report.rows)
    # the six runs were tasks of the cluster's worker processes (which worker takes which is the scheduler's
    # choice: on a loaded machine one worker may take them all, so only membership is asserted)
    ran = [t for t in stream.data if "run_job" in str(t["key"])]
    assert len(ran) == 6, stream.data
    assert {t["worker"] for t in ran} <= set(dask_client.scheduler_info()["workers"])
    assert os.getpid() not in dask_client.run(os.getpid).values()


async def test_dask_workers_driving_one_remote_browser(dask_client: Any, marked_remote_chromium: str) -> None:
    in_remote = f"() => navigator.userAgent.includes('{REMOTE_MARK}')"  # false in a browser a worker launched
    check = {"result": "Northwind", "js": in_remote}
    suite = {"tasks": [{"id": f"t{i}", "url": "{base}/", "task": "read the title", "check": check} for i in range(4)]}
    report = await evaluate(
        suite,
        [Variant("remote")],
        variables={"base": demo_url()},
        executor=dask_client.get_executor(),
        cdp_url=marked_remote_chromium,
        concurrency=4,
        model_factory=title_model,
    )
    assert [r.task for r in report.rows] == ["t0", "t1", "t2", "t3"]
    assert all(r.passed for r in report.rows), [r.failures for r in report.rows]
    assert all(r.status == "completed" and r.steps == 1 for r in report.rows)

"""Evaluating variants over a suite: the table, overlapping runs, an executor hand-off, and a remote browser."""

from __future__ import annotations

import concurrent.futures
import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from notebook_agent.agent.evaluate import Job, SuiteTask, Variant, evaluate, load_suite
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.browser import BrowserSession, find_browser
from notebook_agent.config.models import variant_model
from notebook_agent.core.messages import UserMessage
from notebook_agent.core.model import Context
from notebook_agent.demo import demo_url
from notebook_agent.llm.scripted import ScriptedModel

SUITE_YAML = """
name: three-tasks
tasks:
  - id: cheapest
    url: "{base}/"
    task: >-
      Find the cheapest pair of wireless headphones on the demo shop, add it to the cart,
      and tell me its name and price.
    check:
      result: "54.99"
      js: "() => (localStorage.getItem('northwind.cart') || '').length > 2"
  - id: delete
    url: "{base}/"
    task: Open my account page and delete my account.
    check:
      text: Your account has been deleted
  - id: unknown
    url: "{base}/"
    task: Book me a flight to Oslo.
    check:
      url: "flights"
"""


@pytest.fixture
def suite_file(tmp_path: Path) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE_YAML)
    return path


async def test_two_variants_over_three_tasks(suite_file: Path) -> None:
    variants = [
        Variant("cautious", model="demo", approval="deny-risky"),
        Variant("trusting", model="demo", approval="auto"),
    ]
    events: list[tuple[str, str, str]] = []
    report = await evaluate(
        suite_file,
        variants,
        variables={"base": demo_url()},
        repeats=2,
        concurrency=3,
        model_factory=variant_model,
        on_progress=lambda kind, job, row: events.append((kind, job.variant.name, job.task.id)),
    )
    assert len(report.rows) == 2 * 3 * 2
    by = {(r.variant, r.task, r.repeat): r for r in report.rows}
    for rep in (1, 2):
        assert by[("cautious", "cheapest", rep)].passed and by[("trusting", "cheapest", rep)].passed
        assert not by[("cautious", "delete", rep)].passed and by[("trusting", "delete", rep)].passed
        assert not by[("cautious", "unknown", rep)].passed
    assert "text 'Your account has been deleted' not on the final page" in by[("cautious", "delete", 1)].failures
    summary = {s["variant"]: s for s in report.summary()}
    assert summary["cautious"]["success_rate"] == pytest.approx(2 / 6)
    assert summary["trusting"]["success_rate"] == pytest.approx(4 / 6)
    assert summary["trusting"]["runs"] == 6 and summary["trusting"]["mean_steps"] > 1
    assert "<table>" in report._repr_html_() and "trusting" in report._repr_html_()
    # every run had its own context: each cheapest run found an empty cart first (checked by the js predicate),
    # and the deletions did not leak into other runs' pages
    assert len(report.results) == 12 and len({r.run_id for r in report.results}) == 12
    # concurrency really overlapped runs: a run started before an earlier one finished
    started = 0
    overlapped = False
    for kind, _, _ in events:
        started += 1 if kind == "started" else -1
        overlapped = overlapped or started > 1
    assert overlapped and max(_running(events)) <= 3


def _running(events: list[tuple[str, str, str]]) -> list[int]:
    out, n = [], 0
    for kind, _, _ in events:
        n += 1 if kind == "started" else -1
        out.append(n)
    return out


def test_suite_errors_are_clear(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="non-empty 'tasks' list"):
        load_suite({"name": "x"})
    with pytest.raises(ValueError, match="unknown check keys \\['screenshot'\\]"):
        load_suite({"tasks": [{"task": "t", "check": {"screenshot": 1}}]})
    (tmp_path / "s.json").write_text('{"tasks": [{"id": "a", "task": "go to {base}"}]}')
    assert load_suite(tmp_path / "s.json", {"base": "http://x"}).tasks[0].task == "go to http://x"


def _factory(variant: Variant, task: SuiteTask) -> Any:
    """A picklable model factory: one step that reads the page title into the answer."""

    def answer(ctx: Context) -> Any:
        msg = ctx.messages[-1]
        title = re.search(r"Current page: \[(.*?)\]", msg.text if isinstance(msg, UserMessage) else "")
        return agent_output("done", {"text": f"title={title.group(1) if title else '?'}", "success": True})

    return ScriptedModel([answer])


async def test_runs_can_be_handed_to_an_executor() -> None:
    suite = {
        "tasks": [
            {"id": f"t{i}", "url": demo_url(), "task": "read the title", "check": {"result": "Northwind"}}
            for i in range(3)
        ]
    }
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        report = await evaluate(suite, [Variant("v")], executor=pool, concurrency=2, model_factory=_factory)
    assert [r.passed for r in report.rows] == [True, True, True], [r.failures for r in report.rows]


@pytest.fixture(scope="module")
def remote_chromium() -> Iterator[str]:
    """A Chromium started as a separate process with remote debugging on loopback (a 'remote' browser)."""
    profile = tempfile.mkdtemp(prefix="na-remote-")
    proc = subprocess.Popen(
        [
            find_browser(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            f"--user-data-dir={profile}",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.time() + 30
    url = None
    assert proc.stderr is not None
    while time.time() < deadline:
        line = proc.stderr.readline()
        m = re.search(r"DevTools listening on (ws://\S+)", line)
        if m:
            url = m.group(1)
            break
    try:
        assert url, "the remote Chromium did not print its DevTools address"
        yield "http://" + url.split("//", 1)[1].split("/", 1)[0]
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)


async def test_evaluation_against_a_remote_browser_over_cdp(remote_chromium: str) -> None:
    suite = {
        "tasks": [
            {"id": f"t{i}", "url": demo_url(), "task": "read the title", "check": {"result": "Northwind"}}
            for i in range(2)
        ]
    }
    report = await evaluate(suite, [Variant("remote")], cdp_url=remote_chromium, concurrency=2, model_factory=_factory)
    assert all(r.passed for r in report.rows), [r.failures for r in report.rows]
    # the runs happened in that browser: it is still up, and a direct session to it works
    async with BrowserSession(cdp_url=remote_chromium) as b:
        await b.page.goto(demo_url())
        assert "Northwind" in await b.page.title()


def test_job_is_plain_data() -> None:
    import pickle

    job = Job(Variant("v"), SuiteTask("t", "task"), 1)
    assert pickle.loads(pickle.dumps(job)) == job

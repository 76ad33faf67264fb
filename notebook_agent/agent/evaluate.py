"""Evaluate prompt/model variants over a task suite: every variant on every task, n runs at a time.

A suite is a small YAML or JSON file (or dict)::

    name: demo-shop
    tasks:
      - id: cheapest
        url: "{base}/"                      # {name} placeholders are filled from ``variables``
        task: Find the cheapest wireless headphones and add them to the cart.
        check:                              # every given check must pass
          url: "product\\.html"             # regex searched in the final URL
          text: "Added to cart"             # text present on the final page
          result: "54.99"                   # text present in the agent's final answer
          js: "() => JSON.parse(localStorage.cart || '[]').length > 0"   # predicate run in the page
          output: {name: "Aria Buds", price: 54.99}   # the typed answer equals this, field by field
        output: {type: object, properties: {name: {type: string}, price: {type: number}}}   # the answer's schema
    variants:                               # optional; variants can also be passed in code
      - {name: default}
      - {name: terse, instructions: "Prefer the search box."}
      - {name: small, profile: small}     # the small-model prompt profile against the default one

Each run gets its own browser context (a fresh profile: no shared cookies or storage) in one browser, which
may be local or remote (``BrowserSession(cdp_url=...)``). ``executor=`` hands the runs to any
``concurrent.futures.Executor`` instead (for example a Dask ``client.get_executor()`` or Ray's pool), each
worker running :func:`run_job` with its own browser; nothing here schedules across machines by itself.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import re
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..browser.session.browser_session import BrowserSession
from ..browser.session.page_reads import page_check, page_text, page_url
from ..core.text.shown import html_block, shown
from .page_agent import PageAgent
from .runs.result import PageAgentResult
from .runs.run_data import field_diff


@dataclass
class Check:
    url: str | None = None
    text: str | None = None
    result: str | None = None
    js: str | None = None
    output: Any = None
    """The expected typed answer (plain JSON); a difference is reported field by field."""
    python: Callable[[PageAgentResult, str], bool] | None = field(default=None, repr=False)
    """A function of (result, final page text), for suites built in code (``result.output`` is the answer)."""


@dataclass
class SuiteTask:
    id: str
    task: str
    url: str | None = None
    check: Check = field(default_factory=Check)
    max_steps: int | None = None
    output: Any = None
    """The answer's type (a JSON Schema, or a Python type for suites built in code): ``PageAgent(output=...)``."""


@dataclass
class Variant:
    """One configuration to compare: a model, a prompt and settings."""

    name: str
    model: str | None = None
    system_prompt: str | None = None
    instructions: str | None = None
    max_steps: int = 15
    vision: bool = False
    approval: str = "deny-risky"
    """Evaluations run unattended: risky actions are denied unless the variant says otherwise."""
    profile: str = "auto"
    """The prompt profile (agent/prompt/profiles.py): ``auto``, ``default`` or ``small``."""


@dataclass
class Suite:
    name: str
    tasks: list[SuiteTask]
    variants: list[Variant] = field(default_factory=list)


def _fill(text: object, variables: Mapping[str, str]) -> str | None:
    if text is None:
        return None
    text = str(text)
    for key, value in variables.items():
        text = text.replace("{" + key + "}", value)
    return text


def load_suite(source: str | Path | Mapping[str, Any], variables: Mapping[str, str] | None = None) -> Suite:
    """A suite from a YAML/JSON file or a dict; ``{name}`` placeholders are filled from ``variables``."""
    if isinstance(source, Mapping):
        data: Any = dict(source)
        default_name = "suite"
    else:
        path = Path(source)
        try:
            raw = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"Cannot read the suite {path}: {exc.strerror or exc}.") from None
        if path.suffix.lower() == ".json":
            try:
                data = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise ValueError(
                    f"The suite {path} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}."
                ) from None
        else:
            import yaml

            try:
                data = yaml.safe_load(raw)
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
                problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
                raise ValueError(f"The suite {path} is not valid YAML: {problem}{where}.") from None
        default_name = path.stem
    if not isinstance(data, dict) or not isinstance(data.get("tasks"), list) or not data["tasks"]:
        where = "" if isinstance(source, Mapping) else f"The suite {source}: "
        raise ValueError(
            f"{where}a suite needs a non-empty 'tasks' list (each with 'id', 'task' and optional 'url', 'check')."
        )
    vars_ = dict(variables or {})
    tasks = []
    for i, t in enumerate(data["tasks"]):
        if not isinstance(t, dict) or not t.get("task"):
            raise ValueError(f"Task {i + 1} of the suite has no 'task' text")
        check = t.get("check") or {}
        unknown = set(check) - {"url", "text", "result", "js", "output"}
        if unknown:
            raise ValueError(
                f"Task {t.get('id', i + 1)}: unknown check keys {sorted(unknown)}; use url, text, result, js, output"
            )
        tasks.append(
            SuiteTask(
                id=str(t.get("id") or f"task{i + 1}"),
                task=_fill(str(t["task"]), vars_) or "",
                url=_fill(t.get("url"), vars_),
                check=Check(
                    url=_fill(check.get("url"), vars_),
                    text=_fill(check.get("text"), vars_),
                    result=_fill(check.get("result"), vars_),
                    js=_fill(check.get("js"), vars_),
                    output=check.get("output"),
                ),
                max_steps=t.get("max_steps"),
                output=t.get("output"),
            )
        )
    variants = [Variant(**v) for v in data.get("variants") or []]
    return Suite(name=str(data.get("name") or default_name), tasks=tasks, variants=variants)


@dataclass
class EvalRow:
    variant: str
    task: str
    repeat: int
    passed: bool
    status: str
    agent_success: bool
    steps: int
    tokens: int
    cost: float | None
    """Dollars, None when the model's prices are unknown."""
    seconds: float
    run_id: str
    failures: list[str] = field(default_factory=list)
    """Which checks failed (or the error), for the per-task detail."""


def _total_cost(rows: list[EvalRow]) -> float | None:
    """The runs' cost summed, None when one of them is unknown (never a sum that leaves it out)."""
    costs = [r.cost for r in rows]
    return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)


@dataclass
class EvalReport:
    suite: str
    rows: list[EvalRow]
    results: list[PageAgentResult] = field(default_factory=list, repr=False)

    def records(self) -> list[dict[str, Any]]:
        """One dict per run (``pandas.DataFrame(report.records())`` for analysis)."""
        return [asdict(r) for r in self.rows]

    def summary(self) -> list[dict[str, Any]]:
        """Per variant: success rate, mean steps, tokens, cost and time."""
        out = []
        for name in dict.fromkeys(r.variant for r in self.rows):
            rows = [r for r in self.rows if r.variant == name]
            out.append(
                {
                    "variant": name,
                    "runs": len(rows),
                    "success_rate": sum(r.passed for r in rows) / len(rows),
                    "mean_steps": statistics.fmean(r.steps for r in rows),
                    "mean_tokens": statistics.fmean(r.tokens for r in rows),
                    "total_cost": _total_cost(rows),
                    "mean_seconds": statistics.fmean(r.seconds for r in rows),
                }
            )
        return out

    def to_pandas(self) -> Any:
        """The per-run table as a pandas DataFrame (pandas is not a dependency: install it to use this)."""
        import pandas as pd

        return pd.DataFrame(self.records())

    def _repr_html_(self) -> str:
        def table(rows: list[dict[str, Any]]) -> str:
            if not rows:
                return ""
            head = "".join(f"<th>{shown(k)}</th>" for k in rows[0])
            body = "".join(
                "<tr>" + "".join(f"<td>{shown(_fmt(v))}</td>" for v in row.values()) + "</tr>" for row in rows
            )
            return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"

        detail = [
            {k: v for k, v in r.items() if k in ("variant", "task", "repeat", "passed", "status", "steps", "failures")}
            for r in self.records()
        ]
        return html_block(
            f"<b>{shown(self.suite)}</b>{table(self.summary())}"
            f"<details><summary>per task</summary>{table(detail)}</details>"
        )


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, list):
        return "; ".join(str(v) for v in value)
    return str(value)


@dataclass
class Job:
    """One run: a variant on a task (plain data, so it can be shipped to another process or machine)."""

    variant: Variant
    task: SuiteTask
    repeat: int


ProgressCallback = Callable[[str, Job, EvalRow | None], None]


async def check_run(task: SuiteTask, result: PageAgentResult, browser: BrowserSession) -> list[str]:
    """The checks that failed (empty: passed). They read the page, so they run where it lives."""
    return await browser.call(_check_run, task, result, browser)


async def _check_run(task: SuiteTask, result: PageAgentResult, browser: BrowserSession) -> list[str]:
    c = task.check
    text = await page_text(browser) if c.text or c.python else ""
    js: bool | str | None = None
    if c.js:
        try:
            js = bool(await page_check(browser, c.js))
        except Exception as exc:
            js = str(exc)
    failures = check_failures(c, url=page_url(browser), text=text, answer=result.text, js=js)
    if c.output is not None:
        if result.output is None:
            failures.append("no typed answer to compare with check.output")
        else:
            failures += [f"answer differs: {line}" for line in field_diff(result.output, c.output)]
    if c.python is not None and not c.python(result, text):
        failures.append("python check returned false")
    if result.status == "error":
        failures.append(f"run error: {result.error}")
    return failures


def check_failures(c: Check, *, url: str, text: str, answer: str, js: bool | str | None) -> list[str]:
    """The URL, page-text, answer and JavaScript checks on what was read from a final page (``js``: the check's
    value, or the message of what it raised). Apart from the page, so a run by another agent (the peer in
    ``benchmarks/local_model.py``) is judged by the same rules."""
    failures: list[str] = []
    if c.url and not re.search(c.url, url):
        failures.append(f"url {url!r} does not match {c.url!r}")
    if c.text and c.text not in text:
        failures.append(f"text {c.text!r} not on the final page")
    if c.result and c.result not in answer:
        failures.append(f"answer does not contain {c.result!r}")
    if c.js:
        if isinstance(js, str):
            failures.append(f"js check raised: {js}")
        elif not js:
            failures.append("js check returned false")
    return failures


async def run_job(
    job: Job, browser: BrowserSession, model_factory: Callable[[Variant, SuiteTask], Any]
) -> tuple[EvalRow, PageAgentResult]:
    """Run one job in ``browser`` (already started, a context of its own) and check it."""
    v, t = job.variant, job.task
    agent = PageAgent(
        model=model_factory(v, t),
        browser=browser,
        max_steps=t.max_steps or v.max_steps,
        system_prompt=v.system_prompt,
        instructions=v.instructions,
        profile=v.profile,
        approval=v.approval,  # type: ignore[arg-type]
        vision=v.vision,
        screenshots=False,
        start_url=t.url,
        output=t.output,
    )
    started = time.perf_counter()
    result = await agent.run(t.task)
    failures = await check_run(t, result, browser)
    u = result.usage
    row = EvalRow(
        variant=v.name,
        task=t.id,
        repeat=job.repeat,
        passed=not failures,
        status=result.status,
        agent_success=result.success,
        steps=len(result.steps),
        tokens=u.tokens,
        cost=u.dollars,
        seconds=time.perf_counter() - started,
        run_id=result.run_id,
        failures=failures,
    )
    return row, result


def default_model_factory(variant: Variant, task: SuiteTask) -> Any:
    """``provider:model`` names through the adapters (the app layers add ``demo`` and ``replay:``)."""
    from ..llm import get_model

    return get_model(variant.model)


def _run_job_in_own_browser(
    job: Job, model_factory: Callable[[Variant, SuiteTask], Any], cdp_url: str | None
) -> EvalRow:
    """Executor entry point: a fresh event loop and browser in the worker (thread, process or remote)."""

    async def main() -> EvalRow:
        async with BrowserSession(cdp_url=cdp_url) as browser:
            if cdp_url is None:
                row, _ = await run_job(job, browser, model_factory)
                return row
            # A browser someone else runs is shared by every worker: its default context (and tabs) too. Each
            # job gets a context of its own there, so jobs never navigate each other's pages.
            own = await browser.fork()
            try:
                row, _ = await run_job(job, own, model_factory)
            finally:
                await own.close()
            return row

    return asyncio.run(main())


async def evaluate(
    suite: Suite | str | Path | Mapping[str, Any],
    variants: Sequence[Variant | Mapping[str, Any]] | None = None,
    *,
    repeats: int = 1,
    concurrency: int = 2,
    browser: BrowserSession | None = None,
    variables: Mapping[str, str] | None = None,
    model_factory: Callable[[Variant, SuiteTask], Any] = default_model_factory,
    executor: concurrent.futures.Executor | None = None,
    cdp_url: str | None = None,
    on_progress: ProgressCallback | None = None,
) -> EvalReport:
    """Run every variant on every task ``repeats`` times, ``concurrency`` at a time; returns the table.

    Without ``browser`` one is started (or connected to at ``cdp_url``) for the evaluation and closed after.
    With ``executor``, each run goes to the executor and starts its own browser there (``cdp_url`` to reach
    a browser service), so the scheduling is the executor's.
    """
    if not isinstance(suite, Suite):
        suite = load_suite(suite, variables)
    chosen = [v if isinstance(v, Variant) else Variant(**v) for v in (variants or suite.variants)] or [
        Variant("default")
    ]
    if len({v.name for v in chosen}) != len(chosen):
        raise ValueError("Variant names must be unique")
    if concurrency < 1 or repeats < 1:
        raise ValueError("concurrency and repeats must be at least 1")
    jobs = [Job(v, t, r) for v in chosen for t in suite.tasks for r in range(1, repeats + 1)]
    rows: list[EvalRow | None] = [None] * len(jobs)
    results: list[PageAgentResult] = []
    gate = asyncio.Semaphore(concurrency)

    def progress(kind: str, job: Job, row: EvalRow | None = None) -> None:
        if on_progress is not None:
            on_progress(kind, job, row)

    own = browser is None and executor is None
    if own:
        browser = BrowserSession(cdp_url=cdp_url)
        await browser.start()

    async def one(i: int, job: Job) -> None:
        async with gate:
            progress("started", job)
            if executor is not None:
                loop = asyncio.get_running_loop()
                row = await loop.run_in_executor(executor, _run_job_in_own_browser, job, model_factory, cdp_url)
            else:
                assert browser is not None
                ctx = await browser.fork()
                try:
                    row, result = await run_job(job, ctx, model_factory)
                    results.append(result)
                finally:
                    await ctx.close()
            rows[i] = row
            progress("finished", job, row)

    try:
        await asyncio.gather(*(one(i, j) for i, j in enumerate(jobs)))
    finally:
        if own and browser is not None:
            await browser.close()
    return EvalReport(suite=suite.name, rows=[r for r in rows if r is not None], results=results)

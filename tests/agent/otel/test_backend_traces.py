"""Runs, replays and maps arrive as OpenTelemetry traces in a real tracing backend, read back through its own API:
MLflow's tracking server on loopback (tests/agent/otel/backend.py), fed by the package's OTLP exporter from the
standard ``OTEL_*`` settings. One trace per run (a map: one trace, a span per row, each row's run under it), spans
nested step / model call / approval / action, token counts equal to the run's usage, and no secret anywhere in a
trace, even with the prompts and page text captured. Real Chromium, local pages, scripted models."""

from __future__ import annotations

import concurrent.futures
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from notebook_agent.agent import PageAgent, PageAgentResult
from notebook_agent.agent.otel.export import flush
from notebook_agent.agent.prompt.agent_output import MACRO_NAME, agent_output
from notebook_agent.agent.safety.approval import ApprovalAnswer, ApprovalRequest
from notebook_agent.browser import BrowserSession
from notebook_agent.core.messages import Usage
from notebook_agent.demo import DEMO_TASK, serve_demo
from notebook_agent.llm.scripted import ScriptedCall, ScriptedModel, error
from tests.agent.otel.backend import Backend, children, mlflow_server, root, spans, tokens
from tests.agent.test_page_agent import index_of, step
from tests.browser import conftest as site
from tests.browser.conftest import Servers

ROOT = Path(__file__).resolve().parents[3]
USAGE = Usage(input=300, output=40, cache_read=100, cache_write=20)
PASSWORD = "hunter2-correct-horse-otel"
TOKEN = "tok-OTEL-never-in-a-span-7d"
PLACEHOLDER = "<secret>site_password</secret>"
SHOP_TASK = "Find the cheapest {what} on the demo shop, add it to the cart, and tell me its name and price."


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    pytest.importorskip("opentelemetry.sdk", reason="the [otel] extra (in the dev extra)")
    pytest.importorskip("mlflow", reason="the tracing backend of the dev extra")
    with mlflow_server(tmp_path_factory.mktemp("mlflow")) as server:
        yield server


@pytest.fixture
def experiment(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh experiment, and the standard OTLP settings pointing at it (nothing else of OTEL_* set)."""
    for name in [n for n in os.environ if n.startswith("OTEL_")]:
        monkeypatch.delenv(name)
    found = backend.experiment()
    for name, value in backend.settings(found).items():
        monkeypatch.setenv(name, value)
    return found


async def approve(request: ApprovalRequest) -> ApprovalAnswer:
    return ApprovalAnswer(True, "looks right")


def input_tokens(u: Usage) -> int:
    return u.input + u.cache_read + u.cache_write


def run_tree(trace: Any, result: PageAgentResult) -> None:
    """``trace`` is ``result``'s run as this package draws it: the run's span, a span per step under it, and under
    each step its model call (none when replayed), approval wait and action; tokens as the run counted them."""
    every = spans(trace)
    top = root(every)
    check_run(every, top, result)
    assert tokens(trace)["input_tokens"] == input_tokens(result.usage)
    assert tokens(trace)["output_tokens"] == result.usage.output


def check_run(every: list[Any], top: Any, result: PageAgentResult) -> None:
    assert top.name == "invoke_agent notebook_agent"
    facts = top.attributes
    assert facts["notebook_agent.run.id"] == result.run_id and facts["notebook_agent.run.status"] == result.status
    assert facts["gen_ai.usage.input_tokens"] == input_tokens(result.usage)
    assert facts["gen_ai.usage.output_tokens"] == result.usage.output
    step_spans = children(every, top)
    assert [s.name for s in step_spans] == [f"step {s.index}" for s in result.steps]
    model_in = model_out = 0
    for record, span in zip(result.steps, step_spans, strict=True):
        calls = children(every, span, "chat ")
        assert len(calls) == (0 if record.replay == "replayed" else 1)
        for call in calls:
            assert call.attributes["gen_ai.operation.name"] == "chat"
            assert call.attributes["gen_ai.usage.input_tokens"] == input_tokens(record.usage)
            model_in += call.attributes["gen_ai.usage.input_tokens"]
            model_out += call.attributes["gen_ai.usage.output_tokens"]
            took_ms = (call.end_time_ns - call.start_time_ns) / 1e6
            assert abs(took_ms - record.model_ms) < 0.001  # the run's own measure of the call
        acted = [f"execute_tool {record.action}"] if record.action else []  # none for an output that cannot run
        assert [a.name for a in children(every, span, "execute_tool ")] == acted
        assert len(children(every, span, "approval ")) == (1 if record.approval else 0)
        assert len(children(every, span)) == len(calls) + len(acted) + (1 if record.approval else 0)
    assert (model_in, model_out) == (input_tokens(result.usage), result.usage.output)


async def test_a_run_is_one_trace_of_steps_model_calls_approvals_and_actions(
    browser: BrowserSession, servers: Servers, backend: Backend, experiment: str
) -> None:
    script = [
        step("input_text", lambda c: {"index": index_of(c, r"name=name"), "text": "Ada"}),
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Create account")}),
        step("done", {"text": "Signed up", "success": True}),
    ]
    agent = PageAgent(
        model=ScriptedModel(script, usage=USAGE),
        browser=browser,
        start_url=servers.url("agent_form.html"),
        approval="ask-all",
        approver=approve,
        screenshots=False,
    )  # tracing=None: on, because the OTEL_* settings name an endpoint
    result = await agent.run("Sign up as Ada")
    assert result.success and any(s.approval for s in result.steps)
    assert flush()
    (trace,) = backend.traces(experiment)
    run_tree(trace, result)
    approval = next(s for s in spans(trace) if s.name.startswith("approval "))
    assert approval.attributes["notebook_agent.approval.approved"] is True
    assert "gen_ai.input.messages" not in json.dumps(trace.to_dict())  # no content without the opt-in


def unusable(memory: str) -> ScriptedCall:
    output = {"evaluation_previous_goal": "", "memory": memory, "next_goal": "", "action": {"fly_away": {}}}
    return ScriptedCall(MACRO_NAME, output)


async def test_no_secret_reaches_a_span_even_with_prompts_and_page_text_captured(
    browser: BrowserSession, servers: Servers, backend: Backend, experiment: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    site.LOGIN.update(password=PASSWORD, apitoken=TOKEN)
    site.LOGINS.clear()
    script = [
        step("input_text", lambda c: {"index": index_of(c, r"name=username"), "text": "ada"}),
        step("input_text", lambda c: {"index": index_of(c, r"type=password"), "text": PLACEHOLDER}),
        step("input_text", lambda c: {"index": index_of(c, r"apitoken|API token"), "text": TOKEN}),
        unusable(f"the token is {TOKEN}"),  # an output that cannot run, kept as the model wrote it
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Sign in")}, memory=f"token {TOKEN} typed"),
        step("done", {"text": f"Signed in with {TOKEN}", "success": True}),
    ]
    agent = PageAgent(
        model=ScriptedModel(script, usage=USAGE),
        browser=browser,
        start_url=servers.url("login.html"),
        secrets={servers.main: {"site_password": PASSWORD}},
        screenshots=False,
    )
    result = await agent.run("Sign in as ada")
    assert result.success, result.error
    assert any(s.output_error for s in result.steps)
    assert site.LOGINS and site.LOGINS[-1]["password"] == PASSWORD  # the real value was typed, for real
    assert flush()
    (trace,) = backend.traces(experiment)
    run_tree(trace, result)
    everything = json.dumps(trace.to_dict(), ensure_ascii=False)
    assert PASSWORD not in everything and TOKEN not in everything
    # the content is there, redacted: the prompt's page text, the placeholder the model typed, the hidden token
    assert "gen_ai.input.messages" in everything and "Sign in" in everything
    assert PLACEHOLDER in everything and "[redacted" in everything


async def test_a_model_call_the_provider_failed_is_a_failed_span_with_its_time_and_why(
    browser: BrowserSession, servers: Servers, backend: Backend, experiment: str
) -> None:
    script = [
        step("input_text", lambda c: {"index": index_of(c, r"name=name"), "text": "Ada"}),
        error("The provider is overloaded; try again later", kind="server"),
    ]
    agent = PageAgent(
        model=ScriptedModel(script, usage=USAGE), browser=browser, start_url=servers.url("agent_form.html")
    )
    result = await agent.run("Sign up as Ada")
    assert result.status == "error" and len(result.steps) == 2 and result.steps[1].model_ms > 0
    assert flush()
    (trace,) = backend.traces(experiment)
    every = spans(trace)
    top = root(every)
    failed_step = children(every, top)[1]
    (call,) = children(every, failed_step, "chat ")
    assert abs((call.end_time_ns - call.start_time_ns) / 1e6 - result.steps[1].model_ms) < 0.001
    assert call.attributes["gen_ai.response.finish_reasons"] == ["error"]
    for span in (call, top):
        assert span.status.status_code == "ERROR" and "overloaded" in span.status.description


async def test_a_replay_is_a_trace_of_its_own_with_no_model_calls(
    browser: BrowserSession, servers: Servers, backend: Backend, experiment: str
) -> None:
    script = [
        step("input_text", lambda c: {"index": index_of(c, r"name=name"), "text": "Ada"}),
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Create account")}),
        step("done", {"text": "Signed up", "success": True}),
    ]
    agent = PageAgent(
        model=ScriptedModel(script, usage=USAGE), browser=browser, start_url=servers.url("agent_form.html")
    )
    recorded = await agent.run("Sign up as Ada")
    replayed = await agent.replay(recorded)
    assert recorded.success and replayed.success and replayed.replay_counts == {"replayed": 3}
    assert flush()
    first, second = backend.traces(experiment)
    run_tree(first, recorded)
    run_tree(second, replayed)
    assert root(spans(first)).attributes["notebook_agent.run.kind"] == "run"
    facts = root(spans(second)).attributes
    assert facts["notebook_agent.run.kind"] == "replay" and facts["notebook_agent.replay.replayed"] == 3
    assert facts["gen_ai.usage.input_tokens"] == 0 == replayed.usage.tokens


def row_model(row: dict[str, Any]) -> ScriptedModel:
    n = int(row["n"])
    return ScriptedModel(
        [agent_output("done", {"text": f"row {n}", "success": True})], usage=Usage(input=100 * n, output=n)
    )


def check_map(trace: Any, result: Any) -> None:
    """One trace: the map's span, a ``row N`` span per row under it, and that row's run under its row."""
    every = spans(trace)
    top = root(every)
    assert top.name == "map" and top.attributes["notebook_agent.map.rows"] == len(result.rows)
    rows = children(every, top)
    assert sorted(s.name for s in rows) == sorted(f"row {r.index}" for r in result.rows)
    for record in result.rows:
        (row_span,) = [s for s in rows if s.name == f"row {record.index}"]
        (run_span,) = children(every, row_span)
        assert record.result is not None
        check_run(every, run_span, record.result)
    total = sum(input_tokens(r.result.usage) for r in result.rows if r.result is not None)
    assert tokens(trace)["input_tokens"] == total


async def test_a_map_is_one_trace_with_a_span_per_row_and_each_rows_run_under_it(
    browser: BrowserSession, servers: Servers, backend: Backend, experiment: str
) -> None:
    agent = PageAgent(model=ScriptedModel(), browser=browser, start_url=servers.url("agent_form.html"))
    result = await agent.map("Say row {n}", [{"n": n} for n in (1, 2, 3)], concurrency=2, model_factory=row_model)
    assert [r.status for r in result.rows] == ["completed"] * 3
    assert flush()
    (trace,) = backend.traces(experiment)
    check_map(trace, result)


async def test_rows_on_an_executor_nest_under_their_row_spans(backend: Backend, experiment: str) -> None:
    """A row that runs on an executor's worker carries its row's span with it (a W3C traceparent)."""
    from notebook_agent.agent.batch.map_rows import close_worker_browser

    with serve_demo() as shop:
        agent = PageAgent(model="demo", start_url=f"{shop.url}/", max_steps=12)
        try:
            with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
                rows = [{"what": "wireless headphones"}] * 2
                result = await agent.map(SHOP_TASK, rows, executor=pool, model="demo")
        finally:
            close_worker_browser()
    assert [r.status for r in result.rows] == ["completed"] * 2
    assert flush()
    (trace,) = backend.traces(experiment)
    check_map(trace, result)


def test_the_terminal_sends_its_run_before_it_exits(backend: Backend, experiment: str, tmp_path: Path) -> None:
    """``notebook-agent run --tracing``: the run's trace arrives though the process ends right after the run."""
    with serve_demo() as shop:
        env = {**os.environ, **backend.settings(experiment)}
        done = subprocess.run(
            [sys.executable, "-m", "notebook_agent", "run", DEMO_TASK, "--model", "demo", "--url", f"{shop.url}/",
             "--tracing", "--approve", "auto", "--json", "--runs-dir", str(tmp_path)],
            capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL, cwd=ROOT, env=env,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)
    (trace,) = backend.traces(experiment)
    top = root(spans(trace))
    assert top.attributes["notebook_agent.run.id"] == run["run_id"]
    assert len(children(spans(trace), top)) == len(run["steps"])

"""A PageAgent driven by a real small model on the managed llama-server, through the real openai SDK.

Opt-in (marker ``local_llm``; see conftest). The 0.5B test asserts structure, not choices: every step's
output is valid against the AgentOutput schema, came through the schema-constrained path, and the run ends;
every request carried the schema constraint. The 1.5B test (only with ``NOTEBOOK_AGENT_LOCAL_LLM_RATE=1``)
reports a success rate on three pages and asserts only that each run ended with schema-valid steps.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from notebook_agent import BrowserSession, PageAgent, PageAgentResult
from notebook_agent.llm import get_model
from notebook_agent.llm.local import llama_server as local_server
from notebook_agent.testing import started_server
from tests.local_llm.conftest import Recorder, local_model_file, server_timings

# A real model on 2 cores takes minutes per run; the global hang guard (600 s) is for everything else.
pytestmark = [pytest.mark.local_llm, pytest.mark.timeout(1800)]
RATE_ENV = "NOTEBOOK_AGENT_LOCAL_LLM_RATE"


def check_run(result: PageAgentResult, bodies: list[dict[str, Any]]) -> None:
    """The run ended, each step's output is schema-valid and schema-constrained, each request carried it."""
    assert result.status in ("completed", "failed", "max_steps"), (result.status, result.error)
    assert result.steps and bodies and len(bodies) == len(result.steps)
    for body in bodies:
        assert body["response_format"]["type"] == "json_schema"
        assert body["response_format"]["json_schema"]["name"] == "AgentOutput"
        assert body["response_format"]["json_schema"]["strict"] is True
        assert not {"tools", "tool_choice"} & set(body)
        assert body["temperature"] == 0.0 and body["cache_prompt"] is True
    for step, body in zip(result.steps, bodies, strict=True):
        output = step.output
        assert output is not None and output.stop_reason == "toolUse", output and output.error_message
        assert output.output_mode == "json_schema"
        (call,) = output.tool_calls
        assert call.name == "AgentOutput"
        jsonschema.validate(call.arguments, body["response_format"]["json_schema"]["schema"])
        assert step.output_error is None and step.action is not None


def server_for(path: Path) -> local_server.LocalServer:
    server = started_server(path)
    assert server is not None, f"no llama-server was started for {path}"
    return server


def report(label: str, result: PageAgentResult, server: local_server.LocalServer, offset: int, seconds: float) -> None:
    """Per-step figures (stdout, with -s): action, model time, prompt tokens evaluated and cached, tokens/s."""
    timings = server_timings(server.log_path, offset)
    print(f"\n[{label}] status={result.status} success={result.success} steps={len(result.steps)} {seconds:.1f}s")
    for i, step in enumerate(result.steps):
        t = timings[i] if i < len(timings) else None
        figures = (
            f"prompt_eval={t['prompt_tokens']} tok/{t['prompt_ms']:.0f}ms gen={t['gen_tokens']} tok "
            f"@ {t['tok_s']:.1f} tok/s"
            if t
            else "(no server timing)"
        )
        print(
            f"  step {step.index}: {step.action} {step.args} model={step.model_ms / 1000:.2f}s "
            f"cached={step.usage.cache_read} {figures}"
        )


async def test_page_agent_runs_on_the_local_05b_model(browser: BrowserSession, pages: str, recorder: Recorder) -> None:
    path = local_model_file("0.5b")
    model = get_model(f"local:{path}", http_client=recorder.client(), max_retries=0)
    server = server_for(path)
    offset = server.log_path.stat().st_size
    agent = PageAgent(model=model, browser=browser, start_url=f"{pages}/signup.html", max_steps=4)
    started = time.perf_counter()
    result = await agent.run("Type Ada into the name field and press Create account.")
    report("0.5b signup", result, server, offset, time.perf_counter() - started)
    check_run(result, recorder.bodies)


TASKS = [
    ("signup.html", "Type Ada into the name field and press Create account.", "#out", "Welcome Ada"),
    ("subscribe.html", "Subscribe to the newsletter.", "#status", "Subscribed"),
    ("shop.html", "Open the pricing page and tell me what the Pro plan costs.", "h1", "Pricing"),
]


async def test_page_agent_success_rate_on_the_local_15b_model(
    browser: BrowserSession, pages: str, recorder: Recorder
) -> None:
    if not os.environ.get(RATE_ENV):
        pytest.skip(f"a measurement (minutes of CPU), not a check: set {RATE_ENV}=1 to run it")
    path = local_model_file("1.5b")
    model = get_model(f"local:{path}", http_client=recorder.client(), max_retries=0)
    successes = 0
    for page, task, selector, expected in TASKS:
        recorder.bodies.clear()
        server = server_for(path)
        offset = server.log_path.stat().st_size
        agent = PageAgent(model=model, browser=browser, start_url=f"{pages}/{page}", max_steps=5)
        started = time.perf_counter()
        result = await agent.run(task)
        report(f"1.5b {page}", result, server, offset, time.perf_counter() - started)
        check_run(result, recorder.bodies)
        text = await browser.page.text_content(selector) or ""
        ok = result.status == "completed" and result.success and expected in text
        successes += ok
    print(f"\n[1.5b] success rate: {successes}/{len(TASKS)}")

"""A run's budget (``max_cost``, ``max_tokens``): real Chromium, the real loop, a scripted model that reports what
each call used. The run stops before a call that would cross the budget, or at most one step after it, with status
``budget`` and what it spent; that status is a run file's and every view's; a budget that cannot be kept is refused
before anything runs."""

from __future__ import annotations

import copy
import io
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from notebook_agent.agent import PageAgent
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.agent.runs.run_file import load_run, save_run
from notebook_agent.agent.safety.budget import BudgetError
from notebook_agent.browser import BrowserSession
from notebook_agent.cli.terminal import print_event
from notebook_agent.core.action_facts import ActionFacts
from notebook_agent.core.messages import Usage
from notebook_agent.core.tools import ToolCallContext, tool
from notebook_agent.llm.scripted import ScriptedModel, reply
from notebook_agent.notebook.views.record import record_html
from notebook_agent.notebook.views.run_view import summary_html

PRICES = {"input": 2.0, "output": 8.0}  # dollars per million tokens


class Note(BaseModel):
    n: int


@tool(parameters=Note, risk="safe", facts=ActionFacts(repeatable=True))
async def note(args: Note, ctx: ToolCallContext) -> str:
    """Note a number (a step that changes nothing and may repeat: what the budget is tested on)."""
    return f"noted {args.n}"


def model_using(usages: list[tuple[int, int]], prices: dict[str, float] | None = None) -> ScriptedModel:
    """A model whose ``i``-th call notes ``i`` and reports ``usages[i]`` (input, output) tokens; then it is done."""
    script = [reply(agent_output("note", {"n": i}), usage=Usage(input=a, output=b)) for i, (a, b) in enumerate(usages)]
    done = agent_output("done", {"text": "noted them all", "success": True})
    return ScriptedModel(script, on_exhausted=done, prices=PRICES if prices is None else prices)


def agent_for(browser: BrowserSession, model: ScriptedModel, **budget: Any) -> PageAgent[None]:
    return PageAgent(
        model=model,
        browser=browser,
        custom_tools={"note": note},
        max_steps=8,
        screenshots=False,
        max_cost=budget.get("max_cost"),
        max_tokens=budget.get("max_tokens"),
    )


async def test_max_tokens_stops_a_run_before_the_call_that_would_cross_it(browser: BrowserSession) -> None:
    await browser.page.set_content("<h1>Notes</h1><p>Nothing to see.</p>")
    model = model_using([(1_000, 100)] * 10)
    result = await agent_for(browser, model, max_tokens=4_000).run("note numbers")
    assert result.status == "budget" and not result.success
    last = result.steps[-1]
    assert last.stopped and last.action is None and last.usage.calls == 0  # its model call was never made
    assert last.result.startswith(f"Stopped before step {last.index}'s model call: about ")
    assert "would cross max_tokens=4,000 after " in last.result and result.error == last.result
    assert len(model.requests) == result.usage.calls == len(result.steps) - 1  # the calls made, and only those
    assert result.usage.tokens <= 4_000  # stopped before crossing it
    assert f"{result.usage.tokens:,} tokens" in result.error  # what was spent


async def test_a_call_that_uses_more_than_estimated_ends_the_run_one_step_past_the_budget(
    browser: BrowserSession,
) -> None:
    await browser.page.set_content("<p>Nothing to see.</p>")
    model = model_using([(9_000, 500)] * 3)  # far more than the prompt counted offline
    result = await agent_for(browser, model, max_tokens=6_000).run("note numbers")
    assert result.status == "budget" and result.usage.calls == 1 and len(result.steps) == 1
    assert result.steps[0].action == "note" and result.steps[0].result == "noted 0"  # the step that crossed ran
    assert result.error == "Stopped at the budget: 9,500 tokens, $0.0220 spent, more than max_tokens=6,000."


async def test_max_cost_stops_at_the_model_prices_and_the_status_is_every_views(
    browser: BrowserSession, tmp_path: Path
) -> None:
    await browser.page.set_content("<p>Nothing to see.</p>")
    model = model_using([(20_000, 1_000)] * 10)  # $0.048 a call at $2 / $8 per million
    result = await agent_for(browser, model, max_cost=0.1).run("note numbers")
    assert result.status == "budget" and result.usage.calls == 2
    assert result.usage.dollars == pytest.approx(0.096) and "max_cost=$0.1 " in (result.error or "")
    assert "budget" in repr(result)
    assert "stopped at its budget" in summary_html(result) and "$0.0960" in summary_html(result)
    assert "Stopped" in record_html(result) and "$0.0960" in record_html(result)
    lines: list[str] = []

    class Out(io.StringIO):
        def write(self, text: str) -> int:
            lines.append(text)
            return len(text)

    print_event(type("E", (), {"type": "run_finished", "result": result})(), Out())
    said = "".join(lines)
    assert said.startswith("\nbudget: success=False · 3 steps (2 finished) · ") and "2 calls · $0.0960 · " in said
    loaded = load_run(save_run(copy.deepcopy(result), tmp_path))  # the run file keeps the status and the spend
    assert loaded.status == "budget" and loaded.error == result.error
    assert loaded.usage.dollars == pytest.approx(0.096) and loaded.usage.calls == 2


async def test_a_budget_that_cannot_be_kept_is_refused_before_the_run(browser: BrowserSession) -> None:
    unpriced = ScriptedModel([], prices=None)  # a model whose prices nobody knows
    with pytest.raises(BudgetError, match=r"^max_cost=0\.5 cannot be kept: the prices of scripted:scripted are not"):
        agent_for(browser, unpriced, max_cost=0.5)
    agent_for(browser, unpriced, max_tokens=500)  # tokens can be counted without prices
    cases: list[tuple[dict[str, Any], str]] = [
        ({"max_cost": -1}, "max_cost must be a number of dollars above 0, got -1."),
        ({"max_cost": "a lot"}, "max_cost must be a number of dollars above 0, got 'a lot'."),
        ({"max_tokens": 0}, "max_tokens must be a whole number of tokens above 0, got 0."),
        ({"max_tokens": 2.5}, "max_tokens must be a whole number of tokens above 0, got 2.5."),
    ]
    for bad, message in cases:
        with pytest.raises(BudgetError) as caught:
            agent_for(browser, model_using([]), **bad)
        assert str(caught.value) == message


USAGES = st.lists(st.tuples(st.integers(0, 6_000), st.integers(0, 1_500)), min_size=1, max_size=8)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(usages=USAGES, budget=st.integers(500, 30_000), in_dollars=st.booleans())
async def test_a_run_never_spends_more_than_its_budget_and_one_step(
    browser: BrowserSession, usages: list[tuple[int, int]], budget: int, in_dollars: bool
) -> None:
    """Whatever each call reports using (less or far more than the prompt counted offline) and whatever the
    budget: what the run spent before its last step is within the budget, and a run that crossed it says budget."""
    await browser.page.set_content("<p>Nothing to see.</p>")
    model = model_using(usages)
    limit = {"max_cost": budget * 1e-6 * 4} if in_dollars else {"max_tokens": budget}
    result = await agent_for(browser, model, **limit).run("note numbers")

    def spent(usage: Usage) -> float:
        return (usage.dollars or 0.0) if in_dollars else usage.tokens

    allowed = budget * 1e-6 * 4 if in_dollars else budget
    total = spent(result.usage)
    before_last = total - spent(result.steps[-1].usage)
    assert before_last <= allowed + 1e-12, (result.status, total, allowed)
    if total > allowed + 1e-12:
        assert result.status == "budget"
    assert result.status in ("budget", "completed", "max_steps"), result.error
    assert len(model.requests) == result.usage.calls  # every call made is counted, none made after the stop

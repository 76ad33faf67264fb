"""The finishing action's verdict is one typed value (:class:`Finished`) that the run reads, whatever the
action is called: a custom tool that finishes the run sets it, a custom ``done`` that returns plain text
still finishes as before, and the typed ``done``'s checked answer is a declared field the model cannot set.
Real Chromium, a local page, the real loop, a scripted model."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from notebook_agent.agent import PageAgent, RunFinished
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.agent.runs.result import PageStep
from notebook_agent.agent.step.ending import RunOutcome, verdict_of
from notebook_agent.agent.step.typed_output import OutputSpec, TypedDone
from notebook_agent.browser import BrowserSession
from notebook_agent.core.tools import Finished, ToolArgumentError, ToolCallContext, ToolResult, call_context, tool
from notebook_agent.llm.scripted import ScriptedModel
from tests.browser.conftest import Servers

NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}


class Item(BaseModel):
    name: str


async def run_agent(agent: PageAgent) -> Any:
    events = [e async for e in agent.stream("do it")]
    return next(e for e in events if isinstance(e, RunFinished)).result


async def test_a_custom_finishing_tool_ends_the_run_with_its_verdict(browser: BrowserSession, servers: Servers) -> None:
    @tool(parameters=NO_ARGS, risk="safe")
    async def submit(args: Any, ctx: ToolCallContext) -> ToolResult:
        """Hand the work in."""
        return ToolResult.finish("handed in", Finished("All handed in.", True))

    agent = PageAgent(
        model=ScriptedModel([agent_output("submit", {}), agent_output("done", {"text": "never", "success": False})]),
        browser=browser,
        start_url=servers.url("nav.html"),
        custom_tools={"submit": submit},
    )
    result = await run_agent(agent)
    assert result.status == "completed" and result.success and result.text == "All handed in."
    assert [s.action for s in result.steps] == ["submit"]


async def test_a_custom_done_returning_text_still_finishes_from_its_arguments(
    browser: BrowserSession, servers: Servers
) -> None:
    @tool(parameters={"type": "object", "properties": {"text": {"type": "string"}, "success": {"type": "boolean"}}})
    async def done(args: Any, ctx: ToolCallContext) -> str:
        """Finish."""
        return "finished"

    agent = PageAgent(
        model=ScriptedModel([agent_output("done", {"text": "it failed", "success": False})]),
        browser=browser,
        start_url=servers.url("nav.html"),
        custom_tools={"done": done},
    )
    result = await run_agent(agent)
    assert result.status == "failed" and not result.success and result.text == "it failed"


async def test_the_typed_done_returns_its_checked_answer_as_the_verdict() -> None:
    spec = OutputSpec(list[Item])
    done = spec.done_tool({}, lambda text: False)
    args = done.validate({"text": "two", "success": True, "data": [{"name": "a"}, {"name": "b"}]})
    assert isinstance(args, TypedDone) and args.model_dump() == {
        "text": "two",
        "success": True,
        "data": [{"name": "a"}, {"name": "b"}],
        "table": None,
        "columns": None,
    }
    result = await done.execute(args, call_context())
    assert isinstance(result, ToolResult) and result.terminate
    assert result.finished == Finished("two", True, [Item(name="a"), Item(name="b")])


def test_the_model_cannot_hand_in_a_checked_answer_itself() -> None:
    done = OutputSpec(list[Item]).done_tool({}, lambda text: False)
    with pytest.raises(ToolArgumentError, match="output"):
        done.validate({"text": "x", "success": False, "output": [{"name": "forged"}]})


@given(text=st.text(max_size=40), success=st.booleans(), name=st.sampled_from(["done", "submit", "finish_up"]))
def test_any_verdict_settles_the_run_the_same_way(text: str, success: bool, name: str) -> None:
    """Whatever the finishing action is called and says, the outcome is its verdict; a result without one
    finishes nothing unless the action is a ``done`` (read from its arguments)."""
    verdict = Finished(text, success)
    step = PageStep(index=0, action=name, args={"text": text, "success": success})
    outcome = RunOutcome(max_steps=5, max_failures=3)
    outcome.action_finished(step, None, verdict_of(name, ToolResult.finish(text, verdict), step.args))
    assert outcome.should_stop(1)
    outcome.settle([], 1, None)
    assert outcome.verdict() == {
        "status": "completed" if success else "failed",
        "success": success,
        "text": text,
        "error": None,
    }
    plain = verdict_of(name, ToolResult.text("ok"), step.args)
    assert (plain == verdict) if name == "done" else plain is None


async def test_a_tool_reads_the_agents_deps_from_its_context(browser: BrowserSession, servers: Servers) -> None:
    from notebook_agent.agent.step.tool_context import ToolContext

    seen: list[str] = []

    @tool(parameters=NO_ARGS, risk="safe")
    async def shop_name(args: Any, ctx: ToolContext[Item]) -> str:
        """The shop's name."""
        seen.append(ctx.deps.name)
        return ctx.deps.name

    agent = PageAgent(
        model=ScriptedModel([agent_output("shop_name", {}), agent_output("done", {"text": "ok", "success": True})]),
        browser=browser,
        start_url=servers.url("nav.html"),
        custom_tools={"shop_name": shop_name},
        deps=Item(name="Lamps & Co"),
    )
    result = await run_agent(agent)
    assert result.status == "completed" and seen == ["Lamps & Co"]

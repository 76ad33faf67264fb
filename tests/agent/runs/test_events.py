"""The page agent's one event stream: only page events leave a run, the reflection streams already parsed in
every output mode, and an approval is one object that is answered exactly once, whoever answers it."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any, get_args

import pytest

from notebook_agent.agent import (
    Approval,
    ApprovalAnswer,
    ApprovalAnswered,
    ApprovalRequest,
    ApprovalRequested,
    ModelOutputParsed,
    PageAgent,
    PageEvent,
    ReflectionPartial,
    RunFinished,
    StepFinished,
)
from notebook_agent.agent.prompt.agent_output import MACRO_NAME, agent_output
from notebook_agent.agent.prompt.state_message import MEMORY_MAX
from notebook_agent.browser import BrowserSession
from notebook_agent.core.abort import AbortSignal
from notebook_agent.llm.scripted import Response, ScriptedCall, ScriptedModel
from tests.agent.test_page_agent import index_of, step
from tests.browser.conftest import Servers

GOAL = "Open the thanks page to see what the form says"
OUTPUT = {
    "evaluation_previous_goal": "Nothing done yet",
    "memory": "m" * (MEMORY_MAX + 50),
    "next_goal": GOAL,
    "action": {"wait": {"seconds": 1}},
}
# The same output in the three shapes a model sends it: a tool call, JSON in text after some words (the text
# and json_schema output modes), and a tool-call envelope written as text.
SHAPES: dict[str, Response] = {
    "tool call": ScriptedCall(MACRO_NAME, OUTPUT),
    "json in text": "Here is my answer:\n" + json.dumps(OUTPUT),
    "envelope in text": json.dumps({"name": MACRO_NAME, "arguments": OUTPUT}),
}
PAGE_EVENTS = tuple(get_args(PageEvent))


@pytest.mark.parametrize("shape", list(SHAPES))
async def test_the_reflection_streams_parsed_and_capped_in_every_output_mode(
    browser: BrowserSession, servers: Servers, shape: str
) -> None:
    model = ScriptedModel([SHAPES[shape], agent_output("done", {"text": "ok", "success": True})], chunk=7)
    agent = PageAgent(model=model, browser=browser, start_url=servers.url("agent_form.html"))
    events = [e async for e in agent.stream("watch it think")]
    assert all(isinstance(e, PAGE_EVENTS) for e in events), {type(e).__name__ for e in events}
    first_parsed = next(i for i, e in enumerate(events) if isinstance(e, ModelOutputParsed))
    partials = [e for e in events[:first_parsed] if isinstance(e, ReflectionPartial)]
    goals = [p.next_goal for p in partials if p.next_goal]
    assert len(set(goals)) > 2 and goals[-1] == GOAL  # it grew while the model wrote
    assert any(p.evaluation_previous_goal == "Nothing done yet" for p in partials)
    assert all(p.step == 1 for p in partials) and partials[-1].action == "wait"
    final_memory = events[first_parsed].step.memory  # type: ignore[union-attr]
    assert final_memory != OUTPUT["memory"] and partials[-1].memory == final_memory  # capped like the final field
    assert max(len(p.memory) for p in partials) == len(final_memory)
    result = next(e for e in events if isinstance(e, RunFinished)).result
    assert result.status == "completed" and sum(isinstance(e, StepFinished) for e in events) == 2


def delete_script() -> list[Any]:
    return [
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Delete account")}),
        step("done", {"text": "x", "success": True}),
    ]


async def gated(browser: BrowserSession, servers: Servers, **kw: Any) -> Any:
    kw.setdefault("approval", "ask-risky")
    return PageAgent(
        model=ScriptedModel(delete_script()), browser=browser, start_url=servers.url("agent_danger.html"), **kw
    )


async def test_an_interactive_consumer_answers_the_approval_it_is_handed(
    browser: BrowserSession, servers: Servers
) -> None:
    agent = await gated(browser, servers)
    events: list[Any] = []
    async for event in agent.stream("delete it", interactive=True):
        events.append(event)
        if isinstance(event, ApprovalRequested):
            assert not event.approval.answered and event.request.action == "click_element_by_index"
            assert event.approval.crop and event.approval.crop[:4] == b"\x89PNG"  # the target, for a person
            threading.Thread(target=event.approval.deny, args=("not from here",)).start()  # any thread
    answered = [e for e in events if isinstance(e, ApprovalAnswered)]
    assert [(a.answer.approved, a.answer.reason, a.answer.by) for a in answered] == [(False, "not from here", "user")]
    asked = next(e for e in events if isinstance(e, ApprovalRequested))
    assert asked.approval.answer == answered[0].answer
    assert await browser.page.inner_text("#state") != "Deleted"


async def test_the_first_answer_wins_and_later_ones_change_nothing(browser: BrowserSession, servers: Servers) -> None:
    async def approver(request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer(False, "the approver said no")

    agent = await gated(browser, servers, approver=approver)
    events: list[Any] = []
    async for event in agent.stream("delete it", interactive=True):
        events.append(event)
        if isinstance(event, ApprovalAnswered):
            asked = next(e for e in events if isinstance(e, ApprovalRequested)).approval
            asked.approve()  # too late: it was answered
            assert asked.answer is not None and not asked.answer.approved
    assert await browser.page.inner_text("#state") != "Deleted"
    answered = [e.answer for e in events if isinstance(e, ApprovalAnswered)]
    assert [a.reason for a in answered] == ["the approver said no"]


@pytest.mark.parametrize("interactive", [True, False])
async def test_an_approval_nobody_answers_is_closed_with_a_denial(
    browser: BrowserSession, servers: Servers, interactive: bool
) -> None:
    """No approver and no interactive consumer: denied at once. An interactive consumer that never answers:
    denied by the timeout. Either way the approval object ends answered."""
    agent = await gated(browser, servers, approval_timeout=0.3)
    events = [e async for e in agent.stream("delete it", interactive=interactive)]
    approval: Approval = next(e for e in events if isinstance(e, ApprovalRequested)).approval
    assert approval.answered and approval.answer is not None and not approval.answer.approved
    assert approval.answer.by == ("timeout" if interactive else "policy")


async def test_a_stop_while_asking_answers_the_approval(browser: BrowserSession, servers: Servers) -> None:
    agent = await gated(browser, servers)
    seen: list[Approval] = []
    async for event in agent.stream("delete it", interactive=True):
        if isinstance(event, ApprovalRequested):
            seen.append(event.approval)
            asyncio.get_running_loop().call_later(0.05, agent.stop)
        if isinstance(event, RunFinished):
            assert event.result.status == "stopped"
    assert seen and seen[0].answered and seen[0].answer is not None and not seen[0].answer.approved


async def test_a_thousand_calls_in_one_answer_run_one_and_the_model_is_told(
    browser: BrowserSession, servers: Servers
) -> None:
    from notebook_agent.core.messages import UserMessage
    from notebook_agent.llm.scripted import reply

    many = reply(*[agent_output("scroll", {"down": True}) for _ in range(1000)])
    model = ScriptedModel([many, agent_output("done", {"text": "ok", "success": True})])
    agent = PageAgent(model=model, browser=browser, start_url=servers.url("agent_form.html"))
    result = await agent.run("scroll once")
    assert [s.action for s in result.steps] == ["scroll", "done"]
    second = model.requests[1][0].messages[-1]
    assert isinstance(second, UserMessage)
    assert "In step 1 you sent 1000 function calls; only the first was used; the others did not run" in second.text


WAITS = {
    # the action waits for Approve / Deny
    "approval": (delete_script(), "while the action waited for approval; it did not run"),
    # the action waits for the person's answer to a question
    "question": (
        [step("ask_user", {"question": "Which one?"}), step("done", {"text": "x", "success": True})],
        "while the action waited for the person's answer",
    ),
}


@pytest.mark.parametrize("wait", list(WAITS))
async def test_a_stop_during_a_wait_is_recorded_as_a_stop_not_an_error(
    browser: BrowserSession, servers: Servers, wait: str
) -> None:
    """Stopping a run while its action waits records who stopped it and what the action waited for, marked as a
    stop (the views say "Stopped", never "Error"), not the bare "Operation aborted" the core loop used to write."""
    script, during = WAITS[wait]

    async def ask(question: str, signal: AbortSignal) -> str:
        agent.stop()  # the person stops the run instead of answering
        await asyncio.Event().wait()
        return ""

    agent = PageAgent(
        model=ScriptedModel(script),
        browser=browser,
        start_url=servers.url("agent_danger.html"),
        approval="ask-risky",
        on_ask_user=ask,
    )
    result = None
    async for event in agent.stream("delete it", interactive=True):
        if isinstance(event, ApprovalRequested):
            agent.stop()  # the person stops the run instead of clicking Approve or Deny
        if isinstance(event, RunFinished):
            result = event.result
    assert result is not None and result.status == "stopped"
    last = result.steps[-1]
    assert last.result == f"Stopped by the user {during}.", last.result
    assert last.stopped and last.is_error  # it did not do its work (replay and export leave it out), yet no error

"""End-to-end page agent runs: real Chromium, local pages, the real loop, a scripted (or wire-level) model."""

from __future__ import annotations

import base64
import json
import re
from typing import Any

import pytest
from pydantic import BaseModel

from notebook_agent.agent import (
    ApprovalAnswered,
    ApprovalRequested,
    PageAgent,
    RunFinished,
    ScreenshotTaken,
    StepStarted,
)
from notebook_agent.agent.prompt.agent_output import MACRO_NAME, agent_output
from notebook_agent.agent.safety.approval import ApprovalAnswer, ApprovalRequest
from notebook_agent.agent.step.replay_pilot import replay_model
from notebook_agent.browser import BrowserSession
from notebook_agent.core.abort import AbortSignal
from notebook_agent.core.messages import UserMessage
from notebook_agent.core.model import Context
from notebook_agent.core.tools import Tool, ToolCallContext
from notebook_agent.llm.scripted import ScriptedCall, ScriptedModel, call
from tests.browser.conftest import Servers


def state(ctx: Context) -> str:
    msg = ctx.messages[-1]
    assert isinstance(msg, UserMessage)
    return msg.text


def index_of(ctx: Context, pattern: str) -> int:
    """The index of the first element line matching ``pattern`` in the state message."""
    for line in state(ctx).splitlines():
        m = re.match(r"\s*\*?\[(\d+)\](.*)", line)
        if m and re.search(pattern, m.group(2)):
            return int(m.group(1))
    raise AssertionError(f"no element matches {pattern!r} in:\n{state(ctx)}")


def step(action: str, args: Any = None, **kw: Any) -> Any:
    """A scripted step whose args may be a function of the request (to look up indices)."""

    def make(ctx: Context) -> ScriptedCall:
        resolved = args(ctx) if callable(args) else args
        return agent_output(action, resolved, **kw)

    return make


async def run(browser: BrowserSession, script: list[Any], task: str = "do it", **kw: Any) -> Any:
    model = ScriptedModel(script)
    agent = PageAgent(model=model, browser=browser, **kw)
    events = [e async for e in agent.stream(task)]
    result = next(e for e in events if isinstance(e, RunFinished)).result
    return result, events, model


async def test_fill_and_submit_a_form(browser: BrowserSession, servers: Servers) -> None:
    script = [
        step(
            "input_text",
            lambda c: {"index": index_of(c, r"name=name"), "text": "Ada"},
            evaluation="Start",
            memory="name Ada",
            next_goal="type the name",
        ),
        step("select_dropdown_option", lambda c: {"index": index_of(c, r"<select name=plan"), "text": "pro"}),
        step("click_element_by_index", lambda c: {"index": index_of(c, r"type=checkbox")}),
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Create account")}),
        step("done", {"text": "Signed up", "success": True}),
    ]
    result, events, model = await run(browser, script, start_url=servers.url("agent_form.html"))
    assert result.status == "completed" and result.success and result.text == "Signed up", (
        result.error,
        [s.result for s in result.steps],
    )
    assert [s.action for s in result.steps] == [
        "input_text",
        "select_dropdown_option",
        "click_element_by_index",
        "click_element_by_index",
        "done",
    ]
    assert "its value is now 'Ada'" in result.steps[0].result
    assert "Pro" in result.steps[1].result
    assert browser.page.url.split("/")[-1].startswith("agent_thanks.html"), (
        browser.page.url,
        [s.result for s in result.steps],
    )
    assert await browser.page.inner_text("#msg") == "Thanks Ada, plan Pro, terms yes"
    # the history shows the model its earlier action and result
    last_state = state(model.requests[-1][0])
    assert "<step_1>\nEvaluation of Previous Step: Start\nMemory: name Ada\nNext Goal: type the name\n" in last_state
    assert 'Action: input_text {"index": ' in last_state
    assert "<sys>The page changed (new URL).</sys>" in last_state
    assert "Current page: [Welcome](" in last_state and "agent_thanks.html" in last_state
    # every request forces AgentOutput with parallel calls off; the transcript is not resent
    for ctx, options in model.requests:
        assert options.tool_choice == MACRO_NAME and options.parallel_tool_calls is False
        assert [t.name for t in ctx.tools] == [MACRO_NAME]
        assert len(ctx.messages) == 1
    assert result.steps[0].request is not None and result.steps[0].request.state == state(model.requests[0][0])
    assert sum(isinstance(e, ScreenshotTaken) for e in events) == 5
    assert [e.step for e in events if isinstance(e, StepStarted)] == [1, 2, 3, 4, 5]


async def test_multi_step_navigation(browser: BrowserSession, servers: Servers) -> None:
    script = [
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Account settings")}),
        step("go_back", {}),
        step("go_to_url", {"url": servers.url("agent_danger.html")}),
        step("done", {"text": "visited", "success": True}),
    ]
    result, _, model = await run(browser, script, start_url=servers.url("agent_form.html"))
    assert result.status == "completed"
    urls = [s.url.rsplit("/", 1)[-1] for s in result.steps]
    assert urls == ["agent_form.html", "agent_danger.html", "agent_form.html", "agent_danger.html"]
    assert state(model.requests[1][0]).count("The page changed (new URL).") == 1


async def test_ask_user_is_answered_by_the_callback(browser: BrowserSession, servers: Servers) -> None:
    asked: list[str] = []

    async def on_ask_user(question: str, signal: AbortSignal) -> str:
        asked.append(question)
        return "Grace"

    script = [
        step("ask_user", {"question": "What name should I use?"}),
        step("done", {"text": "ok", "success": True}),
    ]
    result, _, model = await run(browser, script, start_url=servers.url("agent_form.html"), on_ask_user=on_ask_user)
    assert asked == ["What name should I use?"]
    assert result.steps[0].result == "User answered: Grace"
    names = _action_names(model)
    assert "ask_user" in names
    # without the callback the action does not exist
    _, _, model2 = await run(
        browser, [step("done", {"text": "x", "success": True})], start_url=servers.url("agent_form.html")
    )
    assert "ask_user" not in _action_names(model2)


def _action_names(model: ScriptedModel, request: int = 0) -> list[str]:
    spec = model.requests[request][0].tools[0]
    return [next(iter(m["properties"])) for m in spec.parameters["properties"]["action"]["anyOf"]]


class NoteArgs(BaseModel):
    text: str


class SaveNote(Tool):
    name = "save_note"
    description = "Save a note for the user."
    parameters = NoteArgs

    def __init__(self) -> None:
        self.notes: list[str] = []

    async def execute(self, args: Any, ctx: ToolCallContext) -> str:
        await ctx.on_update("saving")  # type: ignore[misc]
        self.notes.append(args.text)
        return f"Saved note {len(self.notes)}"


class QuietWait(Tool):
    name = "wait"
    description = "Custom wait that returns at once."
    parameters = {"type": "object", "properties": {"seconds": {"type": "number"}}}

    async def execute(self, args: Any, ctx: ToolCallContext) -> str:
        return "custom wait ran"


async def test_custom_tools_add_override_and_remove(browser: BrowserSession, servers: Servers) -> None:
    note = SaveNote()
    script = [
        step("save_note", {"text": "remember me"}),
        step("wait", {"seconds": 5}),
        step("done", {"text": "ok", "success": True}),
    ]
    result, events, model = await run(
        browser,
        script,
        start_url=servers.url("agent_form.html"),
        custom_tools={"save_note": note, "wait": QuietWait(), "scroll_horizontally": None},
    )
    assert note.notes == ["remember me"]
    assert result.steps[0].result == "Saved note 1"
    assert result.steps[1].result == "custom wait ran"
    names = _action_names(model)
    assert names[:2] == ["done", "wait"]  # the override keeps the built-in's place
    assert names[-1] == "save_note"  # a new tool is appended
    assert "scroll_horizontally" not in names
    assert any(e.type == "action_progress" and e.progress == "saving" for e in events)


async def test_execute_javascript_only_when_enabled(browser: BrowserSession, servers: Servers) -> None:
    _, _, model = await run(
        browser, [step("done", {"text": "x", "success": True})], start_url=servers.url("agent_form.html")
    )
    assert "execute_javascript" not in _action_names(model)
    script = [
        step("execute_javascript", {"script": "return document.title"}),
        step("done", {"text": "x", "success": True}),
    ]
    result, _, model = await run(browser, script, start_url=servers.url("agent_form.html"), enable_javascript=True)
    assert "execute_javascript" in _action_names(model)
    assert "Sign up" in result.steps[0].result


async def test_blocked_action_the_model_sees_the_reason_and_continues(
    browser: BrowserSession, servers: Servers
) -> None:
    requests: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> ApprovalAnswer:
        requests.append(request)
        return ApprovalAnswer(False, "not my account")

    script = [
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Delete account")}),
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Save settings")}),
        step("done", {"text": "saved instead", "success": True}),
    ]
    result, events, model = await run(
        browser, script, start_url=servers.url("agent_danger.html"), approval="ask-risky", approver=approver
    )
    assert [r.action for r in requests] == ["click_element_by_index"]
    assert requests[0].element is not None and requests[0].element["text"] == "Delete account"
    assert "delete" in requests[0].reason
    assert result.steps[0].is_error and result.steps[0].result == "The user denied this action: not my account"
    assert result.steps[0].approval == {
        "decision": "denied",
        "reason": "not my account",
        "by": "user",
        "risk": requests[0].reason,
    }
    assert await browser.page.inner_text("#state") == "Saved"  # the delete never ran; the save did
    assert "Action Results: The user denied this action: not my account" in state(model.requests[1][0])
    kinds = [e.type for e in events if isinstance(e, (ApprovalRequested, ApprovalAnswered))]
    assert kinds == ["approval_requested", "approval_answered"]
    assert result.status == "completed"


async def test_deny_risky_and_no_approver(browser: BrowserSession, servers: Servers) -> None:
    script = [
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Delete account")}),
        step("done", {"text": "x", "success": False}),
    ]
    result, _, _ = await run(browser, script, start_url=servers.url("agent_danger.html"), approval="deny-risky")
    assert result.steps[0].result.startswith("Blocked by the approval policy: acts on")
    result, _, _ = await run(browser, list(script), start_url=servers.url("agent_danger.html"), approval="ask-risky")
    assert result.steps[0].result.startswith("Denied: no one was there to approve it")
    assert await browser.page.inner_text("#state") == "Account active"


MALFORMED: list[tuple[str, Any, str | None]] = [
    ("no tool call", "I think I should click the button.", "No AgentOutput call in your output"),
    ("json in text", '{"action": {"wait": {"seconds": 1}}}', None),
    ("action called directly", call("wait", seconds=1), None),
    ("double-encoded", call(MACRO_NAME, action=json.dumps({"wait": {"seconds": 1}})), None),
    ("list of actions", call(MACRO_NAME, action=[{"wait": {"seconds": 1}}]), None),
    ("unknown action", call(MACRO_NAME, action={"teleport": {}}), 'Unknown action "teleport"'),
    ("bad arguments", call(MACRO_NAME, action={"wait": {"seconds": "soon"}}), 'Validation failed for tool "wait"'),
    ("malformed json arguments", call(MACRO_NAME, '{"action": {"wait": '), "malformed"),
]


@pytest.mark.parametrize(("case", "output", "error"), MALFORMED, ids=[m[0] for m in MALFORMED])
async def test_malformed_output(
    browser: BrowserSession, servers: Servers, case: str, output: Any, error: str | None
) -> None:
    await browser.page.goto(servers.url("agent_form.html"))
    result, _, model = await run(browser, [output, step("done", {"text": "recovered", "success": True})])
    first = result.steps[0]
    if error is None:  # repaired
        assert first.action == "wait" and not first.is_error, first
        assert result.status == "completed" and len(result.steps) == 2
        return
    problem = first.output_error or first.result
    assert error in problem, problem
    # the next request tells the model what was wrong, and the run recovers
    assert error in state(model.requests[1][0])
    assert result.status == "completed" and result.text == "recovered"


async def test_max_steps_means_n_model_calls(browser: BrowserSession, servers: Servers) -> None:
    waits = [step("scroll", {"down": True, "num_pages": 0.1}) for _ in range(10)]
    result, _, model = await run(browser, waits, start_url=servers.url("agent_form.html"), max_steps=3)
    assert result.status == "max_steps" and len(model.requests) == 3 and not result.success
    assert "max_steps" in (result.error or "")
    # the last step offers the same tools (the cached prompt stays valid) and asks for done
    assert _action_names(model, 2) == _action_names(model, 0) and "This is the last step" in state(model.requests[2][0])


async def test_max_failures_ends_the_run(browser: BrowserSession, servers: Servers) -> None:
    script = ["no idea", "still none", "nope", step("done", {"text": "late", "success": True})]
    result, _, model = await run(browser, script, start_url=servers.url("agent_form.html"), max_failures=3)
    assert result.status == "failed" and len(model.requests) == 3
    assert "3 unusable outputs in a row" in (result.error or "")


class Slow(Tool):
    name = "slow_export"
    description = "A long export that reports progress."
    parameters = {"type": "object", "properties": {}}

    async def execute(self, args: Any, ctx: ToolCallContext) -> str:
        for i in range(100):
            await ctx.on_update(f"{i}%")  # type: ignore[misc]
            await ctx.signal.sleep(0.05)
        return "exported"


async def test_abort_in_the_middle_of_an_action(browser: BrowserSession, servers: Servers) -> None:
    agent = PageAgent(
        model=ScriptedModel([step("slow_export"), step("done", {"text": "x", "success": True})]),
        browser=browser,
        start_url=servers.url("agent_form.html"),
        custom_tools={"slow_export": Slow()},
    )
    progress = 0
    result = None
    async for event in agent.stream("export"):
        if event.type == "action_progress":
            progress += 1
            if progress == 3:
                agent.stop("user pressed Stop")
        if isinstance(event, RunFinished):
            result = event.result
    assert result is not None and result.status == "stopped" and result.error == "user pressed Stop"
    assert result.steps[0].is_error and progress < 10


async def test_replay_reproduces_a_run(browser: BrowserSession, servers: Servers) -> None:
    script = [
        step("input_text", lambda c: {"index": index_of(c, r"name=name"), "text": "Lin"}),
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Create account")}),
        step("done", {"text": "done", "success": True}),
    ]
    first, _, _ = await run(browser, script, start_url=servers.url("agent_form.html"))
    again, _, _ = await run_model(browser, replay_model(first), servers.url("agent_form.html"))
    assert [(s.action, s.args) for s in again.steps] == [(s.action, s.args) for s in first.steps]
    assert [s.result for s in again.steps] == [s.result for s in first.steps]


async def run_model(browser: BrowserSession, model: Any, url: str) -> Any:
    agent = PageAgent(model=model, browser=browser, start_url=url)
    result = await agent.run("do it")
    return result, None, model


def test_run_sync_outside_and_inside_a_loop(servers: Servers) -> None:
    agent = PageAgent(
        model=ScriptedModel([step("done", {"text": "sync ok", "success": True})]),
        start_url=servers.url("agent_form.html"),
    )
    result = agent.run_sync("finish")  # no loop running: it starts its own, and its own browser
    assert result.status == "completed" and result.text == "sync ok"


async def test_run_sync_inside_a_loop_says_what_to_do() -> None:
    agent = PageAgent(model=ScriptedModel([]))
    with pytest.raises(RuntimeError, match=r"await agent\.run"):
        agent.run_sync("x")


async def test_vision_sends_a_screenshot_with_the_state(browser: BrowserSession, servers: Servers) -> None:
    from notebook_agent.core.messages import ImageContent

    _, _, model = await run(
        browser, [step("done", {"text": "x", "success": True})], start_url=servers.url("agent_form.html"), vision=True
    )
    message = model.requests[0][0].messages[-1]
    assert isinstance(message, UserMessage) and isinstance(message.content, list)
    images = [p for p in message.content if isinstance(p, ImageContent)]
    assert len(images) == 1 and images[0].mime_type == "image/jpeg" and len(images[0].data) > 1000
    _, _, plain = await run(
        browser, [step("done", {"text": "x", "success": True})], start_url=servers.url("agent_form.html")
    )
    assert isinstance(plain.requests[0][0].messages[-1].content, str)  # no image unless asked


async def test_one_screenshot_serves_the_view_and_the_model(browser: BrowserSession, servers: Servers) -> None:
    """With vision, the model's picture for step N+1 is the view's screenshot after step N (one capture, not
    two); it is taken before step N+1's action, so it shows the page the model read."""
    from notebook_agent.core.messages import ImageContent

    script = [
        step("click_element_by_index", lambda c: {"index": index_of(c, r"type=checkbox")}),
        step("input_text", lambda c: {"index": index_of(c, r"name=name"), "text": "Ada"}),
        step("done", {"text": "x", "success": True}),
    ]
    result, events, model = await run(browser, script, start_url=servers.url("agent_form.html"), vision=True)
    assert result.status == "completed"
    shots = [e for e in events if isinstance(e, ScreenshotTaken)]
    assert [e.step.index for e in shots] == [1, 2, 3]
    for k in (1, 2):  # the requests of steps 2 and 3
        content = model.requests[k][0].messages[-1].content
        image = next(p for p in content if isinstance(p, ImageContent))
        assert base64.b64decode(image.data) == shots[k - 1].data
    assert shots[0].data != shots[1].data  # taken between the actions: the name field differs


class Meet(Tool):
    """Both runs wait here until the other has arrived (after each navigated its own way)."""

    name = "meet"
    description = "Wait for the other run."
    parameters = {"type": "object", "properties": {}}

    def __init__(self, barrier: Any) -> None:
        self.barrier = barrier

    async def execute(self, args: Any, ctx: ToolCallContext) -> str:
        await ctx.signal.race(self.barrier.wait())
        return "met"


async def test_own_tab_runs_share_a_browser_without_sharing_a_page(browser: BrowserSession, servers: Servers) -> None:
    import asyncio

    barrier = asyncio.Barrier(2)

    def agent_for(page: str) -> PageAgent:
        script = [
            step("go_to_url", {"url": servers.url(page)}),
            step("meet"),
            step("done", {"text": page, "success": True}),
        ]
        meet = {"meet": Meet(barrier)}
        return PageAgent(model=ScriptedModel(script), browser=browser, own_tab=True, custom_tools=meet)

    await browser.page.goto(servers.url("tabs.html"))
    # a tab an earlier test left reloading forever may not have closed yet: compare with what is there now
    before = [(t.id, t.url) for t in await browser.tab_infos()]  # the runs' own tabs must not outlive them
    a, b = agent_for("nav.html"), agent_for("form.html")
    ra, rb = await asyncio.gather(a.run("a"), b.run("b"))
    # after both had navigated, each still saw its own page, and the session's own tab was never touched
    assert [s.url for s in ra.steps] == ["about:blank", servers.url("nav.html"), servers.url("nav.html")], ra.steps
    assert [s.url for s in rb.steps] == ["about:blank", servers.url("form.html"), servers.url("form.html")], rb.steps
    tabs = [(t.id, t.url) for t in await browser.tab_infos()]
    assert browser.page.url == servers.url("tabs.html") and set(tabs) <= set(before), (browser.page.url, tabs, before)


async def test_builtin_actions_report_progress_while_they_take_time(browser: BrowserSession, servers: Servers) -> None:
    script = [
        step("go_to_url", {"url": servers.url("agent_form.html")}),
        step("input_text", lambda c: {"index": index_of(c, r"name=name"), "text": "Ada"}),
        step("scroll", {"down": True}),
        step("wait", {"seconds": 2}),
        step("done", {"text": "ok", "success": True}),
    ]
    result, events, _ = await run(browser, script)
    assert result.status == "completed"
    progress = [(e.action, e.progress) for e in events if e.type == "action_progress"]
    assert progress[0] == ("go_to_url", f"loading {servers.url('agent_form.html')}")
    assert progress[1][0] == "input_text" and progress[1][1].startswith("typing 'Ada' into ")
    assert ("input_text", "typed; waiting for the page to react") in progress
    assert ("scroll", "scrolling down") in progress
    waits = [p for a, p in progress if a == "wait"]
    assert waits and waits[0].startswith("waiting: ") and waits[-1].endswith("of 2 s")


async def test_a_third_identical_action_on_an_unchanged_page_does_not_run(browser: BrowserSession) -> None:
    # A click that changes nothing visible (it only counts): the third identical click is refused, not run,
    # and the model is told why; a different action afterwards runs.
    await browser.page.set_content("<button onclick='window.clicks = (window.clicks || 0) + 1'>Nothing</button>")
    nothing = step("click_element_by_index", lambda c: {"index": index_of(c, r"Nothing")})
    script = [
        nothing,
        nothing,
        nothing,
        step("wait", {"seconds": 1}),
        step("done", {"text": "gave up", "success": True}),
    ]
    result, _, _ = await run(browser, script)
    assert [s.action for s in result.steps] == ["click_element_by_index"] * 3 + ["wait", "done"]
    third = result.steps[2]
    assert third.is_error and third.result.startswith("Not done: click_element_by_index on 'Nothing' is what you")
    assert await browser.page.evaluate("window.clicks") == 2
    assert not result.steps[3].is_error

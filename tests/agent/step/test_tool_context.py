"""Tools get one context object: in a page-agent run, a custom tool reads the run's browser, its tab, the
secrets and settings from ``ctx``, sees Stop through ``ctx.signal`` and reports progress through ``ctx``.
Wrapping a tool (secrets) keeps everything it declared; ``execute_javascript`` gets a page-side abort signal
and waits for a navigation it started. Real Chromium, local pages, the real loop, a scripted model."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from playwright.async_api import Error as PlaywrightError

from notebook_agent.agent import ActionProgress, PageAgent, RunFinished
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.agent.safety.approval import ApprovalRequest
from notebook_agent.agent.step.tool_context import ToolContext
from notebook_agent.browser import BrowserSession
from notebook_agent.core.tools import Tool, ToolCallContext, ToolResult, tool
from notebook_agent.llm.scripted import ScriptedModel
from tests.browser.conftest import Servers

NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}


async def run_agent(agent: PageAgent, task: str = "do it") -> tuple[Any, list[Any]]:
    events = [e async for e in agent.stream(task)]
    result = next(e for e in events if isinstance(e, RunFinished)).result
    return result, events


# -- what a custom tool reads from its context ----------------------------------------------------------------
@pytest.mark.parametrize("own_tab", [False, True])
async def test_a_custom_tool_reads_the_browser_tab_settings_and_secrets_from_its_context(
    browser: BrowserSession, servers: Servers, own_tab: bool
) -> None:
    seen: dict[str, Any] = {}

    @tool(parameters=NO_ARGS, risk="safe")
    async def inspect_context(args: Any, ctx: ToolCallContext) -> str:
        """Read what the run gives a tool."""
        assert isinstance(ctx, ToolContext)
        b = ctx.browser
        seen.update(
            browser=b,
            url=b.page.url,
            title=await b.call(lambda: b.page.title()),
            tab=ctx.tab,
            tab_of_page=b.tab_id(b.page),
            settings=ctx.settings,
            secrets=ctx.secrets.names,
            aborted=ctx.signal.aborted,
            call_id=ctx.tool_call_id,
        )
        return f"tab {ctx.tab}"

    agent = PageAgent(
        model=ScriptedModel(
            [agent_output("inspect_context", {}), agent_output("done", {"text": "ok", "success": True})]
        ),
        browser=browser,
        own_tab=own_tab,
        start_url=servers.url("nav.html"),
        max_steps=7,
        custom_tools={"inspect_context": inspect_context},
        secrets={servers.main: {"site_password": "not-shown-1"}},
    )
    result, _ = await run_agent(agent)
    assert result.status == "completed", result.error
    assert seen["url"] == servers.url("nav.html") and seen["title"] == "Navigation"
    assert seen["tab"] == seen["tab_of_page"] and seen["tab"] >= 0
    assert result.steps[0].result == f"tab {seen['tab']}"
    assert seen["settings"] == agent.settings() and seen["settings"]["max_steps"] == 7
    assert seen["secrets"] == ["site_password"]
    assert seen["aborted"] is False and seen["call_id"]
    if own_tab:  # the run's own tab session, not the session it was given
        assert seen["browser"] is not browser
    else:
        assert seen["browser"] is browser and seen["tab"] == browser.tab_id(browser.page)


class LongJob(Tool):
    """Reports progress, then works until the run is stopped; says what it saw."""

    name = "long_job"
    description = "A long job."
    parameters = NO_ARGS
    risk = "safe"

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.saw_stop: list[str | None] = []

    async def execute(self, args: Any, ctx: ToolCallContext) -> str:
        await ctx.progress("halfway")
        self.started.set()
        reason = await ctx.signal.wait()
        self.saw_stop.append(reason)
        return "stopped cleanly"


async def test_stop_during_a_custom_tool_reaches_it_through_its_context_and_its_progress_reaches_the_step(
    browser: BrowserSession, servers: Servers
) -> None:
    job = LongJob()
    agent = PageAgent(
        model=ScriptedModel([agent_output("long_job", {}), agent_output("done", {"text": "never", "success": True})]),
        browser=browser,
        start_url=servers.url("nav.html"),
        custom_tools={"long_job": job},
    )
    events: list[Any] = []
    async for event in agent.stream("work"):
        events.append(event)
        if isinstance(event, ActionProgress):
            await job.started.wait()
            agent.stop("user pressed Stop")
    result = next(e for e in events if isinstance(e, RunFinished)).result
    assert result.status == "stopped" and result.error == "user pressed Stop"
    assert job.saw_stop == ["user pressed Stop"]
    progress = [e for e in events if isinstance(e, ActionProgress)]
    assert [(e.action, e.progress) for e in progress] == [("long_job", "halfway")]
    assert progress[0].step is result.steps[0] and result.steps[0].action == "long_job"


# -- wrapping keeps what a tool declared ------------------------------------------------------------------------
PASSWORD = "hunter2-ctx-9"


class SchemaInput(Tool):
    """A custom ``input_text`` with JSON-Schema parameters (arguments arrive as a dict) that asks first."""

    name = "input_text"
    description = "Type text into the password field."
    parameters = {
        "type": "object",
        "properties": {"index": {"type": "integer"}, "text": {"type": "string"}},
        "required": ["index", "text"],
    }
    risk = "ask"

    def __init__(self) -> None:
        self.received: list[str] = []

    async def execute(self, args: Any, ctx: ToolCallContext) -> ToolResult:
        assert isinstance(ctx, ToolContext) and isinstance(args, dict)
        text = args["text"]
        self.received.append(text)
        page = ctx.browser.page
        await ctx.browser.call(lambda: page.fill("input[name=password]", text))
        return ToolResult.text(f"Typed {text} into the password field.")


async def test_a_custom_schema_input_text_gets_the_secret_value_and_keeps_its_risk(
    browser: BrowserSession, servers: Servers
) -> None:
    custom = SchemaInput()
    asked: list[tuple[str, bool, str | None]] = []

    def policy(request: ApprovalRequest) -> Any:
        asked.append((request.action, request.custom, request.custom_risk))
        return "allow"

    agent = PageAgent(
        model=ScriptedModel(
            [
                agent_output("input_text", {"index": 1, "text": "<secret>site_password</secret>"}),
                agent_output("done", {"text": "typed", "success": True}),
            ]
        ),
        browser=browser,
        start_url=servers.url("login.html"),
        custom_tools={"input_text": custom},
        secrets={servers.main: {"site_password": PASSWORD}},
        approval=policy,
    )
    result, _ = await run_agent(agent)
    assert result.status == "completed", result.error
    assert custom.received == [PASSWORD]  # the value, never the placeholder
    assert await browser.page.input_value("input[name=password]") == PASSWORD
    assert result.steps[0].result == "Typed <secret>site_password</secret> into the password field."
    assert ("input_text", True, "the custom action 'input_text' asks before it runs") in asked
    tools = agent.tools(browser)
    assert tools["input_text"].risk == "ask" and tools["input_text"].json_schema() == SchemaInput.parameters


# -- execute_javascript --------------------------------------------------------------------------------------
COUNTER = "let n = 0; setInterval(() => { if (signal.aborted) return; document.body.dataset.n = ++n; }, 30);"


async def counter(browser: BrowserSession) -> int:
    try:
        return int(await browser.page.evaluate("() => Number(document.body && document.body.dataset.n || 0)"))
    except PlaywrightError:  # the run is still opening its start page
        return 0


async def stop_when_counting(agent: PageAgent, browser: BrowserSession, before: asyncio.Event | None = None) -> None:
    while await counter(browser) < 3:
        await asyncio.sleep(0.03)
    if before is not None:
        await before.wait()
    agent.stop("user pressed Stop")


async def assert_stays_still(browser: BrowserSession) -> None:
    first = await counter(browser)
    await asyncio.sleep(0.4)
    assert first >= 3 and await counter(browser) == first  # the page stopped changing after Stop


async def test_stop_during_execute_javascript_aborts_the_script_in_the_page(
    browser: BrowserSession, servers: Servers
) -> None:
    script = COUNTER + " await new Promise(() => {}); return 'never';"
    agent = PageAgent(
        model=ScriptedModel(
            [
                agent_output("execute_javascript", {"script": script}),
                agent_output("done", {"text": "x", "success": True}),
            ]
        ),
        browser=browser,
        start_url=servers.url("nav.html"),
        enable_javascript=True,
    )
    stopper = asyncio.ensure_future(stop_when_counting(agent, browser))
    result, _ = await run_agent(agent)
    await stopper
    assert result.status == "stopped" and result.steps[0].action == "execute_javascript"
    await assert_stays_still(browser)


async def test_stop_after_execute_javascript_returned_aborts_what_it_left_running(
    browser: BrowserSession, servers: Servers
) -> None:
    job = LongJob()
    agent = PageAgent(
        model=ScriptedModel(
            [
                agent_output("execute_javascript", {"script": COUNTER + " return 'counting';"}),
                agent_output("long_job", {}),
                agent_output("done", {"text": "x", "success": True}),
            ]
        ),
        browser=browser,
        start_url=servers.url("nav.html"),
        enable_javascript=True,
        custom_tools={"long_job": job},
    )
    stopper = asyncio.ensure_future(stop_when_counting(agent, browser, job.started))
    result, _ = await run_agent(agent)
    await stopper
    assert result.status == "stopped" and result.steps[0].result == 'Executed JavaScript. Result: "counting"'
    await assert_stays_still(browser)


async def test_execute_javascript_that_navigates_is_reported_like_a_click(
    browser: BrowserSession, servers: Servers
) -> None:
    second = servers.url("nav2.html")
    scripts = [
        "location.href = 'nav2.html'",
        "setTimeout(() => { location.href = 'nav2.html'; }, 5); return 1",  # a moment after it returned
        "location.href = 'nav2.html'; await new Promise(r => setTimeout(r, 5000)); return 1",  # still awaiting
    ]
    steps = []
    for s in scripts:
        steps += [
            agent_output("go_to_url", {"url": servers.url("nav.html")}),
            agent_output("execute_javascript", {"script": s}),
        ]
    agent = PageAgent(
        model=ScriptedModel([*steps, agent_output("done", {"text": "ok", "success": True})]),
        browser=browser,
        enable_javascript=True,
        max_steps=len(steps) + 1,
    )
    result, _ = await run_agent(agent)
    assert result.status == "completed", result.error
    js = [s for s in result.steps if s.action == "execute_javascript"]
    assert js[0].result.endswith(f"The page navigated to {second}.")
    assert js[1].result == f"Executed JavaScript. Result: 1 The page navigated to {second}."
    assert js[2].result == (
        "Executed JavaScript. Result: none (the page navigated away before the script finished) "
        f"The page navigated to {second}."
    )
    after = [result.steps[i + 1] for i, s in enumerate(result.steps) if s.action == "execute_javascript"]
    assert all(s.url == second for s in after)  # the next state read the new page

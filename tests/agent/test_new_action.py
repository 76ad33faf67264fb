"""A new action is first-class from its own class: a built-in is its class and one line in the registry
(``browser.actions.BUILTINS``), a custom tool is its class given as ``custom_tools``; either way the gate judges it
by its declared risk, the prompt offers it in its place and words, a run records its element, a replay finds that
element again, and the Playwright export writes its statements, with no other edit anywhere.

The action here exists only in this file: ``double_click``, which no part of the package names."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from notebook_agent.agent import PageAgent, to_playwright, write_script
from notebook_agent.agent.prompt.profiles import PROFILES
from notebook_agent.agent.safety.approval import ApprovalRequest
from notebook_agent.browser import BrowserSession
from notebook_agent.browser import actions as registry
from notebook_agent.browser.actions import BrowserTool
from notebook_agent.browser.actions.params import IndexParams
from notebook_agent.core.abort import AbortSignal
from notebook_agent.core.action_facts import ActionFacts
from notebook_agent.llm.scripted import ScriptedModel
from tests.agent.runs.test_export import no_notebook_agent, run_script_async  # noqa: F401
from tests.agent.test_page_agent import index_of, step
from tests.browser.conftest import MADE, Servers

PAGE = """<!doctype html><title>Doors</title>
<button id="open" ondblclick="document.getElementById('said').textContent = 'Opened twice'">Open the door</button>
<p id="said">Closed</p>"""


class DoubleClickTool(BrowserTool):
    """Double-click an element: one class, its facts declared on it."""

    name = "double_click"
    description = "Double-click the element."
    parameters = IndexParams
    failure = "Failed to double-click"
    risk = "element"
    facts = ActionFacts(
        on_element=True,
        order=20,
        small="Double-click element [index].",
        script=lambda c: [f"{c.aw}{c.target}.dblclick()"],
    )

    async def run(self, args: IndexParams, signal: AbortSignal) -> str:
        el, info, _, _ = await signal.race(self.browser.resolve(args.index))
        await signal.race(el.dblclick(timeout=self.timeout_ms))
        return f"Double-clicked {info.describe()}."


def script() -> list[Any]:
    return [
        step("double_click", lambda c: {"index": index_of(c, r"Open the door")}),
        step("done", {"text": "the door is open", "success": True}),
    ]


async def said(browser: BrowserSession) -> str:
    return str(await browser.call(lambda: browser.page.inner_text("#said")))


async def check_it_runs_replays_and_exports(
    browser: BrowserSession, servers: Servers, tmp_path: Path, blocker: Path, custom: dict[str, Any]
) -> None:
    MADE["doors.html"] = PAGE
    seen: list[ApprovalRequest] = []

    def policy(request: ApprovalRequest) -> Any:
        seen.append(request)
        return "allow"

    start = servers.url("made/doors.html")
    agent = PageAgent(
        model=ScriptedModel(script()), browser=browser, start_url=start, approval=policy, custom_tools=custom
    )
    recorded = await agent.run("Open the door")
    assert recorded.success, [s.result for s in recorded.steps]
    assert await said(browser) == "Opened twice"
    first = recorded.steps[0]
    assert first.action == "double_click" and first.target and first.target.get("name") == "Open the door"
    assert [r.risk for r in seen if r.action == "double_click"] == ["element"]  # the gate read its declared risk
    assert "double_click" in agent.tools(browser)  # offered in its place

    await browser.call(lambda: browser.page.goto(start))
    replayed = await agent.replay(recorded)
    assert replayed.success and [s.replay for s in replayed.steps] == ["replayed", "replayed"]
    assert await said(browser) == "Opened twice"  # found again by its fingerprint, and acted on

    source = to_playwright(recorded, tools=agent.custom_tools)
    assert "target.dblclick()" in source and "raise NotImplementedError" not in source
    out = await run_script_async(write_script(source, tmp_path / "doors.py"), blocker=blocker)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "the door is open\n"


async def test_a_built_in_action_is_its_class_and_one_registry_line(
    browser: BrowserSession,
    servers: Servers,
    tmp_path: Path,
    no_notebook_agent: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(registry, "BUILTINS", (*registry.BUILTINS, DoubleClickTool))  # the one registry line
    assert "double_click" in (PROFILES["small"].actions or ())  # in the small profile by its own words
    await check_it_runs_replays_and_exports(browser, servers, tmp_path, no_notebook_agent, custom={})


async def test_a_custom_tool_that_declares_the_same_facts_replays_and_exports_like_a_built_in(
    browser: BrowserSession,
    servers: Servers,
    tmp_path: Path,
    no_notebook_agent: Path,  # noqa: F811
) -> None:
    assert "double_click" not in registry.builtin_names()
    tool = DoubleClickTool(browser)
    await check_it_runs_replays_and_exports(
        browser, servers, tmp_path, no_notebook_agent, custom={"double_click": tool}
    )


def test_without_its_facts_a_custom_tool_is_written_as_a_step_to_do_by_hand() -> None:
    """A custom tool that declares no script cannot be guessed: the export says so at that step."""
    from notebook_agent.agent.runs.result import PageAgentResult, PageStep
    from notebook_agent.core.messages import Usage

    run = PageAgentResult(
        task="t",
        status="completed",
        success=True,
        text="ok",
        steps=[PageStep(index=1, action="lookup", args={"q": "x"}, url="http://a.test/", result="ok")],
        usage=Usage(),
        model="m",
        duration_s=0.0,
        prompt_version="",
    )
    source = to_playwright(run)
    assert re.search(r"raise NotImplementedError\(.*'lookup'.*cannot do by itself", source)

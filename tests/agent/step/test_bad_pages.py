"""A bad page never poisons the next run on the same browser (issue 20, item 3): a ``history.pushState``
storm, a page reloading itself forever, a 401 start page. Run A ends on such a page; run B, on the same
BrowserSession, opens a normal page and must complete. Timeouts say what timed out, after how long, and what to
try. The bounds below are hang guards (a minute), not speed limits: what is checked is that each run completes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from notebook_agent.agent import PageAgent, PageAgentResult
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.browser import BrowserSession
from notebook_agent.browser.page import reader as reader_module
from notebook_agent.llm.scripted import ScriptedModel
from tests.browser.conftest import Servers


async def run(browser: BrowserSession, url: str, *steps: dict[str, Any]) -> PageAgentResult:
    script = [agent_output(s["action"], s["args"]) for s in steps]
    script.append(agent_output("done", {"text": "ok", "success": True}))
    agent = PageAgent(model=ScriptedModel(script), browser=browser, start_url=url, max_steps=len(script))
    return await agent.run("look at the page")


@pytest.mark.parametrize("bad", ["storm.html", "refresh_loop.html", "status?code=401"])
async def test_a_run_ending_on_a_bad_page_leaves_the_session_clean_for_the_next(
    browser: BrowserSession, servers: Servers, bad: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader_module, "MAIN_FRAME_TIMEOUT", 3.0)  # a page that cannot be read fails sooner
    first = await asyncio.wait_for(run(browser, servers.url(bad), {"action": "wait", "args": {"seconds": 1}}), 60)
    if first.status == "error":  # the page could not be read: the error says what, how long and what to try
        error = first.error or ""
        assert error.startswith("Reading the page at "), error
        assert "timed out after 3 s" in error and "go_to_url" in error
    second = await asyncio.wait_for(run(browser, servers.url("form.html")), 60)
    assert second.status == "completed", second.error
    assert second.steps[0].url == servers.url("form.html")


async def test_a_pushstate_storm_is_throttled_not_a_hang(browser: BrowserSession, servers: Servers) -> None:
    """Chromium's IPC flooding protection stays on (Playwright turns it off): the storm page is read and left
    like any other page, and the browser keeps answering meanwhile."""
    result = await run(browser, servers.url("storm.html"), {"action": "wait", "args": {"seconds": 1}})
    assert result.status == "completed", result.error
    page = await asyncio.wait_for(browser.new_tab(servers.url("form.html")), 60)
    assert page.url == servers.url("form.html")


async def test_a_page_reloading_forever_does_not_stop_opening_another(
    browser: BrowserSession, servers: Servers
) -> None:
    await browser.page.goto(servers.url("refresh_loop.html"), wait_until="commit")
    old = browser.page
    page = await asyncio.wait_for(browser.open(servers.url("form.html")), 60)
    assert page.url == servers.url("form.html")
    if page is not old:  # the reload interrupted the navigation: the tab that would not let go was replaced
        assert browser.page is page  # (the old tab may never confirm it closed: it is not waited for)
        assert any("kept the tab from opening" in n for n in browser.take_notices())

"""A page that opens two hundred tabs at once: the run ends with a clear status and sentence (never an internal
error from a page read), its tabs are closed, and the next run in the same browser starts from one tab and
completes. Real Chromium, a local page, a scripted model."""

from __future__ import annotations

import time

from notebook_agent.agent import PageAgent
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.browser import BrowserSession
from notebook_agent.core.model import Context
from notebook_agent.llm.scripted import ScriptedCall, ScriptedModel
from tests.agent.test_page_agent import index_of, step
from tests.browser.conftest import Servers

_press = step("click_element_by_index", lambda c: {"index": index_of(c, r"^<button")})


def _look(ctx: Context) -> ScriptedCall:
    return agent_output("wait", {"seconds": 1})


async def test_a_popup_storm_ends_the_run_clearly_and_the_next_run_starts_clean(
    browser: BrowserSession, servers: Servers
) -> None:
    started = time.perf_counter()
    storm = PageAgent(
        model=ScriptedModel([_press, *[_look] * 6, agent_output("done", {"text": "ok", "success": True})]),
        browser=browser,
        start_url=servers.url("popups_200.html"),
        screenshots=False,
        max_steps=8,
    )
    result = await storm.run("Press the button, then look around.")
    stormy = time.perf_counter() - started
    assert result.status == "failed", (result.status, result.error)
    assert result.error is not None and result.error.startswith("The page opened more tabs than a run may hold (10")
    assert "TypeError" not in (result.error or "") and all("TypeError" not in s.result for s in result.steps)
    tabs = await browser.tab_infos()
    assert [t.url for t in tabs] == [servers.url("popups_200.html")], tabs  # its tabs closed, its own kept

    started = time.perf_counter()
    after = PageAgent(
        model=ScriptedModel([agent_output("done", {"text": "done", "success": True})]),
        browser=browser,
        start_url=servers.url("target.html"),
        screenshots=False,
    )
    result = await after.run("Finish.")
    calm = time.perf_counter() - started
    assert result.status == "completed", (result.status, result.error)
    assert [t.url for t in await browser.tab_infos()] == [servers.url("target.html")]
    print(f"the storm's run: {stormy:.1f} s; the next run: {calm:.2f} s")

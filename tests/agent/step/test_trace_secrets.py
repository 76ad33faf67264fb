"""A trace belongs to the browser session's secrets: once a secret was typed in a session, no trace of it is
recorded, however the trace is started (a follow-up with ``agent.trace = True``, another agent in another tab,
``start_trace`` itself), and a trace during which a secret arrives is discarded. Every file of every trace zip
written is searched for the value. Real Chromium on a local page."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from notebook_agent.agent import PageAgent
from notebook_agent.browser import BrowserSession
from notebook_agent.browser.session.tracing import TraceRefusedError, start_trace, stop_trace
from notebook_agent.llm.scripted import ScriptedModel
from tests.agent.test_page_agent import index_of, step
from tests.browser.conftest import Servers

TOKEN = "tok-Zq81-never-in-a-trace"


def type_the_token() -> ScriptedModel:
    return ScriptedModel(
        [
            step("input_text", lambda c: {"index": index_of(c, r"apitoken|API token"), "text": "<secret>tok</secret>"}),
            step("done", {"text": "typed", "success": True}),
        ]
    )


def finish() -> ScriptedModel:
    return ScriptedModel([step("done", {"text": "looked", "success": True})])


def leaked(folder: Path) -> list[str]:
    """Files of trace zips under ``folder`` holding the value (raw bytes, every member)."""
    found = []
    for path in folder.rglob("*.zip"):
        with zipfile.ZipFile(path) as z:
            found += [f"{path}:{name}" for name in z.namelist() if TOKEN.encode() in z.read(name)]
    return found


async def test_no_trace_of_a_session_that_held_a_secret(servers: Servers, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    async with BrowserSession() as browser:
        agent = PageAgent(
            model=type_the_token(),
            browser=browser,
            start_url=servers.url("login.html"),
            secrets={servers.main: {"tok": TOKEN}},
            runs_dir=str(runs),
        )
        first = await agent.run("type the token")
        assert first.status == "completed", first.error
        assert await browser.page.input_value("input[name=apitoken]") == TOKEN  # it is in the page now

        agent.trace, agent.model = True, finish()  # set later, for a follow-up on the same page
        later = await agent.follow_up("look again")
        assert later.status == "error" and "holds or has held a secret" in (later.error or ""), later.error
        assert later.trace_path is None

        other = PageAgent(model=finish(), browser=browser, own_tab=True, trace=True, runs_dir=str(runs))
        tab = await other.run("look")  # another agent, another tab of the same session
        assert tab.status == "error" and "a new BrowserSession" in (tab.error or ""), tab.error

        with pytest.raises(TraceRefusedError, match="not masked"):
            await start_trace(browser, "by hand")
    assert not leaked(tmp_path), leaked(tmp_path)


async def test_a_trace_a_secret_arrives_in_is_discarded(servers: Servers, tmp_path: Path) -> None:
    async with BrowserSession() as browser:
        await browser.open(servers.url("login.html"))
        trace = await start_trace(browser, "before the secret")
        agent = PageAgent(
            model=type_the_token(),
            browser=browser,
            own_tab=True,
            start_url=servers.url("login.html"),
            secrets={servers.main: {"tok": TOKEN}},
        )
        typed = await agent.run("type the token")  # in another tab of the traced context
        assert typed.status == "completed", typed.error
        path = await stop_trace(browser, trace, str(tmp_path), "traced")
        assert path is None and not (tmp_path / "traced" / "trace.zip").exists()
    assert not leaked(tmp_path), leaked(tmp_path)


async def test_a_session_without_secrets_is_still_traced(servers: Servers, tmp_path: Path) -> None:
    async with BrowserSession() as browser:
        agent = PageAgent(model=finish(), browser=browser, start_url=servers.url("login.html"), trace=True)
        result = await agent.run("look")
        assert result.status == "completed", result.error
        assert result.trace_path and Path(result.trace_path).is_file()

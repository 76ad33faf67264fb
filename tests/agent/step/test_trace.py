"""``PageAgent(trace=True)``: a Playwright trace of the run, one group per step, in the run's folder; and
``%agent trace RUN``."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from notebook_agent.agent import PageAgent, RunFinished
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.browser import BrowserSession
from notebook_agent.browser.session.tracing import TraceBusyError, start_trace, stop_trace
from notebook_agent.llm.scripted import ScriptedModel
from tests.agent.test_page_agent import index_of, step
from tests.browser.conftest import Servers


def _two_steps() -> ScriptedModel:
    return ScriptedModel(
        [
            step("click_element_by_index", lambda c: {"index": index_of(c, r"type=checkbox")}),
            lambda c: agent_output("done", {"text": "ok", "success": True}),
        ]
    )


async def _run(agent: PageAgent) -> object:
    events = [e async for e in agent.stream("tick the box")]
    return next(e for e in events if isinstance(e, RunFinished)).result


async def test_a_traced_run_writes_a_zip_with_a_group_per_step(
    servers: Servers, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a browser of its own: a trace records the whole context, and the shared one holds every earlier test's tabs
    async with BrowserSession() as browser:
        await _traced_run(browser, servers, tmp_path, capsys)


async def _traced_run(
    browser: BrowserSession, servers: Servers, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs_dir = tmp_path / "runs"
    agent = PageAgent(
        model=_two_steps(),
        browser=browser,
        start_url=servers.url("agent_form.html"),
        trace=True,
        runs_dir=str(runs_dir),
    )
    result = await _run(agent)
    assert result.status == "completed", result.error  # type: ignore[attr-defined]
    assert result.settings["trace"] is True  # type: ignore[attr-defined]
    path = Path(result.trace_path)  # type: ignore[attr-defined]
    assert path == runs_dir / result.run_id / "trace.zip"  # type: ignore[attr-defined]
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        assert "trace.trace" in names, names
        events = z.read("trace.trace").decode()
    assert '"title":"Step 1"' in events and '"title":"Step 2"' in events  # the groups, one per step

    # the browser is free to be traced again (the trace was stopped), and a busy context is refused clearly
    trace = await start_trace(browser, "someone else")
    try:
        busy = PageAgent(model=_two_steps(), browser=browser, trace=True)
        refused = await _run(busy)
        assert refused.status == "error" and "already recording a trace" in refused.error  # type: ignore[attr-defined]
        with pytest.raises(TraceBusyError):
            await start_trace(browser, "a third")
    finally:
        await stop_trace(browser, trace, str(tmp_path), "other")

    from notebook_agent.notebook.commands import Commands
    from notebook_agent.notebook.kernel_state import STATE

    old = STATE.config.runs_dir
    STATE.config.runs_dir = str(runs_dir)
    try:
        Commands(lambda *a, **k: None).trace([result.run_id])  # type: ignore[attr-defined]
        Commands(lambda *a, **k: None).trace(["nothing-like-this"])
    finally:
        STATE.config.runs_dir = old
    out = capsys.readouterr().out
    assert f"playwright show-trace {path}" in out
    assert "'nothing-like-this' has no trace" in out


async def test_tracing_works_in_threaded_mode(servers: Servers, tmp_path: Path) -> None:
    from notebook_agent.browser.session.tracing import begin_group, end_group

    async with BrowserSession(threaded=True) as browser:
        trace = await start_trace(browser, "threaded")
        await begin_group(browser, trace, "Step 1")
        await browser.open(servers.url("agent_form.html"))
        await end_group(browser, trace)
        path = await stop_trace(browser, trace, str(tmp_path), "threaded")
        assert path == str(tmp_path / "threaded" / "trace.zip")
    with zipfile.ZipFile(path) as z:
        assert '"title":"Step 1"' in z.read("trace.trace").decode()


def test_trace_is_refused_with_secrets() -> None:
    with pytest.raises(ValueError, match="trace=True cannot be used with secrets"):
        PageAgent(model=_two_steps(), trace=True, secrets={"pw": "x"}, allowed_domains=["example.com"])

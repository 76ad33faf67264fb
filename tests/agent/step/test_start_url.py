"""The start URL is opened like any navigation: without waiting for every subresource, through the tab-recovery
path, and stopped by Stop."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import AsyncIterator

from notebook_agent.agent import PageAgent
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.browser import BrowserSession
from notebook_agent.core.model import Context, StreamEvent, StreamOptions
from notebook_agent.llm.scripted import ScriptedModel
from tests.browser.conftest import Servers
from tests.waits import wait_until


def done() -> ScriptedModel:
    return ScriptedModel([agent_output("done", {"text": "ok", "success": True})])


async def test_a_hanging_subresource_does_not_hold_the_start(browser: BrowserSession, servers: Servers) -> None:
    started = time.monotonic()
    result = await PageAgent(model=done(), browser=browser, start_url=servers.url("tracker.html")).run("look")
    assert result.status == "completed" and result.steps[0].title == "Tracked"
    assert time.monotonic() - started < 30  # the 60 s pixel was not waited for


async def test_stop_while_the_start_url_loads(browser: BrowserSession, servers: Servers) -> None:
    agent = PageAgent(model=done(), browser=browser, start_url=servers.url("slow?ms=15000"))
    async with browser.context.expect_event("request", lambda r: "/slow?" in r.url):  # the start URL is loading
        task = asyncio.ensure_future(agent.run("look"))
    stopped_at = time.monotonic()
    agent.stop("Stopped by the user")
    result = await asyncio.wait_for(task, 10)
    assert result.status == "stopped" and result.error == "Stopped by the user"
    assert time.monotonic() - stopped_at < 5
    await browser.page.goto("about:blank")


async def test_a_closed_tab_is_replaced_before_the_start_url(browser: BrowserSession, servers: Servers) -> None:
    for page in list(browser.context.pages):
        # a page an earlier test left reloading forever may never confirm it closed (test_bad_pages.py)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(page.close(), 5)
    result = await PageAgent(model=done(), browser=browser, start_url=servers.url("nav.html")).run("look")
    assert result.status == "completed", result.error
    assert browser.page.url == servers.url("nav.html")


async def test_an_unreachable_start_url_says_so(browser: BrowserSession) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/"
    result = await PageAgent(model=done(), browser=browser, start_url=url).run("look")
    assert result.status == "error"
    assert result.error == f"Nothing answers at {url}: is the server running, and on that port?"


async def test_a_second_run_on_a_busy_browser_is_refused(browser: BrowserSession, servers: Servers) -> None:
    import asyncio

    gate = asyncio.Event()

    class Slow(ScriptedModel):
        async def stream(self, context: Context, options: StreamOptions) -> AsyncIterator[StreamEvent]:
            await gate.wait()
            async for event in super().stream(context, options):
                yield event

    first = PageAgent(
        model=Slow([agent_output("done", {"text": "first", "success": True})]),
        browser=browser,
        start_url=servers.url("nav.html"),
    )
    task = asyncio.ensure_future(first.run("one"))
    await wait_until(lambda: browser.owner is not None, 10, "the first run drives the browser")
    second = await PageAgent(model=done(), browser=browser, start_url=servers.url("order.html")).run("two")
    assert second.status == "error"
    assert (second.error or "").startswith("This browser is already driven by another run (")
    gate.set()
    result = await task
    assert result.status == "completed" and result.text == "first"
    assert browser.page.url == servers.url("nav.html")  # the refused run never navigated
    assert browser.owner is None

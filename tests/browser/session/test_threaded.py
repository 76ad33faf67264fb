"""The browser on a thread of its own, when the caller's event loop cannot start subprocesses (Windows' selector
loop, imitated on Linux by :mod:`tests.refusing_loop`).

Each test runs its own loop made by the refusing policy's loop class; the first test proves that loop really
refuses (Playwright cannot start on it in the in-loop mode), so the others would fail without the thread.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from notebook_agent.agent import ActionProgress, PageAgent, RunFinished
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.agent.prompt.offers import Calls
from notebook_agent.agent.safety.approval import ApprovalAnswer, ApprovalRequest
from notebook_agent.agent.safety.effects import describe_effects
from notebook_agent.browser import BrowserSession
from notebook_agent.browser.session.browser_thread import loop_can_spawn
from notebook_agent.browser.session.launch import start_playwright
from notebook_agent.core.abort import AbortController
from notebook_agent.core.tools import Tool, ToolCallContext
from notebook_agent.demo import DELETE_TASK, DEMO_TASK, demo_model, demo_url
from notebook_agent.llm.scripted import ScriptedModel
from notebook_agent.testing import assume_loop_can_spawn, browser_thread
from tests.refusing_loop import RefusingEventLoop

T = TypeVar("T")


def on_refusing_loop(main: Callable[[], Awaitable[T]]) -> T:
    """Run ``main()`` on a fresh loop that refuses subprocesses, as a Windows Jupyter kernel's loop does."""
    with asyncio.Runner(loop_factory=RefusingEventLoop) as runner:
        return runner.run(main())  # type: ignore[arg-type]


def on_plain_loop(main: Callable[[], Awaitable[T]]) -> T:
    with asyncio.Runner() as runner:
        return runner.run(main())  # type: ignore[arg-type]


def test_the_refusing_loop_refuses_and_the_in_loop_mode_fails_there() -> None:
    """The control: without the thread, nothing below could work on this loop."""

    async def main() -> None:
        with pytest.raises(NotImplementedError):
            await asyncio.create_subprocess_exec(sys.executable, "-c", "")
        assert not await loop_can_spawn()
        with pytest.raises(NotImplementedError):
            pw = await start_playwright()
            await pw.stop()
        session = BrowserSession(threaded=False)
        with pytest.raises(NotImplementedError):
            await session.start()
        assert not session.is_started and not session.is_threaded

    on_refusing_loop(main)


class SpawningLoop(asyncio.SelectorEventLoop):
    """A loop class the package does not know, that can spawn: only the probe can tell."""


def test_the_probe_tells_a_spawning_loop_from_a_refusing_one() -> None:
    async def main() -> bool:
        return await loop_can_spawn()

    with asyncio.Runner(loop_factory=SpawningLoop) as runner:
        assert runner.run(main()) is True
    assert on_refusing_loop(main) is False


def test_a_loop_that_can_spawn_keeps_the_browser_in_loop() -> None:
    async def main() -> None:
        assert await loop_can_spawn()
        async with BrowserSession() as browser:
            assert not browser.is_threaded
            assert browser.bridge_tools(browser.tools) == browser.tools  # nothing wrapped, no hop per call
        async with BrowserSession(threaded=True) as forced:
            assert forced.is_threaded
            assert await forced.call(_thread_name) != threading.current_thread().name

    on_plain_loop(main)


def test_a_refusal_the_probe_missed_still_moves_the_browser_to_a_thread() -> None:
    """If the loop looked able to spawn (a wrapper that refuses only some spawns, say) but Playwright's own
    spawn is refused, the session switches to the thread instead of failing, and remembers it for the loop."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        assume_loop_can_spawn(loop)  # what the probe would have concluded
        async with BrowserSession() as browser:
            assert browser.is_threaded
            await browser.open(demo_url())
            assert "Northwind" in (await browser.snapshot()).text
        assert not await loop_can_spawn(loop)

    on_refusing_loop(main)


def test_the_session_moves_to_a_thread_and_its_methods_work_from_the_callers_loop() -> None:
    async def main() -> None:
        browser = BrowserSession()
        await browser.open(demo_url())  # an unstarted session starts on first use, on the right loop
        try:
            assert browser.is_threaded and browser.is_started
            snap = await browser.snapshot()
            assert "Northwind" in snap.text and snap.url.startswith("http://127.0.0.1")
            result = await browser.act("scroll", {"down": True})
            assert not result.is_error, result.text_content
            shot = await browser.screenshot(highlight=True)
            assert shot.startswith(b"\x89PNG")
            assert await browser.call(lambda: browser.page.title()) == "Northwind Outfitters"
            where = await browser.call(_thread_name)
            assert where != threading.current_thread().name and where.startswith("notebook-agent-browser")
            fork = await browser.fork()
            try:
                assert fork.is_threaded
                await fork.open(demo_url())
                assert "Northwind" in (await fork.snapshot()).text
            finally:
                await fork.close()
            assert (await browser.snapshot()).url == snap.url  # closing the fork left its parent alone
            thread = browser_thread(browser)
            assert thread is not None
        finally:
            await browser.close()
        assert not browser.is_threaded and not thread.alive  # the thread ends with the session
        await browser.close()  # twice is fine

    on_refusing_loop(main)


async def _thread_name() -> str:
    return threading.current_thread().name


def test_stopping_a_call_on_the_browser_thread_cancels_it_there() -> None:
    """Cancelling the caller (Stop, Interrupt) reaches the coroutine running on the browser loop."""

    async def main() -> None:
        async with BrowserSession() as browser:
            started, cancelled = threading.Event(), threading.Event()

            async def forever() -> None:
                started.set()
                try:
                    await asyncio.Event().wait()
                finally:
                    cancelled.set()

            task = asyncio.ensure_future(browser.call(forever))
            await asyncio.to_thread(started.wait)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert await asyncio.to_thread(cancelled.wait, 30)
            assert await browser.call(lambda: browser.page.evaluate("1 + 1")) == 2  # the browser still works

    on_refusing_loop(main)


def test_a_page_agent_completes_the_demo_task_with_an_approval_on_a_refusing_loop() -> None:
    """PageAgent from plain Python: the run, its approval gate and its events stay on the caller's loop while
    the actions run on the browser thread."""

    async def main() -> None:
        asked: list[ApprovalRequest] = []
        threads: set[str] = set()

        async def approver(request: ApprovalRequest) -> ApprovalAnswer:
            asked.append(request)
            threads.add(threading.current_thread().name)
            return ApprovalAnswer(True, None)

        async with BrowserSession() as browser:
            assert browser.is_threaded
            agent = PageAgent(
                model=demo_model("delete_account"),
                browser=browser,
                start_url=demo_url(),
                approval="ask-risky",
                approver=approver,
                max_steps=15,
            )
            result = await agent.run(DELETE_TASK)
            assert result.status == "completed" and result.success, (result.status, result.error)
            assert not [s.result for s in result.steps if s.is_error]  # every action worked the first time
            assert [r.action for r in asked] == ["click_element_by_index"] and "delete" in asked[0].reason
            assert threads == {threading.current_thread().name}  # the approver ran on the caller's loop
            content = await browser.call(lambda: browser.page.content())
            assert "deleted" in content.lower()

            # a second run on the same browser
            again = await PageAgent(model=demo_model(), browser=browser, start_url=demo_url()).run(DEMO_TASK)
            assert again.status == "completed", (again.status, again.error)

    on_refusing_loop(main)


def test_stop_from_another_thread_ends_a_run_whose_action_waits_on_the_browser_thread() -> None:
    """The abort signal is fired from a foreign thread (a widget callback) while the action (``wait``) is
    racing it on the browser loop: the run ends as stopped."""

    async def main() -> None:
        async with BrowserSession() as browser:
            agent = PageAgent(model=demo_model(), browser=browser, start_url=demo_url(), max_steps=5)
            waiting = asyncio.Event()
            loop = asyncio.get_running_loop()

            ran_on: list[str] = []

            async def slow_wait(args: Any, ctx: Any) -> Any:
                ran_on.append(threading.current_thread().name)
                loop.call_soon_threadsafe(waiting.set)
                await ctx.signal.sleep(3600)
                return "never"

            events: list[Any] = []

            async def consume() -> Any:
                async for event in agent.stream(DEMO_TASK):
                    events.append(event)

            original = agent.tools

            def tools(
                browser: BrowserSession, task: str | None = None, *, data: bool | None = None, page: Calls = frozenset()
            ) -> dict[str, Tool]:
                out = original(browser, task, data=data, page=page)
                for tool in out.values():  # every browser action now blocks until stopped
                    if getattr(tool, "runs_on_browser", False):
                        tool.execute = slow_wait  # type: ignore[method-assign]
                return out

            agent.tools = tools  # type: ignore[method-assign]
            run = asyncio.ensure_future(consume())
            started = asyncio.ensure_future(waiting.wait())
            await asyncio.wait([run, started], return_when=asyncio.FIRST_COMPLETED)  # a run that fails ends the wait
            assert started.done(), (run.exception() if run.done() else None, agent.last_result)
            threading.Thread(target=agent.stop, args=("Stop clicked",)).start()
            await run
            result = agent.last_result
            assert result is not None and result.status == "stopped", (result, result and result.error)
            assert ran_on and ran_on[0].startswith("notebook-agent-browser")  # the action ran on the browser thread

    on_refusing_loop(main)


def test_abort_signal_wakes_waiters_on_both_loops() -> None:
    """A run's signal is awaited on the caller's loop (the model stream) and on the browser loop (an action)."""

    async def main() -> None:
        async with BrowserSession() as browser:
            controller = AbortController()
            here = asyncio.ensure_future(controller.signal.wait())
            there = asyncio.ensure_future(browser.call(controller.signal.wait))
            await asyncio.sleep(0)
            await asyncio.to_thread(controller.abort, "stop")
            assert await here == "stop" and await there == "stop"

    on_refusing_loop(main)


def test_act_drives_the_page_on_the_thread_and_asks_the_user_on_the_callers_loop() -> None:
    """``act`` on a session not started yet picks the thread before any tool touches the page; ``ask_user``
    waits for the person where the person's widgets live (the caller's loop), not on the browser thread."""

    async def main() -> None:
        asked_on: list[str] = []

        async def ask(question: str) -> str:
            asked_on.append(threading.current_thread().name)
            return "blue"

        browser = BrowserSession(on_ask_user=ask)
        try:
            opened = await browser.act("go_to_url", {"url": demo_url()})
            assert not opened.is_error and browser.is_threaded, opened.text_content
            answer = await browser.act("ask_user", {"question": "Which colour?"})
            assert answer.text_content.startswith("User answered: blue")
            assert asked_on == [threading.current_thread().name]
        finally:
            await browser.close()

    on_refusing_loop(main)


def test_the_approval_policy_sees_what_keys_would_press_on_a_threaded_browser() -> None:
    """``send_keys`` approval reads the element the keys act on through a live handle: on the browser thread."""

    async def main() -> None:
        async with BrowserSession() as browser:
            await browser.open(demo_url())
            snap = await browser.snapshot()
            box = next(i for i, e in snap.elements.items() if e.tag == "input")
            request = ApprovalRequest("send_keys", {"keys": "Enter", "index": box}, snap.url)
            raw = {"keys": "Enter", "index": box}
            await describe_effects(request, raw, raw, browser=browser, tools={}, agent_domains=(), custom=False)
            assert request.keys_target is not None and request.keys_target["tag"] == "input", request.keys_target

    on_refusing_loop(main)


class PageTitle(Tool):
    """A custom tool that drives Playwright itself: it says so, and executes on the browser thread."""

    name = "page_title"
    description = "Read the page title."
    parameters = {"type": "object", "properties": {}}
    runs_on_browser = True

    def __init__(self, browser: BrowserSession) -> None:
        self.browser = browser
        self.ran_on = ""

    async def execute(self, args: Any, ctx: ToolCallContext) -> str:
        self.ran_on = threading.current_thread().name
        await ctx.on_update("reading")  # type: ignore[misc]
        return f"Title: {await self.browser.page.title()}"


class Where(Tool):
    """A custom tool that does not touch the browser: it runs on the caller's loop."""

    name = "where"
    description = "Say where this runs."
    parameters = {"type": "object", "properties": {}}
    ran_on = ""

    async def execute(self, args: Any, ctx: ToolCallContext) -> str:
        self.ran_on = threading.current_thread().name
        return "here"


def test_custom_tools_run_where_they_say_and_their_progress_reaches_the_run() -> None:
    async def main() -> None:
        async with BrowserSession() as browser:
            title, where = PageTitle(browser), Where()
            model = ScriptedModel(
                [
                    agent_output("page_title", {}),
                    agent_output("where", {}),
                    agent_output("done", {"text": "ok", "success": True}),
                ]
            )
            agent = PageAgent(
                model=model, browser=browser, start_url=demo_url(), custom_tools={"page_title": title, "where": where}
            )
            events = [e async for e in agent.stream("read the title")]
            result = next(e for e in events if isinstance(e, RunFinished)).result
            assert result.status == "completed", (result.status, result.error)
            assert result.steps[0].result == "Title: Northwind Outfitters"
            assert title.ran_on.startswith("notebook-agent-browser")
            assert where.ran_on == threading.current_thread().name
            assert any(isinstance(e, ActionProgress) and e.progress == "reading" for e in events)

    on_refusing_loop(main)

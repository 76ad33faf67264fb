"""What lives for the whole kernel: the shared browser, the session defaults, and the running runs.

``%%agent`` starts a run as an ``asyncio.Task`` on the kernel's own event loop and returns at once, so the
kernel goes idle and widget clicks are processed while the agent works. The returned :class:`NotebookRun` is
awaitable (``result = await agent_run``) for "Run All" and nbval. A 250 ms ticker keeps the loop waking while a
run is active, so the notebook's Interrupt cancels a waiting cell within a second.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Generator
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from ..agent import AnyEvent, PageAgent, PageAgentResult, RunFinished
from ..agent.approval import ApprovalAnswer, ApprovalRequest
from ..core.abort import AbortSignal
from .view import RunView

if TYPE_CHECKING:
    from ..browser.session import BrowserSession
    from ..core.model import Model


@dataclass
class SessionConfig:
    """Defaults for ``%%agent`` in this kernel; ``%agent config`` shows and changes them."""

    model: str | None = None
    max_steps: int = 20
    approve: str = "ask-risky"
    approval_timeout: float = 300.0
    headless: bool = True
    vision: bool = False
    screenshots: bool = True
    runs_dir: str = "agent_runs"
    """Where finished runs are saved (relative to the notebook's folder)."""
    prompt: str = "default"
    """Name of the active system prompt (see ``%%agent_prompt``)."""

    def describe(self) -> str:
        rows = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "model" and value is None:
                env = os.environ.get("NOTEBOOK_AGENT_MODEL")
                value = (
                    f"{env} (from NOTEBOOK_AGENT_MODEL)"
                    if env
                    else "demo (offline; set --model or NOTEBOOK_AGENT_MODEL)"
                )
            rows.append(f"{f.name:17} {value}")
        return "\n".join(rows)


@dataclass
class KernelState:
    config: SessionConfig = field(default_factory=SessionConfig)
    browser: BrowserSession | None = None
    runs: list[NotebookRun] = field(default_factory=list)
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    """Strong references: asyncio keeps only weak ones to running tasks."""
    prompts: dict[str, str] = field(default_factory=dict)
    """Named system prompts set with ``%%agent_prompt`` ("default" is the packaged one)."""

    def prompt_text(self, name: str | None = None) -> str:
        from ..agent import default_system_prompt

        name = name or self.config.prompt
        if name == "default":
            return default_system_prompt()
        if name not in self.prompts:
            known = ", ".join(["default", *self.prompts])
            raise ValueError(f"No prompt named {name!r}. Known prompts: {known}. Define one with %%agent_prompt.")
        return self.prompts[name]

    _browser_lock: asyncio.Lock | None = None

    async def get_browser(self) -> BrowserSession:
        """The kernel's one browser: started on first use, kept between cells, relaunched if closed."""
        from ..browser.session import BrowserSession

        if self._browser_lock is None:
            self._browser_lock = asyncio.Lock()
        async with self._browser_lock:
            if self.browser is not None and self.browser.headless != self.config.headless:
                await self.browser.close()
                self.browser = None
            if self.browser is None:
                self.browser = BrowserSession(headless=self.config.headless)
                await self.browser.start()
            return self.browser

    async def close_browser(self) -> None:
        if self.browser is not None:
            browser, self.browser = self.browser, None
            await browser.close()

    def stop_all(self, reason: str = "Stopped by %agent stop") -> int:
        count = 0
        for run in self.runs:
            if not run.done:
                run.stop(reason)
                count += 1
        return count


STATE = KernelState()


def resolve_model(name: str | None, task: str) -> tuple[Model, str]:
    """The model for a run (``--model``, else ``%agent config``, else the environment) and a header note."""
    from ..models import choose_model

    return choose_model(name or STATE.config.model, task, runs_dir=STATE.config.runs_dir)


class NotebookRun:
    """A handle on one ``%%agent`` run: shown as its view, awaitable for its result, stoppable."""

    def __init__(self, agent: PageAgent, task: str, view: RunView) -> None:
        self.agent = agent
        self.task_text = task
        self.view = view
        self.result: PageAgentResult | None = None
        self.error: BaseException | None = None
        self.task: asyncio.Task[PageAgentResult | None] | None = None
        self.events: list[AnyEvent] = []
        self.saved_path: str | None = None

    @property
    def done(self) -> bool:
        return self.task is not None and self.task.done()

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.task = loop.create_task(self._main())
        STATE.tasks.add(self.task)
        self.task.add_done_callback(STATE.tasks.discard)
        ticker = loop.create_task(self._tick())
        STATE.tasks.add(ticker)
        ticker.add_done_callback(STATE.tasks.discard)

    def stop(self, reason: str = "Stopped by the user") -> None:
        self.agent.stop(reason)

    # -- answering from code (scripts, tests, "Run All" notebooks) ---------------------------------------
    @property
    def pending_approval(self) -> ApprovalRequest | None:
        """The action waiting for Approve / Deny, if any."""
        return self.view.pending_approval

    async def wait_for_approval(self, timeout: float = 60.0) -> ApprovalRequest:
        """Wait until the run asks for an approval (or finishes: then raise)."""
        assert self.task is not None
        shown = asyncio.ensure_future(self.view.approval_shown.wait())
        await asyncio.wait({shown, self.task}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        shown.cancel()
        request = self.view.pending_approval
        if request is None:
            state = "finished" if self.task.done() else f"did not ask within {timeout:g}s"
            raise RuntimeError(f"The run {state} without asking for an approval")
        return request

    def approve(self) -> None:
        """Same as clicking Approve."""
        self._answer(ApprovalAnswer(True, None))

    def deny(self, reason: str | None = None) -> None:
        """Same as clicking Deny (the model sees ``reason``)."""
        self._answer(ApprovalAnswer(False, reason))

    def _answer(self, answer: ApprovalAnswer) -> None:
        if self.view.answer_approval is None:
            raise RuntimeError("Nothing is waiting for an approval")
        self.view.answer_approval(answer)

    async def _main(self) -> PageAgentResult | None:
        try:
            async for event in self.agent.stream(self.task_text):
                self.events.append(event)
                self.view.handle(event)
                if isinstance(event, RunFinished):
                    self.result = event.result
            if self.result is not None and STATE.config.runs_dir:
                await asyncio.to_thread(self._save, self.result)
            return self.result
        except asyncio.CancelledError:
            # Interrupt: the agent's stream has already stopped the run and waited for it to settle, so its
            # result holds every finished step; keep and save it before letting the cancellation through.
            self.agent.stop("The cell was interrupted")
            self.view.set_status("stopped")
            last = self.agent.last_result
            if last is not None and last.task == self.task_text and self.result is None:
                self.result = last
                self.view.show_result(last)
                if STATE.config.runs_dir:
                    self._save(last)
            raise
        except Exception as exc:
            self.error = exc
            self.view.show_error(exc)
            return None

    def _save(self, result: PageAgentResult) -> None:
        from ..agent.runs import save_run

        try:
            self.saved_path = str(save_run(result, STATE.config.runs_dir))
        except OSError as exc:  # a read-only folder must not lose the result: say so in the view
            self.view.note(f"Could not save the run to {STATE.config.runs_dir}: {exc}")

    async def _tick(self) -> None:
        assert self.task is not None
        while not self.task.done():
            self.view.tick()
            await asyncio.sleep(0.25)
        self.view.tick()

    def __await__(self) -> Generator[Any, None, PageAgentResult | None]:
        if self.task is None:
            raise RuntimeError("This run was never started")
        result = yield from self.task.__await__()
        # Re-send the final widget state from the awaiting cell, so headless executors (nbval, nbclient)
        # record the finished view and not the state from when the %%agent cell returned.
        for widget in self.view.widgets():
            widget.send_state()
        if self.error is not None:
            raise self.error
        return result

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        status = self.result.status if self.result else ("running" if not self.done else "error")
        p.text(f"<NotebookRun {status}: {self.task_text[:60]!r}>")


def watch(agent: PageAgent, task: str, *, ask_user: bool = False) -> NotebookRun:
    """Show a Python-built :class:`PageAgent` working on ``task`` in the live view; returns the run handle.

    The agent keeps its own browser, model and tools. Its approvals (when its policy asks and it has no
    approver) appear in the view; with ``ask_user=True`` (and no ``on_ask_user`` of its own) so do its
    questions.
    """
    from IPython.display import display

    holder: list[NotebookRun] = []
    view = RunView(
        task,
        f"{agent.model.provider}:{agent.model.id}",
        agent.max_steps,
        on_stop=lambda: holder[0].stop() if holder else None,
    )
    if agent.approver is None:
        agent.approver = make_approver(view, lambda: agent.browser)
    if ask_user and agent.on_ask_user is None:
        agent.on_ask_user = make_ask_user(view)
    run = NotebookRun(agent, task, view)
    holder.append(run)
    STATE.runs.append(run)
    display(view.root)
    run.start()
    return run


_OUTLINE_JS = """([x, y, w, h]) => {
  const d = document.createElement('div');
  d.id = '__na_target_outline';
  Object.assign(d.style, {position: 'fixed', left: x - 3 + 'px', top: y - 3 + 'px', width: w + 6 + 'px',
    height: h + 6 + 'px', border: '3px solid #e3342f', borderRadius: '4px', zIndex: 2147483647,
    pointerEvents: 'none', boxSizing: 'border-box'});
  document.documentElement.appendChild(d);
}"""


async def target_crop(browser: BrowserSession, index: int, padding: int = 60) -> bytes | None:
    """A PNG of the area around element ``index`` with the element outlined in red (for the person who
    approves). Uses the box from the latest snapshot, which the model's decision was based on. Runs where the
    page lives (the browser thread when the kernel's loop cannot start one)."""
    return await browser.call(_target_crop, browser, index, padding)


async def _target_crop(browser: BrowserSession, index: int, padding: int) -> bytes | None:
    info = browser.element(index)
    if info is None or info.box is None:
        return None
    x, y, w, h = info.box
    vw, vh = browser.viewport
    left, top = max(0.0, x - padding), max(0.0, y - padding)
    right, bottom = min(float(vw), x + w + padding), min(float(vh), y + h + padding)
    if right <= left or bottom <= top:
        return None
    page = browser.page
    await page.evaluate(_OUTLINE_JS, [x, y, w, h])
    try:
        return await page.screenshot(
            type="png", clip={"x": left, "y": top, "width": right - left, "height": bottom - top}
        )
    finally:
        await page.evaluate("() => document.getElementById('__na_target_outline')?.remove()")


def make_approver(view: RunView, browser_getter: Any) -> Any:
    """An approver that shows Approve/Deny in the view, with a crop of the target element when known."""

    async def approver(request: ApprovalRequest) -> ApprovalAnswer:
        crop = None
        index = request.args.get("index")
        browser = browser_getter()
        if index is not None and browser is not None:
            try:
                crop = await target_crop(browser, int(index))
            except Exception:  # a missing crop must not block the question
                crop = None
        return await view.ask_approval(request, crop)

    return approver


def make_ask_user(view: RunView) -> Any:
    async def ask(question: str, signal: AbortSignal) -> str:
        return await signal.race(view.ask_user(question))

    return ask

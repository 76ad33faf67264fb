"""What lives for the whole kernel: the shared browser, the session defaults, and the running runs.

``%%agent`` starts a run as an ``asyncio.Task`` on the kernel's own event loop and returns at once, so the
kernel goes idle and widget clicks are processed while the agent works. The returned :class:`NotebookRun` is
awaitable (``result = await agent_run``) for "Run All" and nbval. A 250 ms ticker keeps the loop waking while a
run is active, so the notebook's Interrupt cancels a waiting cell within a second.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Generator
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from ..agent import AnyEvent, PageAgent, PageAgentResult, RunFinished
from ..agent.approval import ApprovalAnswer, ApprovalRequest
from ..core.abort import AbortSignal
from .kernel import blocked_kernel_version
from .view import RunView

if TYPE_CHECKING:
    from ..browser.session import BrowserSession
    from ..browser.snapshot import TabInfo
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
    main_tab_run: NotebookRun | None = None
    """The run acting on the browser's own tab; a run that starts while it is active gets a tab of its own."""
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

    async def tab_owners(self) -> list[tuple[TabInfo, str]]:
        """Every tab of the kernel's browser with the run that owns it ("" for none), in tab-id order."""
        if self.browser is None or not self.browser.is_started:
            return []
        holder = self.main_tab_run if self.main_tab_run is not None and not self.main_tab_run.done else None
        rows = [(tab, _run_label(holder) if holder else "") for tab in await self.browser.tab_infos()]
        for run in self.runs:
            session = run.session
            mine = session is not None and session.is_tab_session and session.is_started
            if run.kernel_browser and not run.done and mine:
                assert session is not None
                rows += [(tab, _run_label(run)) for tab in await session.tab_infos()]
        return sorted(rows, key=lambda row: row[0].id)

    def stop_all(self, reason: str = "Stopped by %agent stop") -> int:
        count = 0
        for run in self.runs:
            if not run.done:
                run.stop(reason)
                count += 1
        return count

    def stop_on_interrupt(self) -> int:
        """Kernel → Interrupt: stop every active run, except one whose panel asked for this interrupt (on a
        kernel older than ipykernel 7.4 the cell awaiting the run holds the kernel's only turn, and
        interrupting that cell is how the Approve click gets through)."""
        count = 0
        for run in self.runs:
            if run.done or (run.view.waiting_for_person and run.view.blocked_version is not None):
                continue
            run.stop(INTERRUPT_REASON)
            count += 1
        return count


STATE = KernelState()


def _run_label(run: NotebookRun) -> str:
    task = " ".join(run.task_text.split())
    task = task if len(task) <= 50 else task[:50].rsplit(" ", 1)[0] + " …"
    return f"{run.name or 'run'}: {task}"


class RunInterrupted(asyncio.CancelledError):
    """What a cell awaiting a run raises when the kernel is interrupted: a cancellation (so asyncio code
    treats it as one) that IPython shows as one line instead of a traceback through asyncio's internals."""

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[33m{self}\x1b[0m"]


INTERRUPT_REASON = "Stopped by Kernel → Interrupt"


def _stop_on_interrupt(previous: Any) -> Any:
    """A SIGINT handler that stops every active run, then does what ``previous`` did (ipykernel's own
    handler: cancel the awaiting cell or raise KeyboardInterrupt; or nothing while the kernel is idle)."""
    if getattr(previous, "_notebook_agent", False):
        return previous
    loop = asyncio.get_running_loop()

    def handler(signum: int, frame: Any) -> Any:
        if any(not run.done for run in STATE.runs):
            # signal handlers run between bytecodes on the main thread: hand the stop to the loop
            loop.call_soon_threadsafe(STATE.stop_on_interrupt)
        if callable(previous):
            return previous(signum, frame)
        if previous == signal.SIG_DFL:
            raise KeyboardInterrupt
        return None

    handler._notebook_agent = True  # type: ignore[attr-defined]
    handler._previous = previous  # type: ignore[attr-defined]
    return handler


def _wrap_sigint_for_cell(*_: Any) -> None:
    """``pre_run_cell``: ipykernel has just installed its own handler for this cell; chain ours in front."""
    try:
        signal.signal(signal.SIGINT, _stop_on_interrupt(signal.getsignal(signal.SIGINT)))
    except (ValueError, RuntimeError):  # not the main thread (a subshell), or no running loop
        pass


def install_interrupt(shell: Any) -> None:
    """Make Kernel → Interrupt stop every active run, whether or not a cell is running.

    ipykernel ignores SIGINT while idle and swaps in its own handler around each message (restoring the idle
    one from ``kernel.saved_sigint_handler`` afterwards). We chain a handler in front of both: the idle one
    (so an interrupt with no cell running stops the runs, which ``%%agent`` cells leave going) and, through
    ``pre_run_cell``, the one of each running cell (so an interrupt also stops runs the cell does not await).
    ipykernel's own behaviour is unchanged: it runs right after ours.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    kernel = getattr(shell, "kernel", None)
    if kernel is not None and hasattr(kernel, "saved_sigint_handler"):
        kernel.saved_sigint_handler = _stop_on_interrupt(kernel.saved_sigint_handler)
    events = getattr(shell, "events", None)
    if events is not None and _wrap_sigint_for_cell not in events.callbacks.get("pre_run_cell", []):
        events.register("pre_run_cell", _wrap_sigint_for_cell)


def uninstall_interrupt(shell: Any) -> None:
    kernel = getattr(shell, "kernel", None)
    current = getattr(kernel, "saved_sigint_handler", None)
    if getattr(current, "_notebook_agent", False):
        kernel.saved_sigint_handler = current._previous  # type: ignore[union-attr]
    events = getattr(shell, "events", None)
    if events is not None and _wrap_sigint_for_cell in events.callbacks.get("pre_run_cell", []):
        events.unregister("pre_run_cell", _wrap_sigint_for_cell)


def resolve_model(name: str | None, task: str) -> tuple[Model, str]:
    """The model for a run (``--model``, else ``%agent config``, else the environment) and a header note."""
    from ..models import choose_model

    return choose_model(name or STATE.config.model, task, runs_dir=STATE.config.runs_dir)


class NotebookRun:
    """A handle on one ``%%agent`` run: shown as its view, awaitable for its result, stoppable."""

    def __init__(
        self, agent: PageAgent, task: str, view: RunView, *, kernel_browser: bool = False, name: str = ""
    ) -> None:
        self.agent = agent
        self.task_text = task
        self.view = view
        self.name = name
        """The variable the handle is bound to (``agent_run``), to name the run in listings."""
        self.kernel_browser = kernel_browser
        """Run in the kernel's shared browser: in its tab, or in a tab of its own if another run has it."""
        self.session: BrowserSession | None = agent.browser
        """The browser session this run acts on (the shared one, or a tab session of it)."""
        self.display_handle: Any = None
        self._bundle: dict[str, Any] = {}
        self.result: PageAgentResult | None = None
        self.error: BaseException | None = None
        self.task: asyncio.Task[PageAgentResult | None] | None = None
        self.events: list[AnyEvent] = []
        self.saved_path: str | None = None
        self._awaiting = 0
        """How many ``await run`` are waiting (normally one cell)."""

    def show(self) -> None:
        """Display the live view in the current cell, under a display id, so that the static record can be
        added to the same output when the run ends."""
        from IPython.display import display

        self._bundle = dict(self.view.root._repr_mimebundle_() or {})
        self.display_handle = display(self._bundle, raw=True, display_id=True)

    def leave_record(self) -> None:
        """Add the static HTML record (see :mod:`.record`) next to the widget in the view's output."""
        from .record import error_html, record_html

        if self.display_handle is None:
            return
        if self.result is not None:
            record = record_html(self.result)
        elif self.error is not None:
            record = error_html(self.task_text, self.error)
        else:
            return
        self.display_handle.update({**self._bundle, "text/html": record}, raw=True)

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

    async def _take_browser(self) -> None:
        """The kernel's browser tab if no other active run has it, else a new tab of the same browser."""
        browser = await STATE.get_browser()
        holder = STATE.main_tab_run
        if holder is None or holder is self or holder.done:
            STATE.main_tab_run = self
            self.session = browser
            self.view.set_tab(f"tab {browser.tab_id(browser.page)} (the kernel browser's tab)")
        else:
            self.session = await browser.tab_session()
            other = f"{holder.name} is using" if holder.name else "another run is using"
            own = self.session.tab_id(self.session.page)
            self.view.set_tab(f"its own tab {own} ({other} the kernel browser's tab)")
        self.agent.browser = self.session

    async def _release_browser(self) -> None:
        if not self.kernel_browser:
            return
        if STATE.main_tab_run is self:
            STATE.main_tab_run = None
        session = self.session
        if session is not None and session.is_tab_session:
            self.agent.browser = None
            await session.close()

    async def _main(self) -> PageAgentResult | None:
        try:
            return await self._run()
        finally:
            await asyncio.shield(self._release_browser())
            try:
                self.leave_record()
            except Exception as exc:  # the record is a courtesy: never lose the run over it
                self.view.note(f"Could not write the static record: {exc}")

    async def _run(self) -> PageAgentResult | None:
        try:
            if self.kernel_browser:
                await self._take_browser()
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
        return self._result_for_awaiter().__await__()

    async def _result_for_awaiter(self) -> PageAgentResult | None:
        """``await run``: the result, once the run ends. Counted while it waits, because on a kernel older than
        ipykernel 7.4 a cell waiting here holds the kernel's only turn and no Approve click can arrive: the open
        panel then says so, and interrupting such a cell releases only the cell, not the run. Otherwise an
        Interrupt stops the run and the cell shows one line (:class:`RunInterrupted`), not a traceback."""
        task = self.task
        assert task is not None
        self._awaiting += 1
        self._refresh_blocked_note()
        try:
            result = await asyncio.shield(task)
        except asyncio.CancelledError as exc:
            if not task.done():
                if self.view.waiting_for_person and self.view.blocked_version is not None:
                    raise  # the panel told the user to interrupt this cell so that the click can arrive
                task.cancel()  # Interrupt stops the run; wait for it to settle (it keeps its finished steps)
                await asyncio.wait({task})
            if isinstance(exc, RunInterrupted):
                raise
            raise RunInterrupted(self._stopped_message()) from None
        finally:
            self._awaiting -= 1
            self._refresh_blocked_note()
        # Re-send the final widget state from the awaiting cell, so headless executors (nbval, nbclient)
        # record the finished view and not the state from when the %%agent cell returned.
        for widget in self.view.widgets():
            widget.send_state()
        self.leave_record()  # again from this cell: nbclient keeps only what the running cell sends
        if self.error is not None:
            raise self.error
        return result

    def _refresh_blocked_note(self) -> None:
        self.view.set_blocked_version(blocked_kernel_version() if self._awaiting and not self.done else None)

    def _stopped_message(self) -> str:
        name = self.name or "the run"
        result = self.result
        if result is None:
            return f"Interrupted: {name} was stopped."
        steps = len([s for s in result.steps if s.action and s.result and not s.is_error])
        kept = f"{steps} finished step{'' if steps == 1 else 's'}"
        where = f", saved to {self.saved_path}" if self.saved_path else ""
        return f"Interrupted: {name} was stopped; {kept} kept in {name}.result{where}."

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        status = self.result.status if self.result else ("running" if not self.done else "error")
        p.text(f"<NotebookRun {status}: {self.task_text[:60]!r}>")


def watch(agent: PageAgent, task: str, *, ask_user: bool = False) -> NotebookRun:
    """Show a Python-built :class:`PageAgent` working on ``task`` in the live view; returns the run handle.

    The agent keeps its own browser, model and tools. Its approvals (when its policy asks and it has no
    approver) appear in the view; with ``ask_user=True`` (and no ``on_ask_user`` of its own) so do its
    questions.
    """
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
    run.show()
    run.start()
    return run


_OUTLINE_JS = """([x, y, w, h]) => {
  const d = document.createElement('div');
  d.id = '__na_target_outline';
  Object.assign(d.style, {position: 'fixed', left: x + 'px', top: y + 'px', width: w + 'px',
    height: h + 'px', border: '3px solid #e3342f', borderRadius: '4px', zIndex: 2147483647,
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
    page = browser.page
    size = page.viewport_size  # the real one (a headed window may differ from the configured size)
    vw, vh = (size["width"], size["height"]) if size else browser.viewport
    # the outline (3 px outside the element, 3 px wide) is kept inside the viewport, and the crop holds all of it
    ox, oy = max(0.0, x - 3), max(0.0, y - 3)
    ow, oh = min(float(vw), x + w + 3) - ox, min(float(vh), y + h + 3) - oy
    left, top = max(0.0, ox - padding), max(0.0, oy - padding)
    right, bottom = min(float(vw), ox + ow + padding), min(float(vh), oy + oh + padding)
    if right <= left or bottom <= top or ow <= 0 or oh <= 0:
        return None
    await page.evaluate(_OUTLINE_JS, [ox, oy, ow, oh])
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

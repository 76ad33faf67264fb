"""The run handle: a ``%%agent`` run (or a Python-built agent shown with :func:`watch`) in the notebook.

``%%agent`` starts a run as an ``asyncio.Task`` on the kernel's own event loop and returns at once, so the
kernel goes idle and widget clicks are processed while the agent works. The returned :class:`NotebookRun` is
awaitable (``result = await agent_run``) for "Run All" and nbval. It consumes the agent's page events and
nothing else: each goes to the view, and an approval is answered on the ``Approval`` the event carries (by a
click, or by ``approve()`` / ``deny()`` from code). A 250 ms ticker keeps the loop waking while a run is
active, so the notebook's Interrupt cancels a waiting cell within a second.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agent import AnyEvent, Approval, ApprovalAnswered, ApprovalRequested, PageAgent, PageAgentResult, RunFinished
from ..agent.step.pilot import Pilot
from ..core.abort import AbortSignal
from ..core.errors import error_message
from .interrupt import RunInterrupted
from .kernel import blocked_kernel_version
from .kernel_state import STATE, SessionConfig
from .run_answers import RunAnswers
from .views.display import LiveOutput, waiting_html
from .views.run_view import RunView

if TYPE_CHECKING:
    from IPython.lib.pretty import PrettyPrinter

    from ..browser.session.browser_session import BrowserSession
    from ..core.model import Model

__all__ = ["STATE", "NotebookRun", "SessionConfig", "make_ask_user", "resolve_model", "watch"]


def resolve_model(name: str | None, task: str) -> tuple[Model, str]:
    """The model for a run (``--model``, else ``%agent config``, else the environment) and a header note."""
    from ..config.models import choose_model

    chosen = STATE.config.model_name(name or STATE.config.model)  # an alias names a model
    return choose_model(chosen, task, runs_dir=STATE.config.runs_dir)


class NotebookRun(RunAnswers):
    """A handle on one ``%%agent`` run: shown as its view, awaitable for its result, stoppable."""

    def __init__(
        self,
        agent: PageAgent,
        task: str,
        view: RunView,
        *,
        kernel_browser: bool = False,
        name: str = "",
        previous: PageAgentResult | None = None,
        pilot: Pilot | None = None,
    ) -> None:
        self.agent = agent
        self.previous = previous
        self.pilot = pilot
        """In a replay (``%agent replay``): decides each step from the recorded run."""
        """The run this one follows up (``%%agent --continue``, ``follow_up``), or None."""
        self.task_text = task
        self.view = view
        view.on_stop = self.stop
        self.name = name
        """The variable the handle is bound to (``agent_run``), to name the run in listings."""
        self.kernel_browser = kernel_browser
        """Run in the kernel's shared browser: in its tab, or in a tab of its own if another run has it."""
        self.session: BrowserSession | None = agent.browser
        """The browser session this run acts on (the shared one, or a tab session of it)."""
        self.output: LiveOutput | None = None
        """The cell output of the live view and its static form (see :mod:`.views.display`)."""
        self.result: PageAgentResult | None = None
        self.error: BaseException | None = None
        self.task: asyncio.Task[PageAgentResult | None] | None = None
        self.events: list[AnyEvent] = []
        self.saved_path: str | None = None
        self.approval: Approval | None = None
        """The latest approval the run asked for (answered or not)."""
        self._asked = asyncio.Event()
        """Set when the run asks for an approval (cleared by a waiter that found the last one answered)."""
        self._awaiting = 0
        """How many ``await run`` are waiting (normally one cell)."""

    def show(self) -> None:
        """Display the live view in the current cell with its static form beside it (what an exported or
        untrusted notebook shows), so that the record can take the output's place when the run ends."""
        html = waiting_html(self.task_text, "A notebook_agent run")
        self.output = LiveOutput(self.view.root, html, f"notebook_agent run: {self.task_text}")

    def leave_record(self) -> None:
        """The run ended: its output becomes the static HTML record (see :mod:`.views.record`) and a one-line text,
        without the widget. A widget view in a saved notebook needs the kernel that made it: reopened later
        (with or without a kernel) it shows "Error displaying widget: model not found", where the record shows
        the whole run everywhere (JupyterLab, GitHub, nbviewer). The live view is shown while the run runs."""
        from .views.record import error_html, record_html

        if self.output is None:
            return
        if self.result is not None:
            record, text = record_html(self.result), repr(self.result)
        elif self.error is not None:
            record, text = error_html(self.task_text, self.error), f"{self.task_text}: {error_message(self.error)}"
        else:
            return
        self.output.settle(record, text)

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

    def follow_up(self, task: str) -> NotebookRun:
        """Give this finished run a new instruction: a new run (shown in the current cell, returned as its
        handle) that knows what this one was asked, did and ended with, and acts on the page it left."""
        if self.result is None:
            raise RuntimeError("This run has not finished yet: `await` it first, then follow it up.")
        if not task or not task.strip():
            raise ValueError("The follow-up is empty: say what the agent should do next.")
        model = f"{self.agent.model.provider}:{self.agent.model.id}"
        view = RunView(task.strip(), model, self.agent.max_steps, note=f"follows up run {self.result.run_id}")
        run = NotebookRun(
            self.agent, task.strip(), view, kernel_browser=self.kernel_browser, name=self.name, previous=self.result
        )
        STATE.runs.append(run)
        run.show()
        run.start()
        return run

    async def _take_browser(self) -> None:
        """The kernel's browser tab if no other active run has it, else a new tab of the same browser."""
        if STATE.browser is None:  # the first run of the kernel: Chromium starts now, which takes a moment
            self.view.set_status("launching")
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

    async def _release_browser(self) -> None:
        if not self.kernel_browser:
            return
        if STATE.main_tab_run is self:
            STATE.main_tab_run = None
        session = self.session
        if session is not None and session.is_tab_session:
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
        runs_dir = self.agent.runs_dir or STATE.config.runs_dir or None
        try:
            if self.kernel_browser:
                await self._take_browser()
            # until the first step starts: say what the run is doing rather than a bare "starting"
            self.view.set_status("opening" if self.agent.start_url else "asking")
            async for event in self.agent.stream(
                self.task_text,
                browser=self.session,
                interactive=True,
                runs_dir=runs_dir,
                continue_from=self.previous,
                pilot=self.pilot,
            ):
                self._follow(event)
            return self.result
        except asyncio.CancelledError:
            # Interrupt: the agent's stream has already stopped the run and waited for it to settle, so its
            # result holds every finished step and its run file is closed; keep it before letting the
            # cancellation through.
            self.agent.stop("The cell was interrupted")
            self.view.set_status("stopped")
            last = self.agent.last_result
            if last is not None and last.task == self.task_text and self.result is None:
                self._finished(last, runs_dir)
                self.view.show_result(last)
            raise
        except Exception as exc:
            self.error = exc
            self.view.show_error(exc)
            return None

    def _follow(self, event: AnyEvent) -> None:
        """One page event: kept, shown, and what the handle itself tracks (the open approval, the result)."""
        self.events.append(event)
        if isinstance(event, ApprovalRequested):
            self.approval = event.approval
            self._asked.set()
        elif isinstance(event, RunFinished):
            self._finished(event.result, self.agent.runs_dir or STATE.config.runs_dir or None)
        self.view.handle(event)
        if isinstance(event, ApprovalAnswered):
            self._refresh_blocked_note()

    def _finished(self, result: PageAgentResult, runs_dir: str | None) -> None:
        self.result = result
        path = Path(runs_dir) / f"{result.run_id}.jsonl" if runs_dir and result.run_id else None
        self.saved_path = str(path) if path is not None and path.exists() else None

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
                    # the panel told the user to interrupt this cell so that the click can arrive: one line
                    # saying so, not a bare CancelledError traceback
                    raise RunInterrupted(self._released_message()) from None
                task.cancel()  # Interrupt stops the run; wait for it to settle (it keeps its finished steps)
                await asyncio.wait({task})
            if isinstance(exc, RunInterrupted):
                raise
            raise RunInterrupted(self._stopped_message()) from None
        finally:
            self._awaiting -= 1
            self._refresh_blocked_note()
        # The record again, from this cell: headless executors (nbval, nbclient) keep only what the running cell
        # sends, so the %%agent cell's saved output is the finished record, not the view as it was when it returned.
        self.leave_record()
        if self.error is not None:
            raise self.error
        return result

    def _refresh_blocked_note(self) -> None:
        self.view.set_blocked_version(blocked_kernel_version() if self._awaiting and not self.done else None)

    def _released_message(self) -> str:
        name = self.name or "the run"
        return (
            f"Interrupted: this cell stopped waiting; {name} keeps waiting for your click in its panel "
            f"(`await {name}` again for its result)."
        )

    def _stopped_message(self) -> str:
        name = self.name or "the run"
        result = self.result
        if result is None:
            return f"Interrupted: {name} was stopped."
        steps = result.finished_steps  # counted as the summary counts them
        kept = f"{steps} finished step{'' if steps == 1 else 's'}"
        where = f", saved to {self.saved_path}" if self.saved_path else ""
        return f"Interrupted: {name} was stopped; {kept} kept in {name}.result{where}."

    def _repr_pretty_(self, p: PrettyPrinter, cycle: bool) -> None:
        status = self.result.status if self.result else ("running" if not self.done else "error")
        p.text(f"<NotebookRun {status}: {self.task_text[:60]!r}>")


def watch(agent: PageAgent, task: str, *, ask_user: bool = False) -> NotebookRun:
    """Show a Python-built :class:`PageAgent` working on ``task`` in the live view; returns the run handle.

    The agent keeps its own browser, model and tools. Its approvals (when its policy asks) appear in the view,
    answered there or by its own ``approver``, whichever comes first; with ``ask_user=True`` (and no
    ``on_ask_user`` of its own) so do its questions.
    """
    view = RunView(task, f"{agent.model.provider}:{agent.model.id}", agent.max_steps)
    if ask_user and agent.on_ask_user is None:
        agent.on_ask_user = make_ask_user(view)
    run = NotebookRun(agent, task, view)
    STATE.runs.append(run)
    run.show()
    run.start()
    return run


def make_ask_user(view: RunView) -> Any:
    async def ask(question: str, signal: AbortSignal) -> str:
        return await signal.race(view.ask_user(question))

    return ask

"""One page-agent run: the core loop's hooks, configured to drive a browser one action per step.

Each step the request is rebuilt as [system prompt, state message] (the transcript does not grow); the model
must call ``AgentOutput`` (forced, no parallel calls); the chosen inner action runs through the loop's own
pipeline (validation, ``before_tool_call`` with the approval gate, execute with the abort signal and progress
updates, ``after_tool_call``). Output that cannot be used is fed back as a short ``<sys>`` note on the next
step, never resent blindly; ``max_failures`` such failures in a row end the run.

A run's state is one explicit value, :class:`~.run_state.RunState` (the steps, the history, the loop guard,
how the run is ending, what it read, the run file's recorder, the screenshots), and every stage of a step is
given it: this module keeps only the loop's hooks, which call the stages. The loop's events become the page
events of :mod:`notebook_agent.agent.runs.events` (the only ones that leave the run) in
:mod:`.event_bridge`. The browser is held by :class:`~.run_browser.RunBrowser`, downloads are judged by
:class:`~notebook_agent.agent.safety.downloads.DownloadPolicy`, and the gate by :class:`~.gate.RunGate`.
The page is read for each step by :mod:`.page_read`, the text the model reads is built by
:mod:`notebook_agent.agent.prompt.state_message`, the output is parsed by
:mod:`notebook_agent.agent.prompt.agent_output`.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import time
from collections.abc import Callable, Mapping
from typing import Any

from ...browser.page.actionable import unfilled, unfit
from ...browser.page.call_log import CallLog
from ...browser.page.snapshot import ElementInfo
from ...browser.session.browser_session import BrowserSession
from ...browser.session.tracing import Trace, begin_group, start_trace, stop_trace
from ...browser.urls import navigation_target
from ...core.abort import AbortController, AbortedError, AbortSignal
from ...core.errors import error_message
from ...core.loop import AgentContext, BeforeToolCall, BlockToolCall, LoopConfig, run_agent_loop
from ...core.messages import AssistantMessage, ImageContent, Message, TextContent, ToolCall, UserMessage
from ...core.model import Context, ToolSpec
from ...core.planner import ToolPlan
from ...core.text import map_strings
from ...core.tools import Tool
from ...llm.tokens import prompt_tokens
from ..prompt.agent_output import MACRO_NAME, ParsedOutput, macro_spec, parse_output, with_indices
from ..prompt.offers import called_for
from ..prompt.state_message import (
    MEMORY_MAX,
    REFLECTION_MAX,
    cap,
    resume_url,
    state_message,
)
from ..runs.events import (
    ModelOutputParsed,
    PageEvent,
    RunFinished,
    StepFinished,
    StepStarted,
)
from ..runs.result import PageAgentResult, PageStep, StepRequest
from ..safety.domains import navigation_refusal
from ..safety.downloads import DownloadPolicy
from .event_bridge import LoopEvents
from .gate import RunGate, target_element
from .loop_guard import LoopGuard
from .page_read import page_for_step, read_start, url_of
from .pilot import Pilot, read_ahead
from .replay_pilot import REPLAY_HINT
from .run_browser import RunBrowser, StartUrlError
from .run_state import RunSpec, RunState
from .tool_context import tool_context_factory
from .typed_output import with_typed_done

__all__ = ["PageRun", "RunSpec", "RunState", "StartUrlError"]


class _BudgetReached(Exception):
    """Raised from the loop's hook before a model call that would cross the budget: the run ends with status
    ``budget`` (its outcome already says why). Never leaves this module."""


class PageRun:
    """One run's loop hooks around its :class:`~.run_state.RunState` (``self.state``): every stage of a step is
    given that state. ``put`` receives every page event.

    ``browser``: the session to act in (None: a browser of the run's own). ``interactive``: the consumer of the
    events answers ``ApprovalRequested`` (a view with buttons), so an ``ask`` waits for it. ``runs_dir``: where
    the run file is written (None: nowhere)."""

    def __init__(
        self,
        agent: RunSpec,
        task: str,
        controller: AbortController,
        put: Callable[[PageEvent], None],
        *,
        browser: BrowserSession | None,
        interactive: bool = False,
        runs_dir: str | None = None,
        previous: PageAgentResult | None = None,
        pilot: Pilot | None = None,
    ) -> None:
        state = self.state = RunState(agent, task, controller, put, interactive, runs_dir, previous, pilot)
        state.target = lambda args: target_element(state.browser, args)
        self.agent = agent
        self.controller = controller
        self.translator = LoopEvents(state)
        self.trace: Trace | None = None
        self.downloads = DownloadPolicy(agent.approval, lambda: state.step.url if state.step is not None else "")
        self.gate = RunGate(
            agent,
            self.downloads,
            state.put,
            interactive=interactive,
            signal=controller.signal,
            step=lambda: state.step,
            browser=lambda: state.browser,
        )
        self.lease = RunBrowser(
            browser,
            own_tab=agent.own_tab,
            run_id=state.run_id,
            download_filter=self.downloads.refusal,
            domain_rule=self.navigation_refusal if agent.allowed_domains or agent.blocked_domains else None,
            effect_judge=self.gate.judge_effect if self.gate.judges_effects else None,
            hidden_values=lambda: [*agent.secrets.values(), *state.redactor.hidden],
            live_secrets=lambda: state.redactor.live(agent.allowed_domains),
        )

    # -- the run ---------------------------------------------------------------------------------------------
    async def execute(self) -> None:
        st = self.state
        started = time.perf_counter()
        try:
            async with self.lease as browser:
                st.browser = browser
                try:
                    await self._watch_calls(browser)
                    await self._drive(browser)
                finally:
                    if st.calls is not None:
                        with contextlib.suppress(Exception):
                            await browser.call(st.calls.detach)
                    self.gate.close()  # nothing stays held at the browser's door for a run that has ended
                    st.trace_path = await stop_trace(browser, self.trace, st.runs_dir, st.run_id)
                    with contextlib.suppress(Exception):  # the last step's screenshot, before the browser may close
                        await st.screenshots.collect()
        except asyncio.CancelledError:
            st.outcome.end("stopped", "The run was cancelled")
            raise
        except AbortedError as exc:
            st.outcome.end("stopped", exc.reason)
        except _BudgetReached:
            pass  # the outcome says why (``_keep_budget``)
        except Exception as exc:
            st.outcome.end("error", error_message(exc))
        finally:
            result = st.result(time.perf_counter() - started)
            st.recorder.close(result)
            self.agent.last_result = result
            st.emit(RunFinished(result))

    async def _watch_calls(self, browser: BrowserSession) -> None:
        """Keep the page's own fetch and XHR calls on each step (browser/page/call_log.py), so a recipe made from
        this run can learn the call behind the page; a pilot that learns nothing from them (a recipe's row) says
        so with ``keeps_calls = False``."""
        st = self.state
        if not getattr(st.pilot, "keeps_calls", True):
            return
        log = CallLog(lambda page: browser.tab_id(page) >= 0)
        await browser.call(log.attach, browser.context)
        st.calls = log

    async def _drive(self, browser: BrowserSession) -> None:
        st, agent = self.state, self.agent
        self.trace = await start_trace(browser, st.redactor.scrub_text(st.task)[:200]) if agent.trace else None
        start = agent.start_url
        if st.previous is not None:  # a follow-up goes on from where the earlier run left the page, never back
            start = resume_url(st.previous, url_of(browser))
        await _admit_recorded_start(self.gate, st.pilot, start, browser)
        if start:
            self.gate.trust(navigation_target(start))  # the user chose it (or the run being continued was there)
            await self.lease.open(start, self.controller.signal)
        leaks = lambda text: st.redactor.scrub_text(text) != text  # noqa: E731
        first = await read_start(st)  # the start page, read once: for the tools, and then by step 1
        asked, data, page = await called_for(browser, st.task, agent.output_spec, first)
        offered = agent.tools(browser, asked, data=data, page=page)
        tools = with_typed_done(offered, agent.output_spec, agent.custom_tools, st.data, leaks)
        st.offer(browser.bridge_tools(tools))  # in threaded mode the browser's tools execute on its thread
        st.recorder.start(st.result(0.0))
        context = AgentContext(system_prompt=agent.full_system_prompt, messages=[], tools=list(st.tools.values()))
        options = copy.copy(agent.stream_options)
        options.tool_choice = MACRO_NAME
        options.parallel_tool_calls = False
        config = LoopConfig(
            model=agent.model,
            tool_execution="sequential",
            stream_options=options,
            before_tool_call=self.before_tool_call,
            after_tool_call=agent.after_tool_call,
            transform_context=self.transform_context,
            tool_specs=self.tool_specs,
            extract_tool_calls=self.extract_tool_calls,
            get_follow_up_messages=self.follow_up,
            should_stop_after_turn=self.stop_after_turn,
            continue_on_error=lambda m: m.error_kind == "malformed",
            tool_context=tool_context_factory(browser, agent.secrets, agent.settings(), agent.deps),
        )
        signal = self.controller.signal
        task: list[Message] = [UserMessage(content=st.redactor.scrub_text(st.task))]
        messages = await run_agent_loop(task, context, config, signal, self.translator.handle)
        st.outcome.settle(messages, len(st.steps), signal.reason if signal.aborted else None)

    # -- loop hooks --------------------------------------------------------------------------------------------
    def tool_specs(self, plan: ToolPlan) -> list[ToolSpec]:
        st = self.state
        visible = {t.name for t in plan.visible}
        # The same tools every step, the last one included (its note asks for done): a tool list that changes
        # between steps would throw away the provider's cached prompt. Where decoding is constrained, the last
        # step's decodes only done: an action there would run with no step left to report it, and a small model
        # copying its previous step then undoes what it did (MiniWoB++: a scored episode restarted).
        step = st.step
        last = step is not None and step.index >= self.agent.max_steps
        spec = _step_spec([t for n, t in st.tools.items() if n in visible], st.browser, st.loops, last=last)
        if step is not None and step.request is not None and step.replay != "replayed":  # a replayed step sent none
            step.request.tools = [{"name": spec.name, "description": spec.description, "parameters": spec.parameters}]
        return [spec]

    async def transform_context(self, context: AgentContext, signal: AbortSignal) -> list[Message]:
        st = self.state
        assert st.browser is not None
        index = len(st.steps) + 1
        step = PageStep(index=index, started_at=time.time())
        st.steps.append(step)
        self.translator.partial = None
        st.put(StepStarted(index, self.agent.max_steps))
        if self.trace is not None:
            await begin_group(st.browser, self.trace, f"Step {index}")
        t0 = time.perf_counter()
        page_text, read = await page_for_step(st, step)
        st.history.extend(step.observations)
        said = st.observer.outcome.line if read and st.observer.outcome is not None else None
        task = st.redactor.scrub_text(st.task)
        text = state_message(task, step, self.agent.max_steps, st.history, page_text, outcome=said)
        picture = await st.screenshots.for_model(st.browser) if self.agent.vision else None
        images = [picture] if picture is not None else []
        step.state_ms = (time.perf_counter() - t0) * 1000
        step.request = StepRequest(context.system_prompt or "", text, [], MACRO_NAME, images=len(images))
        content: list[TextContent | ImageContent] = [TextContent(text=text), *images]
        message = UserMessage(content=text if not images else content)
        if st.budget.budget and step.asks_model:
            self._keep_budget(step, Context(context.system_prompt, [message], [macro_spec(list(st.tools.values()))]))
        self.translator.turn_started = time.perf_counter()
        return [message]

    def _keep_budget(self, step: PageStep, request: Context) -> None:
        """Before the model call of ``step``: when it would cross the run's budget (agent/safety/budget.py), the
        call is not made; the step ends stopped saying why, and so does the run (status ``budget``)."""
        st = self.state
        why = st.budget.before_call(st.spent(), prompt_tokens(request), step.index)
        if why is None:
            return
        step.result, step.stopped = why, True
        st.outcome.end("budget", why)
        st.put(StepFinished(step))
        raise _BudgetReached(why)

    def extract_tool_calls(self, message: AssistantMessage) -> list[ToolCall]:
        st = self.state
        step = st.step
        if step is None:
            return []
        step.model_ms = (time.perf_counter() - self.translator.turn_started) * 1000
        step.output = message
        if message.stop_reason == "error" and message.error_kind == "malformed":
            # The provider could not even parse the call: feed it back like any other unusable output.
            return self._unusable(step, f"{message.error_message} Call AgentOutput again with valid JSON arguments.")
        if message.stop_reason in ("error", "aborted"):
            return []
        parsed: ParsedOutput = parse_output(message, st.tools)
        scrub = st.redactor.scrub_text
        step.evaluation_previous_goal = cap(scrub(parsed.evaluation_previous_goal), REFLECTION_MAX, "evaluation")
        step.memory = cap(scrub(parsed.memory), MEMORY_MAX, "memory")
        step.next_goal = cap(scrub(parsed.next_goal), REFLECTION_MAX, "next goal")
        step.repairs = parsed.repairs
        if parsed.call is None:
            return self._unusable(step, parsed.error or "The output had no usable action.")
        st.history.append(step)
        dropped = [r for r in parsed.repairs if "only the first" in r]
        if dropped:  # the rest never ran: say so where the model reads its history, not only in the view
            st.history.append(f"In step {step.index} you {dropped[0]}; the others did not run. One action per step.")
        st.outcome.usable()
        step.action = parsed.call.name
        step.args = st.redactor.public_args(parsed.call.name, parsed.call.arguments, url=step.url)
        step.output = st.redactor.scrub_message(message)
        st.put(ModelOutputParsed(step))
        return [parsed.call]

    def _unusable(self, step: PageStep, error: str) -> list[ToolCall]:
        """Record an output that cannot run; the next state message tells the model why (max_failures)."""
        st = self.state
        st.history.append(step)
        step.output_error = st.redactor.scrub_text(error)
        st.outcome.unusable(step.output_error)
        st.put(ModelOutputParsed(step))
        return []

    async def before_tool_call(self, ctx: BeforeToolCall, signal: AbortSignal) -> BlockToolCall | None:
        st = self.state
        step, browser = st.step, st.browser
        assert step is not None and browser is not None
        raw = ctx.args.model_dump() if hasattr(ctx.args, "model_dump") else dict(ctx.args)
        name = ctx.tool_call.name
        args = step.args = st.redactor.public_args(name, raw, url=browser.page.url)
        step.output = st.redactor.scrub_message(step.output)
        element = target_element(browser, args)
        unfilled = _unfilled(browser, name, args)
        futile = st.loops.refusal(name, args, element, step.index, browser.page.url, unfilled, step.next_goal)
        futile = futile or _questioned_claim(st, browser, step, name, args)
        if futile is not None:
            await st.screenshots.collect()
            return BlockToolCall(futile)
        target = await read_ahead(browser, st.pilot, args.get("index")) if element is not None else None
        try:
            await st.screenshots.collect()  # the previous step's picture is taken before this action changes the page
            decision = await self.gate.check(step, browser, st.tools, ctx, raw, args, signal)
            if step.approval is not None:  # a person (or a policy) was asked: find the element again after it
                await browser.drop_prefetch()
            if decision is None:
                st.loops.made(name, args, element, step.index)
                st.claims.made(name, element)
                found = await target if target is not None else None
                step.target = map_strings(found, st.redactor.scrub_text) if found else None
        finally:
            if target is not None and not target.done():
                target.cancel()
        return decision

    def navigation_refusal(self, url: str) -> str | None:
        return navigation_refusal(url, self.agent.allowed_domains, self.agent.blocked_domains)

    async def follow_up(self) -> list[Message]:
        """Keep going after an unusable output (the next state message carries the error)."""
        st = self.state
        if st.outcome.may_retry(st.step, len(st.steps), self.controller.signal.aborted):
            return [UserMessage(content="(retry)")]
        return []

    async def stop_after_turn(self, message: AssistantMessage, results: list[Any], context: AgentContext) -> bool:
        st = self.state
        over = st.budget.after_call(st.spent(), message.usage.output) if st.budget.budget else None
        if over is not None and st.outcome.finished is None:
            st.outcome.end("budget", over)  # an estimate fell short: the run stops one step past its budget
            return True
        ended = self.lease.popup_storm() or st.loops.stuck  # a popup storm, or a run gone round in circles
        if ended is not None and st.outcome.finished is None:
            st.outcome.end("failed", ended)  # honest: the run says what happened (or what it tried)
            return True
        return st.outcome.should_stop(len(st.steps))


def _questioned_claim(
    run: RunState, browser: BrowserSession, step: PageStep, action: str, args: Mapping[str, Any]
) -> str | None:
    """A success claimed with a click the request asked for never made (agent/step/requested_clicks.py): refused
    once; on the last step, with no step left to make the click, the run ends failed saying so. A pilot's claim
    (a recipe's done) is the recording's, and is not questioned."""
    if action != "done" or not args.get("success") or run.pilot is not None:
        return None
    last = step.index >= run.agent.max_steps
    said = run.claims.judge(run.task, browser.last_snapshot, last)
    if said is not None and last:
        run.outcome.end("failed", said)
    return said


async def _admit_recorded_start(gate: RunGate, pilot: Pilot | None, start: str | None, browser: BrowserSession) -> None:
    """A replay's start URL that came from its recording, not from the user (``url=``), is judged as the model's
    ``go_to_url`` would be; a refusal raises :class:`StartUrlError` saying what to do."""
    if start and pilot is not None and not pilot.chosen:
        refusal = await gate.admit(start, url_of(browser))
        if refusal:
            raise StartUrlError(f"The replay's start URL {start} was not opened: {refusal}. {REPLAY_HINT}")


def _step_spec(tools: list[Tool], browser: BrowserSession | None, loops: LoopGuard, *, last: bool = False) -> ToolSpec:
    """The macro tool for this step: constrained decoding may only name this step's elements, and not those a
    refused move or an unfit form action names; on the ``last`` step, only done (the prompt is unchanged, so its
    cache holds)."""
    spec = macro_spec(tools)
    names = [t.name for t in tools]
    if last:
        return with_indices(spec, [], {name: None for name in names})
    snapshot = browser.last_snapshot if browser is not None else None
    if snapshot is not None:
        spec = with_indices(spec, snapshot.elements, _excluded(loops, snapshot.elements, names), snapshot.tables)
    return spec


def _unfilled(browser: BrowserSession, action: str, args: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The fields a click would submit empty although its form needs them (browser/page/actionable.py), as the loop
    guard reads elements, each with its line."""
    snapshot = browser.last_snapshot
    index = args.get("index")
    if action != "click_element_by_index" or snapshot is None or not isinstance(index, int):
        return []
    return [{**vars(e), "line": e.describe(80)} for e in unfilled(snapshot.elements, index)]


def _excluded(loops: LoopGuard, elements: dict[int, ElementInfo], actions: list[str]) -> dict[str, set[int] | None]:
    """What the decoding schema leaves out: moves the loop guard refused, elements a form action cannot act on
    (a button for input_text: browser/page/actionable.py), and, right after a rule that named fields to fill
    with the small profile's guide, everything but typing into them (and done)."""
    expected = loops.expected(elements)
    if expected is not None:
        return {
            name: None if name not in expected else set(elements) - expected[name] for name in actions if name != "done"
        }
    out = loops.exclusions(elements)
    for action, indices in unfit(elements.values()).items():
        current = out.get(action, set())
        if current is not None:
            out[action] = current | indices
    return out

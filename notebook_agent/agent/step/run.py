"""One page-agent run: the core loop's hooks, configured to drive a browser one action per step.

Each step the request is rebuilt as [system prompt, state message] (the transcript does not grow); the model
must call ``AgentOutput`` (forced, no parallel calls); the chosen inner action runs through the loop's own
pipeline (validation, ``before_tool_call`` with the approval gate, execute with the abort signal and progress
updates, ``after_tool_call``). Output that cannot be used is fed back as a short ``<sys>`` note on the next
step, never resent blindly; ``max_failures`` such failures in a row end the run.

A run is made of parts that own their state: this module keeps the step bookkeeping and the hooks, and turns
the loop's events into the page events of :mod:`.events` (the only ones that leave the run). The browser is
held by :class:`~.lease.RunBrowser`, the run file is written by :class:`~.recorder.Recorder` (a consumer of
those events), screenshots are taken by :class:`~.screenshots.StepScreenshots`, downloads are judged by
:class:`~.downloads.DownloadPolicy`. The page is read for each step by :mod:`.page_read`, the text the model
reads is built by :mod:`.state`, the output is parsed by :mod:`.macro`, and approval is decided by
:mod:`.approval`.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import time
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Protocol

from ...browser.page.actionable import unfilled, unfit
from ...browser.page.snapshot import ElementInfo, Snapshot
from ...browser.session.browser_session import BrowserSession
from ...browser.session.tracing import Trace, begin_group, start_trace, stop_trace
from ...browser.urls import navigation_target
from ...core.abort import AbortController, AbortedError, AbortSignal
from ...core.errors import error_message
from ...core.events import (
    AgentEvent,
)
from ...core.loop import AfterHook, AgentContext, BeforeToolCall, BlockToolCall, LoopConfig, run_agent_loop
from ...core.messages import AssistantMessage, ImageContent, Message, TextContent, ToolCall, Usage, UserMessage
from ...core.model import Model, StreamOptions, ToolSpec
from ...core.planner import ToolPlan
from ...core.text import map_strings
from ...core.tools import Tool
from ..prompt.agent_output import MACRO_NAME, ParsedOutput, macro_spec, parse_output, with_indices
from ..prompt.offers import called_for
from ..prompt.profiles import Profile
from ..prompt.state_message import (
    MEMORY_MAX,
    REFLECTION_MAX,
    Observer,
    cap,
    earlier_run_note,
    resume_url,
    state_message,
)
from ..prompt.system_prompt import prompt_hash
from ..runs.events import (
    ModelOutputParsed,
    PageEvent,
    RunFinished,
    StepStarted,
)
from ..runs.recorder import Recorder
from ..runs.result import PageAgentResult, PageStep, StepRequest
from ..runs.run_data import RunData
from ..safety.approval import Approver, PolicyFunction, PolicyName
from ..safety.domains import DomainPattern, navigation_refusal
from ..safety.downloads import DownloadPolicy
from ..safety.secrets import Redactor, SecretVault
from .ending import RunOutcome
from .event_bridge import LoopEvents
from .gatekeeper import RunGate, target_element
from .loop_guard import LoopGuard
from .page_read import page_for_step, read_start, url_of
from .pilot import Pilot, read_ahead
from .replay_pilot import REPLAY_HINT
from .requested_clicks import ClaimCheck
from .run_browser import RunBrowser, StartUrlError
from .screenshots import StepScreenshots
from .tool_context import tool_context_factory
from .typed_output import OutputSpec, with_typed_done

__all__ = ["PageRun", "RunSpec", "StartUrlError"]


class RunSpec(Protocol):
    """What a run reads from the agent that started it (``PageAgent`` provides it)."""

    model: Model
    own_tab: bool
    max_steps: int
    max_failures: int
    start_url: str | None
    vision: bool
    screenshots: bool
    full_page: bool
    trace: bool
    approval: PolicyName | PolicyFunction
    approver: Approver | None
    approval_timeout: float
    after_tool_call: AfterHook | None
    stream_options: StreamOptions
    last_result: PageAgentResult | None
    secrets: SecretVault
    custom_tools: dict[str, Tool | None]
    deps: Any
    allowed_domains: tuple[DomainPattern, ...]
    blocked_domains: tuple[DomainPattern, ...]
    output_spec: OutputSpec | None
    profile: Profile

    @property
    def full_system_prompt(self) -> str: ...

    def tools(
        self, browser: BrowserSession, task: str | None = None, *, data: bool | None = None, page: frozenset[str] = ...
    ) -> dict[str, Tool]: ...

    def settings(self) -> dict[str, Any]: ...


class PageRun:
    """The state of one run; its methods are the loop hooks. ``put`` receives every page event.

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
        self.agent = agent
        self.previous = previous
        self.pilot = pilot
        """In a replay: decides each step from the recorded run before the model is asked (see replay.py)."""
        self.start_read: Snapshot | Exception | None = None
        """Step 1's snapshot, read at the start to choose the tools by (page_read.py), until step 1 takes it."""
        self.task = task
        self.controller = controller
        self._put = put
        self.interactive = interactive
        self.steps: list[PageStep] = []
        self.history: list[PageStep | str] = [earlier_run_note(previous)] if previous is not None else []
        self.loops = LoopGuard.of(agent.profile)
        self.claims = ClaimCheck()
        self.redactor = Redactor(agent.secrets, lambda args: target_element(self.browser, args), task)
        self.observer = Observer(task=self.redactor.scrub_text(task), offer_done=agent.output_spec is None)
        self.outcome = RunOutcome(agent.max_steps, agent.max_failures)
        self.data = RunData(self.redactor.scrub_text)
        self.tools: dict[str, Tool] = {}
        self.browser: BrowserSession | None = None
        self.translator = LoopEvents(self)
        self.run_id = datetime.now().strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
        self.runs_dir = runs_dir
        self.trace: Trace | None = None
        self.trace_path: str | None = None
        self.recorder = Recorder(runs_dir, self.run_id, redact=self.redactor.scrub_text, screenshots=agent.screenshots)
        self.screenshots = StepScreenshots(self.put)
        self.downloads = DownloadPolicy(agent.approval, lambda: self.step.url if self.step is not None else "")
        self.gate = RunGate(
            agent,
            self.downloads,
            self.put,
            interactive=interactive,
            signal=controller.signal,
            step=lambda: self.step,
            browser=lambda: self.browser,
        )
        self.lease = RunBrowser(
            browser,
            own_tab=agent.own_tab,
            run_id=self.run_id,
            download_filter=self.downloads.refusal,
            navigation_guard=self.navigation_refusal if agent.allowed_domains or agent.blocked_domains else None,
            effect_judge=self.gate.judge_effect if self.gate.judges_effects else None,
            hidden_values=lambda: [*agent.secrets.values(), *self.redactor.hidden],
            secret_sites=agent.secrets.kept_from if agent.secrets else None,
        )

    @property
    def step(self) -> PageStep | None:
        return self.steps[-1] if self.steps else None

    def put(self, event: PageEvent) -> None:
        """Emit one page event: the run file records it, then the consumer gets it."""
        self.recorder.handle(event)
        self._put(event)

    # -- the run ---------------------------------------------------------------------------------------------
    async def execute(self) -> None:
        started = time.perf_counter()
        try:
            async with self.lease as browser:
                self.browser = browser
                try:
                    await self._drive(browser)
                finally:
                    self.gate.close()  # nothing stays held at the browser's door for a run that has ended
                    self.trace_path = await stop_trace(browser, self.trace, self.runs_dir, self.run_id)
                    with contextlib.suppress(Exception):  # the last step's screenshot, before the browser may close
                        await self.screenshots.collect()
        except asyncio.CancelledError:
            self.outcome.end("stopped", "The run was cancelled")
            raise
        except AbortedError as exc:
            self.outcome.end("stopped", exc.reason)
        except Exception as exc:
            self.outcome.end("error", error_message(exc))
        finally:
            result = self._result(time.perf_counter() - started)
            self.recorder.close(result)
            self.agent.last_result = result
            self._put(RunFinished(result))

    async def _drive(self, browser: BrowserSession) -> None:
        self.trace = await start_trace(browser, self.redactor.scrub_text(self.task)[:200]) if self.agent.trace else None
        start = self.agent.start_url
        if self.previous is not None:  # a follow-up goes on from where the earlier run left the page, never back
            start = resume_url(self.previous, url_of(browser))
        await _admit_recorded_start(self.gate, self.pilot, start, browser)
        if start:
            self.gate.trust(navigation_target(start))  # the user chose it (or the run being continued was there)
            await self.lease.open(start, self.controller.signal)
        # in threaded mode the browser-driving tools execute on the browser thread
        leaks = lambda text: self.redactor.scrub_text(text) != text  # noqa: E731
        first = await read_start(self)  # the start page, read once: for the tools, and then by step 1
        asked, data, page = await called_for(browser, self.task, self.agent.output_spec, first)
        spec = self.agent.output_spec
        tools = with_typed_done(
            self.agent.tools(browser, asked, data=data, page=page), spec, self.agent.custom_tools, self.data, leaks
        )
        self.tools = browser.bridge_tools(tools)
        self.recorder.start(self._result(0.0))
        context = AgentContext(
            system_prompt=self.agent.full_system_prompt, messages=[], tools=list(self.tools.values())
        )
        options = copy.copy(self.agent.stream_options)
        options.tool_choice = MACRO_NAME
        options.parallel_tool_calls = False
        config = LoopConfig(
            model=self.agent.model,
            tool_execution="sequential",
            stream_options=options,
            before_tool_call=self.before_tool_call,
            after_tool_call=self.agent.after_tool_call,
            transform_context=self.transform_context,
            tool_specs=self.tool_specs,
            extract_tool_calls=self.extract_tool_calls,
            get_follow_up_messages=self.follow_up,
            should_stop_after_turn=self.stop_after_turn,
            continue_on_error=lambda m: m.error_kind == "malformed",
            tool_context=tool_context_factory(browser, self.agent.secrets, self.agent.settings(), self.agent.deps),
        )
        messages = await run_agent_loop(
            [UserMessage(content=self.redactor.scrub_text(self.task))],
            context,
            config,
            self.controller.signal,
            self.on_loop_event,
        )
        signal = self.controller.signal
        self.outcome.settle(messages, len(self.steps), signal.reason if signal.aborted else None)

    def _result(self, duration: float) -> PageAgentResult:
        usage = Usage()
        for s in self.steps:
            usage.add(s.usage)
        return PageAgentResult(
            task=self.task,
            steps=self.steps,
            usage=usage,
            model=f"{self.agent.model.provider}:{self.agent.model.id}",
            duration_s=duration,
            prompt_version=prompt_hash(self.agent.full_system_prompt),
            run_id=self.run_id,
            settings=map_strings(self.agent.settings(), self.redactor.scrub_text),
            system_prompt=self.agent.full_system_prompt,
            trace_path=self.trace_path,
            output=self.data.output,
            output_type=self.agent.output_spec.name if self.agent.output_spec is not None else "",
            tables=self.data.tables,
            follows=self.previous.run_id if self.previous is not None else "",
            **self.outcome.verdict(),
        )

    # -- loop events become page events ---------------------------------------------------------------------
    async def on_loop_event(self, event: AgentEvent) -> None:
        """Translate the core loop's events into page events; the loop's own events stay inside the run."""
        await self.translator.handle(event)

    # -- loop hooks --------------------------------------------------------------------------------------------
    def tool_specs(self, plan: ToolPlan) -> list[ToolSpec]:
        visible = {t.name for t in plan.visible}
        # The same tools every step, the last one included (its note asks for done): a tool list that changes
        # between steps would throw away the provider's cached prompt. Where decoding is constrained, the last
        # step's decodes only done: an action there would run with no step left to report it, and a small model
        # copying its previous step then undoes what it did (MiniWoB++: a scored episode restarted).
        step = self.step
        last = step is not None and step.index >= self.agent.max_steps
        spec = _step_spec([t for n, t in self.tools.items() if n in visible], self.browser, self.loops, last=last)
        if step is not None and step.request is not None and step.replay != "replayed":  # a replayed step sent none
            step.request.tools = [{"name": spec.name, "description": spec.description, "parameters": spec.parameters}]
        return [spec]

    async def transform_context(self, context: AgentContext, signal: AbortSignal) -> list[Message]:
        assert self.browser is not None
        index = len(self.steps) + 1
        step = PageStep(index=index, started_at=time.time())
        self.steps.append(step)
        self.translator.partial = None
        self.put(StepStarted(index, self.agent.max_steps))
        if self.trace is not None:
            await begin_group(self.browser, self.trace, f"Step {index}")
        t0 = time.perf_counter()
        scrub = self.redactor.scrub_text
        page_text, read = await page_for_step(self, step)
        self.history.extend(step.observations)
        said = self.observer.outcome.line if read and self.observer.outcome is not None else None
        state = state_message(scrub(self.task), step, self.agent.max_steps, self.history, page_text, outcome=said)
        picture = await self.screenshots.for_model(self.browser) if self.agent.vision else None
        images = [picture] if picture is not None else []
        step.state_ms = (time.perf_counter() - t0) * 1000
        step.request = StepRequest(context.system_prompt or "", state, [], MACRO_NAME, images=len(images))
        self.translator.turn_started = time.perf_counter()
        content: list[TextContent | ImageContent] = [TextContent(text=state), *images]
        return [UserMessage(content=state if not images else content)]

    def extract_tool_calls(self, message: AssistantMessage) -> list[ToolCall]:
        step = self.step
        if step is None:
            return []
        step.model_ms = (time.perf_counter() - self.translator.turn_started) * 1000
        step.usage = message.usage
        step.output = message
        if message.stop_reason == "error" and message.error_kind == "malformed":
            # The provider could not even parse the call: feed it back like any other unusable output.
            return self._unusable(step, f"{message.error_message} Call AgentOutput again with valid JSON arguments.")
        if message.stop_reason in ("error", "aborted"):
            return []
        parsed: ParsedOutput = parse_output(message, self.tools)
        scrub = self.redactor.scrub_text
        step.evaluation_previous_goal = cap(scrub(parsed.evaluation_previous_goal), REFLECTION_MAX, "evaluation")
        step.memory = cap(scrub(parsed.memory), MEMORY_MAX, "memory")
        step.next_goal = cap(scrub(parsed.next_goal), REFLECTION_MAX, "next goal")
        step.repairs = parsed.repairs
        if parsed.call is None:
            return self._unusable(step, parsed.error or "The output had no usable action.")
        self.history.append(step)
        dropped = [r for r in parsed.repairs if "only the first" in r]
        if dropped:  # the rest never ran: say so where the model reads its history, not only in the view
            self.history.append(f"In step {step.index} you {dropped[0]}; the others did not run. One action per step.")
        self.outcome.usable()
        step.action, step.args = parsed.call.name, self.redactor.public_args(parsed.call.name, parsed.call.arguments)
        step.output = self.redactor.scrub_message(message)
        self.put(ModelOutputParsed(step))
        return [parsed.call]

    def _unusable(self, step: PageStep, error: str) -> list[ToolCall]:
        """Record an output that cannot run; the next state message tells the model why (max_failures)."""
        self.history.append(step)
        step.output_error = self.redactor.scrub_text(error)
        self.outcome.unusable(step.output_error)
        self.put(ModelOutputParsed(step))
        return []

    async def before_tool_call(self, ctx: BeforeToolCall, signal: AbortSignal) -> BlockToolCall | None:
        step = self.step
        browser = self.browser
        assert step is not None and browser is not None
        raw = ctx.args.model_dump() if hasattr(ctx.args, "model_dump") else dict(ctx.args)
        args = step.args = self.redactor.public_args(ctx.tool_call.name, raw)
        step.output = self.redactor.scrub_message(step.output)
        element = target_element(browser, args)
        name = ctx.tool_call.name
        unfilled = _unfilled(browser, name, args)
        futile = self.loops.refusal(name, args, element, step.index, browser.page.url, unfilled, step.next_goal)
        futile = futile or _questioned_claim(self, browser, step, name, args)
        if futile is not None:
            await self.screenshots.collect()
            return BlockToolCall(futile)
        target = await read_ahead(browser, self.pilot, args.get("index")) if element is not None else None
        try:
            await self.screenshots.collect()  # the previous step's picture is taken before this action changes the page
            decision = await self.gate.check(step, browser, self.tools, ctx, raw, args, signal)
            if step.approval is not None:  # a person (or a policy) was asked: find the element again after it
                await browser.drop_prefetch()
            if decision is None:
                self.loops.made(ctx.tool_call.name, args, element, step.index)
                self.claims.made(ctx.tool_call.name, element)
                found = await target if target is not None else None
                step.target = map_strings(found, self.redactor.scrub_text) if found else None
        finally:
            if target is not None and not target.done():
                target.cancel()
        return decision

    def navigation_refusal(self, url: str) -> str | None:
        return navigation_refusal(url, self.agent.allowed_domains, self.agent.blocked_domains)

    async def follow_up(self) -> list[Message]:
        """Keep going after an unusable output (the next state message carries the error)."""
        if self.outcome.may_retry(self.step, len(self.steps), self.controller.signal.aborted):
            return [UserMessage(content="(retry)")]
        return []

    async def stop_after_turn(self, message: AssistantMessage, results: list[Any], context: AgentContext) -> bool:
        stuck = self.loops.stuck
        if stuck is not None and self.outcome.finished is None:
            self.outcome.end("failed", stuck)  # honest: the run went round in circles, and says what it tried
            return True
        return self.outcome.should_stop(len(self.steps))


def _questioned_claim(
    run: PageRun, browser: BrowserSession, step: PageStep, action: str, args: Mapping[str, Any]
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
    """The fields a click would submit empty although its form needs them (browser/affordances.py), as the loop
    guard reads elements, each with its line."""
    snapshot = browser.last_snapshot
    index = args.get("index")
    if action != "click_element_by_index" or snapshot is None or not isinstance(index, int):
        return []
    return [{**vars(e), "line": e.describe(80)} for e in unfilled(snapshot.elements, index)]


def _excluded(loops: LoopGuard, elements: dict[int, ElementInfo], actions: list[str]) -> dict[str, set[int] | None]:
    """What the decoding schema leaves out: moves the loop guard refused, elements a form action cannot act on
    (a button for input_text: browser/affordances.py), and, right after a caution that named fields to fill
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

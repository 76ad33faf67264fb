"""One page-agent run: the core loop's hooks, configured to drive a browser one action per step.

Each step the request is rebuilt as [system prompt, state message] (the transcript does not grow); the model
must call ``AgentOutput`` (forced, no parallel calls); the chosen inner action runs through the loop's own
pipeline (validation, ``before_tool_call`` with the approval gate, execute with the abort signal and progress
updates, ``after_tool_call``). Output that cannot be used is fed back as a short ``<sys>`` note on the next
step, never resent blindly; ``max_failures`` such failures in a row end the run.

This module keeps the run's bookkeeping and turns loop events into step events. The text the model reads is
built by :mod:`.state`, the output is parsed by :mod:`.macro`, and approval is decided by :mod:`.approval`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import dataclasses
import time
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any, Protocol
from urllib.parse import urlsplit

from ..browser.session import BrowserBusyError, BrowserSession
from ..browser.urls import URLError, navigation_target
from ..core.abort import AbortController, AbortedError, AbortSignal
from ..core.events import AgentEvent, ToolExecutionEnd, ToolExecutionStart, ToolExecutionUpdate, TurnEnd, TurnStart
from ..core.loop import AfterHook, AgentContext, BeforeToolCall, BlockToolCall, LoopConfig, run_agent_loop
from ..core.messages import AssistantMessage, ImageContent, Message, TextContent, ToolCall, Usage, UserMessage
from ..core.model import Model, StreamOptions, ToolSpec
from ..core.planner import ToolPlan
from ..core.tools import Tool
from .approval import ApprovalAnswer, ApprovalRequest, Approver, PolicyFunction, PolicyName, denial_text, gate
from .effects import describe_effects, navigation_refusal
from .macro import MACRO_NAME, ParsedOutput, macro_spec, parse_output
from .prompt import prompt_hash
from .results import (
    ActionFinished,
    ActionProgress,
    ActionStarted,
    AnyEvent,
    ApprovalAnswered,
    ApprovalRequested,
    ModelOutputParsed,
    PageAgentResult,
    PageStep,
    RunFinished,
    ScreenshotTaken,
    Status,
    StepRequest,
    StepStarted,
)
from .runs import RunWriter, run_closing, run_head
from .secrets import DomainPattern, Redactor, SecretVault
from .state import MEMORY_MAX, REFLECTION_MAX, Observer, cap, format_args, futile_repeat, state_message

#: How long after a person approves an action that downloads its download is kept (it may start late).
DOWNLOAD_GRACE_S = 30.0


class StartUrlError(Exception):
    """The start URL could not be opened (the message says why, for the user)."""


class RunSpec(Protocol):
    """What a run reads from the agent that started it (``PageAgent`` provides it)."""

    model: Model
    browser: BrowserSession | None
    own_tab: bool
    max_steps: int
    max_failures: int
    start_url: str | None
    vision: bool
    screenshots: bool
    full_page: bool
    approval: PolicyName | PolicyFunction
    approver: Approver | None
    approval_timeout: float
    after_tool_call: AfterHook | None
    stream_options: StreamOptions
    last_result: PageAgentResult | None
    secrets: SecretVault
    custom_tools: dict[str, Tool | None]
    allowed_domains: tuple[DomainPattern, ...]
    blocked_domains: tuple[DomainPattern, ...]
    runs_dir: str | None

    @property
    def full_system_prompt(self) -> str: ...

    def tools(self, browser: BrowserSession) -> dict[str, Tool]: ...

    def settings(self) -> dict[str, Any]: ...


class PageRun:
    """The state of one run; its methods are the loop hooks. ``put`` receives every event, then None."""

    def __init__(
        self, agent: RunSpec, task: str, controller: AbortController, put: Callable[[AnyEvent | None], None]
    ) -> None:
        self.agent = agent
        self.task = task
        self.controller = controller
        self.put = put
        self.steps: list[PageStep] = []
        self.history: list[PageStep | str] = []
        self.observer = Observer()
        self.redactor = Redactor(agent.secrets, self._target)
        self.failures = 0
        self.last_output_error: str | None = None
        self.done: tuple[bool, str] | None = None
        self.status: Status | None = None
        self.error: str | None = None
        self.tools: dict[str, Tool] = {}
        self.browser: BrowserSession | None = None
        self._turn_started = 0.0
        self._action_started = 0.0
        self._shot: asyncio.Task[bytes | None] | None = None  # the view's screenshot, taken off the critical path
        self.run_id = datetime.now().strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
        self.writer = RunWriter(agent.runs_dir, self.run_id) if agent.runs_dir else None
        self.save_error: str | None = None
        self._acting: str | None = None
        """The action now running (or last run), as :meth:`_action_key` names it."""
        self._download_sources: set[str] = set()
        """Actions after which the page started a download the policy cancelled: asked about next time."""
        self._downloads_until = 0.0
        """Until when (monotonic) downloads are kept: set when a person approved an action that downloads."""

    @property
    def step(self) -> PageStep | None:
        return self.steps[-1] if self.steps else None

    # -- the run ---------------------------------------------------------------------------------------------
    async def execute(self) -> None:
        started = time.perf_counter()
        own_browser = self.agent.browser is None
        popups: frozenset[Any] = frozenset()
        previous_filter: Callable[[str, str], str | None] | None = None
        claim = contextlib.ExitStack()
        try:
            if own_browser:
                self.browser = BrowserSession()
                await self.browser.start()
            elif self.agent.own_tab:  # a tab of its own in the given browser (closed when the run ends)
                own_browser = True
                assert self.agent.browser is not None
                self.browser = await self.agent.browser.tab_session()
            else:
                self.browser = self.agent.browser
                assert self.browser is not None
                claim.enter_context(self.browser.claim(self.run_id))
            assert self.browser is not None
            await self.browser.start()
            popups = self.browser.popup_mark
            previous_filter = self.browser.download_filter
            self.browser.download_filter = self._download_refusal
            if self.agent.allowed_domains or self.agent.blocked_domains:
                await self.browser.set_navigation_guard(self.navigation_refusal)
            if self.agent.start_url:
                refusal = self.navigation_refusal(navigation_target(self.agent.start_url))
                if refusal:
                    raise StartUrlError(f"The start URL is not allowed: {refusal}")
                await self._open_start_url(self.browser, self.agent.start_url)
            # in threaded mode the browser-driving tools execute on the browser thread
            self.tools = self.browser.bridge_tools(self.agent.tools(self.browser))
            self._record(lambda w: w.start(run_head(self._result(0.0)), self.agent.full_system_prompt))
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
            )
            messages = await run_agent_loop(
                [UserMessage(content=self.task)], context, config, self.controller.signal, self.emit
            )
            self._settle_status(messages)
        except asyncio.CancelledError:
            self.status, self.error = "stopped", "The run was cancelled"
            raise
        except AbortedError as exc:
            self.status, self.error = "stopped", exc.reason
        except (StartUrlError, BrowserBusyError, URLError) as exc:
            self.status, self.error = "error", str(exc)
        except Exception as exc:
            self.status, self.error = "error", f"{type(exc).__name__}: {exc}"
        finally:
            with contextlib.suppress(Exception):  # the last step's screenshot, before the browser may close
                await self._await_screenshot()
            holding = self.browser is not None and (own_browser or self.browser.owner == self.run_id)
            if holding and self.browser is not None and not own_browser and popups:
                try:  # a run's popups do not outlive it (its own browser closes anyway)
                    await asyncio.wait_for(self.browser.close_popups(popups), 10)
                except Exception:
                    pass
            if holding and self.browser is not None:
                self.browser.download_filter = previous_filter
            guarded = self.agent.allowed_domains or self.agent.blocked_domains
            if holding and self.browser is not None and guarded:
                try:
                    await self.browser.set_navigation_guard(None)
                except Exception:
                    pass
            if own_browser and self.browser is not None:
                try:
                    await self.browser.close()
                except Exception:
                    pass
            result = self._result(time.perf_counter() - started)
            for step in self.steps[self.writer.written if self.writer else 0 :]:
                self._record(lambda w, s=step: w.step(s))  # type: ignore[misc]
            self._record(lambda w: w.end(run_closing(result)))
            if self.save_error:
                result.error = f"{result.error + ' ' if result.error else ''}{self.save_error}"
            claim.close()
            self.agent.last_result = result
            self.put(RunFinished(result))
            self.put(None)

    async def _open_start_url(self, browser: BrowserSession, url: str) -> None:
        """Open the start URL like ``go_to_url`` does: through the tab-recovery path (a closed tab or browser
        is replaced first), waiting for the document rather than every subresource (one hanging tracker
        pixel must not cost 30 s), bounded by the navigation timeout, and stopped by Stop."""
        try:
            await self.controller.signal.race(browser.open(url))
        except URLError as exc:
            raise StartUrlError(str(exc)) from None  # already a sentence naming the URL

    def _record(self, write: Callable[[RunWriter], None]) -> None:
        """Write to the run file; a disk problem is reported once on the result, never ends the run."""
        if self.writer is None or self.save_error is not None:
            return
        try:
            write(self.writer)
        except OSError as exc:
            self.save_error = f"The run could not be saved to {self.writer.folder}: {exc}"

    def _settle_status(self, messages: list[Message]) -> None:
        last = next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)
        if self.status is not None:
            return
        if self.controller.signal.aborted:
            self.status, self.error = "stopped", self.controller.signal.reason
        elif self.done is not None:
            self.status = "completed" if self.done[0] else "failed"
        elif last is not None and last.stop_reason == "error" and last.error_kind != "malformed":
            self.status, self.error = "error", last.error_message
        elif len(self.steps) >= self.agent.max_steps:
            self.status = "max_steps"
            self.error = f"Stopped after {self.agent.max_steps} steps without finishing (max_steps)."
        else:
            self.status, self.error = "error", "The run ended without a done action."

    def _result(self, duration: float) -> PageAgentResult:
        usage = Usage()
        for s in self.steps:
            usage.add(s.usage)
        status: Status = self.status or "error"
        success = bool(self.done and self.done[0]) and status == "completed"
        text = self.done[1] if self.done else (self.error or "")
        return PageAgentResult(
            task=self.task,
            status=status,
            success=success,
            text=text,
            steps=self.steps,
            usage=usage,
            model=f"{self.agent.model.provider}:{self.agent.model.id}",
            duration_s=duration,
            prompt_version=prompt_hash(self.agent.full_system_prompt),
            error=self.error if status != "completed" else None,
            run_id=self.run_id,
            settings=self.agent.settings(),
            system_prompt=self.agent.full_system_prompt,
        )

    # -- event plumbing --------------------------------------------------------------------------------------
    async def emit(self, event: AgentEvent) -> None:
        """Forward loop events and derive the step-level ones from them."""
        step = self.step
        if isinstance(event, TurnStart):
            self._turn_started = time.perf_counter()
        elif isinstance(event, ToolExecutionStart) and step is not None:
            self._action_started = time.perf_counter()
            args = self.redactor.public_args(event.tool_name, event.args)
            self.put(dataclasses.replace(event, args=args))
            self.put(ActionStarted(step, event.tool_name, args))
            return
        elif isinstance(event, ToolExecutionUpdate) and step is not None:
            self.put(dataclasses.replace(event, args=self.redactor.public_args(event.tool_name, event.args)))
            self.put(ActionProgress(step, event.tool_name, event.partial_result))
            return
        elif isinstance(event, ToolExecutionEnd) and step is not None:
            self._record_action_end(step, event)
            self.put(event)
            self.put(ActionFinished(step))
            return
        elif isinstance(event, TurnEnd) and step is not None:
            self.put(event)
            await self._await_screenshot()  # keep one in flight, in step order
            pending = self.agent.screenshots and self.browser is not None
            self._record(lambda w: w.step(step, screenshot_pending=pending))
            if self.agent.screenshots and self.browser is not None:
                self._shot = asyncio.create_task(self._screenshot(step))
            return
        self.put(event)

    def _record_action_end(self, step: PageStep, event: ToolExecutionEnd) -> None:
        step.action_ms = (time.perf_counter() - self._action_started) * 1000
        step.result = self.redactor.scrub_text(event.result.text_content)
        step.is_error = event.is_error
        if event.error_kind == "argument-validation":
            self.failures += 1
            self.last_output_error = step.result
        else:
            self.failures = 0
        self.observer.action_finished(event.tool_name, step.args, event.is_error)
        if event.tool_name == "done" and not event.is_error:
            args = step.args
            self.done = (bool(args.get("success", True)), str(args.get("text", "")))

    async def _screenshot(self, step: PageStep) -> bytes | None:
        """The view's picture of the page after ``step``'s action. It runs as a task started at the end of
        the turn, overlapping the next snapshot and the model call (so ScreenshotTaken may come a little
        after the next StepStarted); :meth:`_await_screenshot` collects it before the next action runs, so it
        never shows a later page."""
        if self.browser is None:
            return None
        t0 = time.perf_counter()
        try:
            data = await self.browser.screenshot(format="jpeg")
        except Exception:
            return None
        step.screenshot_ms = (time.perf_counter() - t0) * 1000
        step.screenshot, step.screenshot_mime = data, "image/jpeg"
        self._record(lambda w: w.screenshot(step))
        self.put(ScreenshotTaken(step, data, "image/jpeg"))
        return data

    async def _await_screenshot(self) -> bytes | None:
        """Wait for the screenshot in flight, if any; its bytes (None if there was none or it failed)."""
        task, self._shot = self._shot, None
        return await task if task is not None else None

    # -- loop hooks --------------------------------------------------------------------------------------------
    def tool_specs(self, plan: ToolPlan) -> list[ToolSpec]:
        visible = {t.name for t in plan.visible}
        # The same tools every step, the last one included (its note asks for done): a tool list that changes
        # between steps would throw away the provider's cached prompt.
        ordered = [t for n, t in self.tools.items() if n in visible]
        step = self.step
        spec = macro_spec(ordered)
        if step is not None and step.request is not None:
            step.request.tools = [{"name": spec.name, "description": spec.description, "parameters": spec.parameters}]
        return [spec]

    async def transform_context(self, context: AgentContext, signal: AbortSignal) -> list[Message]:
        assert self.browser is not None
        index = len(self.steps) + 1
        step = PageStep(index=index, started_at=time.time())
        self.steps.append(step)
        self.put(StepStarted(index, self.agent.max_steps))
        t0 = time.perf_counter()
        snapshot = await self.browser.snapshot(full_page=self.agent.full_page)
        page_text = self.redactor.scrub_text(snapshot.text)
        step.url, step.title = snapshot.url, snapshot.title
        step.observations = self.observer.observe(
            step, self.steps, page_text, self.agent.max_steps, self.last_output_error
        )
        self.history.extend(step.observations)
        state = state_message(self.task, step, self.agent.max_steps, self.history, page_text)
        images: list[ImageContent] = []
        if self.agent.vision:
            # the view's screenshot of the previous step shows this same page: one picture serves both
            shot = await self._await_screenshot() or await self.browser.screenshot(format="jpeg")
            images.append(ImageContent(data=base64.b64encode(shot).decode("ascii"), mime_type="image/jpeg"))
        step.state_ms = (time.perf_counter() - t0) * 1000
        step.request = StepRequest(
            system_prompt=context.system_prompt or "",
            state=state,
            tools=[],
            tool_choice=MACRO_NAME,
            images=len(images),
        )
        self._turn_started = time.perf_counter()
        content: list[TextContent | ImageContent] = [TextContent(text=state), *images]
        return [UserMessage(content=state if not images else content)]

    def extract_tool_calls(self, message: AssistantMessage) -> list[ToolCall]:
        step = self.step
        if step is None:
            return []
        step.model_ms = (time.perf_counter() - self._turn_started) * 1000
        step.usage = message.usage
        step.output = message
        if message.stop_reason == "error" and message.error_kind == "malformed":
            # The provider could not even parse the call: feed it back like any other unusable output.
            return self._unusable(step, f"{message.error_message} Call AgentOutput again with valid JSON arguments.")
        if message.stop_reason in ("error", "aborted"):
            return []
        parsed: ParsedOutput = parse_output(message, self.tools)
        step.evaluation_previous_goal = cap(parsed.evaluation_previous_goal, REFLECTION_MAX, "evaluation")
        step.memory = cap(parsed.memory, MEMORY_MAX, "memory")
        step.next_goal = cap(parsed.next_goal, REFLECTION_MAX, "next goal")
        step.repairs = parsed.repairs
        if parsed.call is None:
            return self._unusable(step, parsed.error or "The output had no usable action.")
        self.history.append(step)
        self.last_output_error = None
        step.action, step.args = parsed.call.name, self.redactor.public_args(parsed.call.name, parsed.call.arguments)
        step.output = self.redactor.scrub_message(message)
        self.put(ModelOutputParsed(step))
        return [parsed.call]

    def _unusable(self, step: PageStep, error: str) -> list[ToolCall]:
        """Record an output that cannot run; the next state message tells the model why (max_failures)."""
        self.history.append(step)
        step.output_error = self.redactor.scrub_text(error)
        self.failures += 1
        self.last_output_error = step.output_error
        self.put(ModelOutputParsed(step))
        return []

    async def before_tool_call(self, ctx: BeforeToolCall, signal: AbortSignal) -> BlockToolCall | None:
        step = self.step
        assert step is not None and self.browser is not None
        await self._await_screenshot()  # the previous step's picture is taken before this action changes the page
        raw = ctx.args.model_dump() if hasattr(ctx.args, "model_dump") else dict(ctx.args)
        args = step.args = self.redactor.public_args(ctx.tool_call.name, raw)
        step.output = self.redactor.scrub_message(step.output)
        futile = futile_repeat(ctx.tool_call.name, args, self.steps[:-1], self.observer.unchanged_steps)
        if futile is not None:
            return BlockToolCall(futile)
        request = ApprovalRequest(ctx.tool_call.name, args, step.url, self._target(raw), step=step.index)
        await describe_effects(
            request,
            raw,
            ctx.args,
            browser=self.browser,
            tools=self.tools,
            agent_domains=self.agent.allowed_domains,
            custom=self.agent.custom_tools.get(request.action) is not None,
        )
        key = self._action_key(request)
        request.downloads = self._downloads_of(request, key)
        answer: ApprovalAnswer | None = await gate(
            self.agent.approval,
            request,
            approver=self.agent.approver,
            timeout=self.agent.approval_timeout,
            signal=signal,
            on_ask=lambda: self.put(ApprovalRequested(step, request)),
        )
        self._acting = key
        if answer is None:
            return None
        if answer.approved and request.downloads:
            self._downloads_until = time.monotonic() + DOWNLOAD_GRACE_S
        step.approval = {
            "decision": "approved" if answer.approved else "denied",
            "reason": answer.reason,
            "by": answer.by,
            "risk": request.reason,
        }
        self.put(ApprovalAnswered(step, request, answer))
        return None if answer.approved else BlockToolCall(denial_text(answer))

    @staticmethod
    def _action_key(request: ApprovalRequest) -> str:
        """An action on this page, named by what it acts on rather than by index (indices change)."""
        what = (request.element or {}).get("line") or format_args(request.args)
        return f"{request.url}\n{request.action}\n{what}"

    def _downloads_of(self, request: ApprovalRequest, key: str) -> str | None:
        attrs = (request.element or {}).get("attributes") or {}
        if "download" in attrs:
            name = attrs["download"] or PurePosixPath(urlsplit(attrs.get("href", "")).path).name
            return f"a file ({name})" if name else "a file"
        if key in self._download_sources:
            return "a file (the page started a download the last time this was done)"
        return None

    def _download_refusal(self, name: str, url: str) -> str | None:
        """The run's answer to a download the page started: None keeps it, a sentence cancels it. Under
        ``auto`` every download is kept; under the other policies only those a person approved (the action
        that caused one is remembered, so doing it again asks first); a policy function decides itself."""
        policy = self.agent.approval
        page = self.step.url if self.step is not None else ""
        if callable(policy):
            request = ApprovalRequest("download", {"file": name, "url": url}, page, reason=f"downloads {name}")
            return None if policy(request) == "allow" else "the approval policy did not allow it."
        if policy == "auto" or time.monotonic() < self._downloads_until:
            return None
        if self._acting is not None:
            self._download_sources.add(self._acting)
        if policy == "deny-risky":
            return "downloads are refused under the approval policy deny-risky."
        return (
            f"no approved action asked for a download (approval policy {policy}). If the task needs the file, do "
            "the same action again: the user will be asked first."
        )

    def _target(self, args: Mapping[str, Any]) -> dict[str, Any] | None:
        """The element an action names by index, as the approval policy sees it."""
        if args.get("index") is None or self.browser is None:
            return None
        info = self.browser.element(int(args["index"]))
        if info is None:
            return None
        return {
            "tag": info.tag,
            "text": info.text,
            "attributes": dict(info.attributes),
            "box": info.box,
            "line": info.line,
            "sensitive": info.sensitive,
        }

    def navigation_refusal(self, url: str) -> str | None:
        return navigation_refusal(url, self.agent.allowed_domains, self.agent.blocked_domains)

    async def follow_up(self) -> list[Message]:
        """Keep going after an unusable output (the next state message carries the error)."""
        step = self.step
        if (
            step is not None
            and step.action is None
            and step.output_error is not None
            and self.failures < self.agent.max_failures
            and len(self.steps) < self.agent.max_steps
            and not self.controller.signal.aborted
        ):
            return [UserMessage(content="(retry)")]
        return []

    async def stop_after_turn(self, message: AssistantMessage, results: list[Any], context: AgentContext) -> bool:
        if self.done is not None:
            return True
        if self.failures >= self.agent.max_failures:
            self.status = "failed"
            self.error = (
                f"The model produced {self.failures} unusable outputs in a row (max_failures="
                f"{self.agent.max_failures}). Last problem: {self.last_output_error}"
            )
            return True
        return len(self.steps) >= self.agent.max_steps

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
import copy
import time
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Protocol

from ..browser.session import BrowserSession
from ..browser.urls import URLError
from ..core.abort import AbortController, AbortSignal
from ..core.events import AgentEvent, ToolExecutionEnd, ToolExecutionStart, ToolExecutionUpdate, TurnEnd, TurnStart
from ..core.loop import AfterHook, AgentContext, BeforeToolCall, BlockToolCall, LoopConfig, run_agent_loop
from ..core.messages import AssistantMessage, ImageContent, Message, TextContent, ToolCall, Usage, UserMessage
from ..core.model import Model, StreamOptions, ToolSpec
from ..core.planner import ToolPlan
from ..core.tools import Tool
from .approval import ApprovalAnswer, ApprovalRequest, Approver, PolicyFunction, PolicyName, denial_text, gate
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
from .state import Observer, state_message


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
        self.failures = 0
        self.last_output_error: str | None = None
        self.done: tuple[bool, str] | None = None
        self.status: Status | None = None
        self.error: str | None = None
        self.tools: dict[str, Tool] = {}
        self.browser: BrowserSession | None = None
        self._turn_started = 0.0
        self._action_started = 0.0
        self.run_id = datetime.now().strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]

    @property
    def step(self) -> PageStep | None:
        return self.steps[-1] if self.steps else None

    # -- the run ---------------------------------------------------------------------------------------------
    async def execute(self) -> None:
        started = time.perf_counter()
        own_browser = self.agent.browser is None
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
            if self.agent.start_url:
                await self.browser.open(self.agent.start_url)
            self.tools = self.agent.tools(self.browser)
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
            )
            messages = await run_agent_loop(
                [UserMessage(content=self.task)], context, config, self.controller.signal, self.emit
            )
            self._settle_status(messages)
        except asyncio.CancelledError:
            self.status, self.error = "stopped", "The run was cancelled"
            raise
        except URLError as exc:  # the start URL: already a sentence for the person
            self.status, self.error = "error", str(exc)
        except Exception as exc:
            self.status, self.error = "error", f"{type(exc).__name__}: {exc}"
        finally:
            if own_browser and self.browser is not None:
                try:
                    await self.browser.close()
                except Exception:
                    pass
            result = self._result(time.perf_counter() - started)
            self.agent.last_result = result
            self.put(RunFinished(result))
            self.put(None)

    def _settle_status(self, messages: list[Message]) -> None:
        last = next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)
        if self.status is not None:
            return
        if self.controller.signal.aborted:
            self.status, self.error = "stopped", self.controller.signal.reason
        elif self.done is not None:
            self.status = "completed" if self.done[0] else "failed"
        elif last is not None and last.stop_reason == "error":
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
            self.put(event)
            self.put(ActionStarted(step, event.tool_name, dict(event.args)))
            return
        elif isinstance(event, ToolExecutionUpdate) and step is not None:
            self.put(event)
            self.put(ActionProgress(step, event.tool_name, event.partial_result))
            return
        elif isinstance(event, ToolExecutionEnd) and step is not None:
            self._record_action_end(step, event)
            self.put(event)
            self.put(ActionFinished(step))
            return
        elif isinstance(event, TurnEnd) and step is not None:
            self.put(event)
            await self._screenshot(step)
            return
        self.put(event)

    def _record_action_end(self, step: PageStep, event: ToolExecutionEnd) -> None:
        step.action_ms = (time.perf_counter() - self._action_started) * 1000
        step.result = event.result.text_content
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

    async def _screenshot(self, step: PageStep) -> None:
        if not self.agent.screenshots or self.browser is None:
            return
        t0 = time.perf_counter()
        try:
            data = await self.browser.screenshot(format="jpeg")
        except Exception:
            return
        step.screenshot_ms = (time.perf_counter() - t0) * 1000
        step.screenshot, step.screenshot_mime = data, "image/jpeg"
        self.put(ScreenshotTaken(step, data, "image/jpeg"))

    # -- loop hooks --------------------------------------------------------------------------------------------
    def tool_specs(self, plan: ToolPlan) -> list[ToolSpec]:
        visible = {t.name for t in plan.visible}
        ordered = [t for n, t in self.tools.items() if n in visible]
        step = self.step
        if step is not None and step.index >= self.agent.max_steps and "done" in self.tools:
            ordered = [self.tools["done"]]  # the last step can only finish
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
        step.url, step.title = snapshot.url, snapshot.title
        step.observations = self.observer.observe(
            step, self.steps, snapshot.text, self.agent.max_steps, self.last_output_error
        )
        self.history.extend(step.observations)
        state = state_message(self.task, step, self.agent.max_steps, self.history, snapshot.text)
        images: list[ImageContent] = []
        if self.agent.vision:
            shot = await self.browser.screenshot(format="jpeg")
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
        if message.stop_reason in ("error", "aborted"):
            return []
        parsed: ParsedOutput = parse_output(message, self.tools)
        step.evaluation_previous_goal = parsed.evaluation_previous_goal
        step.memory = parsed.memory
        step.next_goal = parsed.next_goal
        step.repairs = parsed.repairs
        self.history.append(step)
        if parsed.call is None:
            step.output_error = parsed.error
            self.failures += 1
            self.last_output_error = parsed.error
            self.put(ModelOutputParsed(step))
            return []
        self.last_output_error = None
        step.action, step.args = parsed.call.name, dict(parsed.call.arguments)
        self.put(ModelOutputParsed(step))
        return [parsed.call]

    async def before_tool_call(self, ctx: BeforeToolCall, signal: AbortSignal) -> BlockToolCall | None:
        step = self.step
        assert step is not None and self.browser is not None
        args = ctx.args.model_dump() if hasattr(ctx.args, "model_dump") else dict(ctx.args)
        step.args = args
        request = ApprovalRequest(ctx.tool_call.name, args, step.url, self._target(args), step=step.index)
        answer: ApprovalAnswer | None = await gate(
            self.agent.approval,
            request,
            approver=self.agent.approver,
            timeout=self.agent.approval_timeout,
            signal=signal,
            on_ask=lambda: self.put(ApprovalRequested(step, request)),
        )
        if answer is None:
            return None
        step.approval = {
            "decision": "approved" if answer.approved else "denied",
            "reason": answer.reason,
            "by": answer.by,
            "risk": request.reason,
        }
        self.put(ApprovalAnswered(step, request, answer))
        return None if answer.approved else BlockToolCall(denial_text(answer))

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
        }

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

"""The page agent: the core loop configured to drive a browser one action per step.

Each step the request is rebuilt as [system prompt, state message] (the transcript does not grow); the model
must call ``AgentOutput`` (forced, no parallel calls); the chosen inner action runs through the loop's own
pipeline (validation, ``before_tool_call`` with the approval policy, execute with the abort signal and progress
updates, ``after_tool_call``). Output that cannot be repaired is fed back as a short ``<sys>`` note on the next
step, never resent blindly; ``max_failures`` such failures in a row end the run.

``PageAgent.stream`` yields the loop's events plus step-level events for views; ``PageAgent.run`` returns a
:class:`PageAgentResult`.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import hashlib
import json
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from importlib import resources
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from ..core.abort import AbortController, AbortSignal
from ..core.agent import AgentBusyError
from ..core.events import AgentEvent, ToolExecutionEnd, ToolExecutionStart, ToolExecutionUpdate, TurnEnd, TurnStart
from ..core.loop import (
    AfterHook,
    AgentContext,
    BeforeToolCall,
    BlockToolCall,
    LoopConfig,
    run_agent_loop,
)
from ..core.messages import AssistantMessage, ImageContent, Message, TextContent, ToolCall, Usage, UserMessage
from ..core.model import Model, StreamOptions, ToolSpec
from ..core.planner import ToolPlan
from ..core.tools import Tool
from .approval import (
    ApprovalAnswer,
    ApprovalRequest,
    Approver,
    PolicyFunction,
    PolicyName,
    check_policy,
    decide,
)
from .macro import MACRO_NAME, ParsedOutput, macro_spec, parse_output

if TYPE_CHECKING:
    from .session import BrowserSession

Status: TypeAlias = Literal["running", "completed", "failed", "max_steps", "stopped", "error"]
AskUser: TypeAlias = Callable[[str, AbortSignal], Awaitable[str]]

_HISTORY_RESULT_CHARS = 600


def default_system_prompt() -> str:
    """The packaged system prompt (``browser/prompts/system_prompt.md``), for reading or editing."""
    return resources.files(__package__).joinpath("prompts/system_prompt.md").read_text(encoding="utf-8")


def prompt_hash(text: str) -> str:
    """Content hash that names a prompt version (runs record which one they used)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


# -- results ------------------------------------------------------------------------------------------------
@dataclass
class StepRequest:
    """Exactly what the model was sent in one step (for the inspector)."""

    system_prompt: str
    state: str
    tools: list[dict[str, Any]]
    tool_choice: str | None
    images: int = 0


@dataclass
class PageStep:
    """One model call and the action it chose."""

    index: int
    evaluation_previous_goal: str = ""
    memory: str = ""
    next_goal: str = ""
    action: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    result: str = ""
    is_error: bool = False
    output_error: str | None = None
    """Why the model's output could not be used (then ``action`` is None)."""
    repairs: list[str] = field(default_factory=list)
    observations: list[str] = field(default_factory=list)
    url: str = ""
    title: str = ""
    started_at: float = 0.0
    state_ms: float = 0.0
    model_ms: float = 0.0
    action_ms: float = 0.0
    screenshot_ms: float = 0.0
    usage: Usage = field(default_factory=Usage)
    screenshot: bytes | None = field(default=None, repr=False)
    screenshot_mime: str = "image/jpeg"
    screenshot_ref: str | None = None
    """File name of the saved screenshot, when the run was saved."""
    approval: dict[str, Any] | None = None
    request: StepRequest | None = field(default=None, repr=False)
    output: AssistantMessage | None = field(default=None, repr=False)
    """The model's raw response (kept for replay and the inspector)."""


@dataclass
class PageAgentResult:
    task: str
    status: Status
    success: bool
    text: str
    steps: list[PageStep]
    usage: Usage
    model: str
    duration_s: float
    prompt_version: str
    error: str | None = None
    run_id: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    system_prompt: str = field(default="", repr=False)

    def replay_model(self) -> Model:
        """A model that answers with this run's recorded outputs, in order (no API key needed)."""
        from ..llm.scripted import ScriptedModel

        return ScriptedModel.from_messages(
            [s.output for s in self.steps if s.output is not None], id=f"replay:{self.model}"
        )


# -- step-level events ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StepStarted:
    step: int
    max_steps: int
    type: Literal["step_started"] = "step_started"


@dataclass(frozen=True)
class ModelOutputParsed:
    step: PageStep
    type: Literal["model_output"] = "model_output"


@dataclass(frozen=True)
class ActionStarted:
    step: PageStep
    action: str
    args: dict[str, Any]
    type: Literal["action_started"] = "action_started"


@dataclass(frozen=True)
class ActionProgress:
    step: PageStep
    action: str
    progress: Any
    type: Literal["action_progress"] = "action_progress"


@dataclass(frozen=True)
class ActionFinished:
    step: PageStep
    type: Literal["action_finished"] = "action_finished"


@dataclass(frozen=True)
class ScreenshotTaken:
    step: PageStep
    data: bytes = field(repr=False)
    mime_type: str = "image/jpeg"
    type: Literal["screenshot"] = "screenshot"


@dataclass(frozen=True)
class ApprovalRequested:
    step: PageStep
    request: ApprovalRequest
    type: Literal["approval_requested"] = "approval_requested"


@dataclass(frozen=True)
class ApprovalAnswered:
    step: PageStep
    request: ApprovalRequest
    answer: ApprovalAnswer
    type: Literal["approval_answered"] = "approval_answered"


@dataclass(frozen=True)
class RunFinished:
    result: PageAgentResult
    type: Literal["run_finished"] = "run_finished"


PageEvent: TypeAlias = (
    StepStarted
    | ModelOutputParsed
    | ActionStarted
    | ActionProgress
    | ActionFinished
    | ScreenshotTaken
    | ApprovalRequested
    | ApprovalAnswered
    | RunFinished
)
AnyEvent: TypeAlias = AgentEvent | PageEvent


BUILTIN_ORDER = (
    "done",
    "wait",
    "ask_user",
    "click_element_by_index",
    "input_text",
    "select_dropdown_option",
    "scroll",
    "scroll_horizontally",
    "execute_javascript",
    "send_keys",
    "go_to_url",
    "go_back",
    "switch_tab",
    "hover",
)


class PageAgent:
    """``PageAgent(model=..., browser=browser, max_steps=20)``; ``result = await agent.run("task")``.

    ``model``: a :class:`Model` or a ``provider:model`` name (default ``NOTEBOOK_AGENT_MODEL``).
    ``browser``: a started :class:`BrowserSession`; when omitted the agent starts a headless one per run.
    ``custom_tools``: ``{name: tool}`` adds or overrides an action, ``{name: None}`` removes one.
    ``approval``: ``auto`` (default), ``ask-risky``, ``ask-all``, ``deny-risky`` or a function of an
    :class:`ApprovalRequest`; ``approver`` answers the ``ask`` cases (no approver: asks are denied).
    """

    def __init__(
        self,
        model: Model | str | None = None,
        browser: BrowserSession | None = None,
        *,
        max_steps: int = 20,
        max_failures: int = 3,
        custom_tools: Mapping[str, Tool | None] | None = None,
        on_ask_user: AskUser | None = None,
        enable_javascript: bool = False,
        system_prompt: str | None = None,
        instructions: str | None = None,
        approval: PolicyName | PolicyFunction = "auto",
        approver: Approver | None = None,
        approval_timeout: float = 300.0,
        start_url: str | None = None,
        vision: bool = False,
        screenshots: bool = True,
        full_page: bool = False,
        after_tool_call: AfterHook | None = None,
        stream_options: StreamOptions | None = None,
    ) -> None:
        if max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        self.model = _resolve_model(model)
        self.browser = browser
        self.max_steps = max_steps
        self.max_failures = max_failures
        self.custom_tools = dict(custom_tools or {})
        self.on_ask_user = on_ask_user
        self.enable_javascript = enable_javascript
        self.system_prompt = system_prompt if system_prompt is not None else default_system_prompt()
        self.instructions = instructions
        self.approval = check_policy(approval)
        self.approver = approver
        self.approval_timeout = approval_timeout
        self.start_url = start_url
        self.vision = vision
        self.screenshots = screenshots
        self.full_page = full_page
        self.after_tool_call = after_tool_call
        self.stream_options = stream_options or StreamOptions()
        self._controller: AbortController | None = None
        self.last_result: PageAgentResult | None = None

    # -- public -------------------------------------------------------------------------------------------
    @property
    def full_system_prompt(self) -> str:
        if self.instructions:
            return f"{self.system_prompt.rstrip()}\n\nAdditional instructions:\n{self.instructions.strip()}\n"
        return self.system_prompt

    @property
    def is_running(self) -> bool:
        return self._controller is not None

    def stop(self, reason: str = "Stopped by the user") -> None:
        """Abort the running run (safe from any thread)."""
        if self._controller is not None:
            self._controller.abort(reason)

    async def run(self, task: str) -> PageAgentResult:
        result: PageAgentResult | None = None
        async for event in self.stream(task):
            if isinstance(event, RunFinished):
                result = event.result
        assert result is not None
        return result

    def run_sync(self, task: str) -> PageAgentResult:
        """``run`` for plain scripts. Inside a running event loop (Jupyter) it refuses: use ``%%agent`` or
        ``await agent.run(...)`` there (patching the loop with nest_asyncio loses widget clicks)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.run(task))
        raise RuntimeError(
            "run_sync() cannot run inside a running event loop (a Jupyter kernel has one). "
            "Use `result = await agent.run(task)` or a %%agent cell instead."
        )

    def tools(self, browser: BrowserSession) -> dict[str, Tool]:
        """The actions this agent offers, in their stable order (built-ins, then new custom tools)."""
        from .actions import builtin_tools

        registry: dict[str, Tool] = dict(builtin_tools(browser, on_ask_user=self.on_ask_user))
        ordered = {n: registry[n] for n in BUILTIN_ORDER if n in registry}
        ordered.update({n: t for n, t in registry.items() if n not in ordered})
        for name, t in self.custom_tools.items():
            if t is None:
                ordered.pop(name, None)
                continue
            if t.name != name:
                t = copy.copy(t)
                t.name = name
            ordered[name] = t
        if not self.enable_javascript:
            ordered.pop("execute_javascript", None)
        if self.on_ask_user is None:
            ordered.pop("ask_user", None)
        return ordered

    async def stream(self, task: str) -> AsyncIterator[AnyEvent]:
        """Run ``task`` and yield every event as it happens. Leaving early stops the run."""
        if not task or not task.strip():
            raise ValueError("The task is empty: say what the agent should do.")
        if self._controller is not None:
            raise AgentBusyError("A run is already active on this agent; wait for it or call stop().")
        controller = AbortController()
        self._controller = controller
        queue: asyncio.Queue[AnyEvent | None] = asyncio.Queue()
        run = _PageRun(self, task.strip(), controller, queue.put_nowait)
        runner = asyncio.create_task(run.execute())
        try:
            while True:
                event = await queue.get()
                if event is None:
                    break
                yield event
            await runner
        finally:
            if not runner.done():
                controller.abort("The consumer stopped reading the run")
                try:
                    await asyncio.wait_for(runner, 10)
                except (TimeoutError, asyncio.CancelledError, Exception):
                    runner.cancel()
            self._controller = None

    def settings(self) -> dict[str, Any]:
        """The knobs of this agent, recorded with every run so runs can be compared and repeated."""
        return {
            "max_steps": self.max_steps,
            "max_failures": self.max_failures,
            "approval": self.approval if isinstance(self.approval, str) else "custom",
            "vision": self.vision,
            "full_page": self.full_page,
            "enable_javascript": self.enable_javascript,
            "ask_user": self.on_ask_user is not None,
            "custom_tools": sorted(self.custom_tools),
            "start_url": self.start_url,
        }


def _resolve_model(model: Model | str | None) -> Model:
    if model is None or isinstance(model, str):
        from ..llm import get_model

        return get_model(model)
    return model


def _fmt_args(args: Mapping[str, Any]) -> str:
    return json.dumps(args, ensure_ascii=False, separators=(", ", ": "))


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _PageRun:
    """The state of one run; its methods are the loop hooks."""

    def __init__(
        self, agent: PageAgent, task: str, controller: AbortController, put: Callable[[AnyEvent | None], None]
    ) -> None:
        self.agent = agent
        self.task = task
        self.controller = controller
        self.put = put
        self.steps: list[PageStep] = []
        self.history: list[PageStep | str] = []
        self.failures = 0
        self.last_output_error: str | None = None
        self.done: tuple[bool, str] | None = None
        self.status: Status | None = None
        self.error: str | None = None
        self.last_url = ""
        self.total_wait = 0.0
        self.last_state_fingerprint: str | None = None
        self.unchanged_steps = 0
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
        result: PageAgentResult | None = None
        try:
            if own_browser:
                from .session import BrowserSession

                self.browser = BrowserSession()
                await self.browser.start()
            else:
                self.browser = self.agent.browser
            assert self.browser is not None
            if self.agent.start_url:
                await self.browser.page.goto(self.agent.start_url)
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
        if event.tool_name == "wait" and not event.is_error:
            self.total_wait += float(step.args.get("seconds", 1) or 1)
        elif event.tool_name != "wait":
            self.total_wait = 0.0
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
        step.observations = self._observations(step, snapshot.text)
        for note in step.observations:
            self.history.append(note)
        state = self._state_message(step, snapshot.text)
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

    def _observations(self, step: PageStep, page_text: str) -> list[str]:
        notes: list[str] = []
        if step.url != self.last_url:
            notes.append(f"Page navigated to → {step.url}")
            self.last_url = step.url
        if self.last_output_error and step.index > 1 and self.steps[-2].action is None:
            notes.append(f"Your previous output could not be used: {self.last_output_error}")
        if self.total_wait >= 3:
            notes.append(
                f"You have waited {self.total_wait:g} seconds accumulatively. "
                "DO NOT wait any longer unless you have a good reason."
            )
        fingerprint = hashlib.sha1(page_text.encode("utf-8")).hexdigest()
        previous = [s for s in self.steps[:-1] if s.action]
        if self.last_state_fingerprint == fingerprint and previous and previous[-1].action not in ("wait", "done"):
            self.unchanged_steps += 1
        else:
            self.unchanged_steps = 0
        self.last_state_fingerprint = fingerprint
        if self.unchanged_steps >= 2:
            notes.append(
                f"The page has not changed for the last {self.unchanged_steps} actions. Try a different approach."
            )
        if len(previous) >= 3:
            last3 = [(s.action, _fmt_args(s.args)) for s in previous[-3:]]
            if last3[0] == last3[1] == last3[2]:
                notes.append(f"You repeated {last3[0][0]} with the same arguments 3 times. Do something else.")
        left = self.agent.max_steps - step.index
        if left == 0:
            notes.append("This is the last step: call done now with what you have (success=false if unfinished).")
        elif left == 2:
            notes.append("⚠️ Only 2 steps left after this one. Finish the task or call done.")
        elif left == 5:
            notes.append("⚠️ Only 5 steps left after this one. Consider wrapping up.")
        return notes

    def _state_message(self, step: PageStep, page_text: str) -> str:
        lines = ["<agent_state>", "<user_request>", self.task, "</user_request>", "<step_info>"]
        now = datetime.now().strftime("%Y-%m-%d %H:%M")
        lines += [f"Step {step.index} of {self.agent.max_steps}. Current time: {now}", "</step_info>", "</agent_state>"]
        lines += ["", "<agent_history>"]
        done_steps = [h for h in self.history if not isinstance(h, PageStep) or h.index < step.index]
        for i, item in enumerate(done_steps):
            if isinstance(item, str):
                lines.append(f"<sys>{item}</sys>")
                continue
            last = i == len(done_steps) - 1
            lines.append(f"<step_{item.index}>")
            if item.action is None:
                lines.append(f"Invalid output: {item.output_error}")
            else:
                lines.append(f"Evaluation of Previous Step: {item.evaluation_previous_goal}")
                lines.append(f"Memory: {item.memory}")
                lines.append(f"Next Goal: {item.next_goal}")
                lines.append(f"Action: {item.action} {_fmt_args(item.args)}")
                result = item.result if last else _clip(item.result, _HISTORY_RESULT_CHARS)
                lines.append(f"Action Results: {result}")
            lines.append(f"</step_{item.index}>")
        lines += ["</agent_history>", "", "<browser_state>", page_text.rstrip(), "</browser_state>"]
        return "\n".join(lines)

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
        element = None
        if args.get("index") is not None:
            info = self.browser.element(int(args["index"]))
            if info is not None:
                element = {
                    "tag": info.tag,
                    "text": info.text,
                    "attributes": dict(info.attributes),
                    "box": info.box,
                    "line": info.line,
                }
        request = ApprovalRequest(ctx.tool_call.name, args, step.url, element, step=step.index)
        decision = decide(self.agent.approval, request)
        if decision == "allow":
            return None
        if decision == "deny":
            answer = ApprovalAnswer(False, f"Blocked by the approval policy: {request.reason}", by="policy")
        else:
            self.put(ApprovalRequested(step, request))
            answer = await self._ask(request, signal)
        step.approval = {
            "decision": "approved" if answer.approved else "denied",
            "reason": answer.reason,
            "by": answer.by,
            "risk": request.reason,
        }
        self.put(ApprovalAnswered(step, request, answer))
        if answer.approved:
            return None
        reason = answer.reason or "The user denied this action."
        if not reason.lower().startswith(("denied", "blocked", "the user")):
            reason = f"The user denied this action: {reason}"
        return BlockToolCall(reason)

    async def _ask(self, request: ApprovalRequest, signal: AbortSignal) -> ApprovalAnswer:
        if self.agent.approver is None:
            return ApprovalAnswer(False, f"Denied: no one was there to approve it ({request.reason}).", by="policy")
        try:
            return await signal.race(asyncio.wait_for(self.agent.approver(request), self.agent.approval_timeout))
        except TimeoutError:
            return ApprovalAnswer(
                False, f"Denied: no answer within {self.agent.approval_timeout:g} seconds.", by="timeout"
            )

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

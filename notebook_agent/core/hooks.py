"""What a run of the agent loop is configured with: its state (:class:`AgentContext`), the hook points and
what they receive and return, and :class:`LoopConfig`, which gathers them.

Everything here is importable from :mod:`notebook_agent.core.loop` as well, where it has always been.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from .abort import AbortSignal
from .events import AgentEvent
from .messages import AssistantMessage, Message, ResultPart, ToolCall, ToolResultMessage
from .model import Model, StreamOptions, ToolSpec
from .planner import ToolPlan
from .tools import OnUpdate, Tool, ToolCallContext, ToolResult

Emit = Callable[[AgentEvent], Awaitable[None]]


@dataclass
class AgentContext:
    """The mutable state of a run: what the next request is built from."""

    system_prompt: str | None
    messages: list[Message] = field(default_factory=list)
    tools: list[Tool] = field(default_factory=list)


@dataclass
class BeforeToolCall:
    assistant_message: AssistantMessage
    tool_call: ToolCall
    """The call as the model sent it (raw arguments)."""
    tool: Tool
    args: Any
    """The validated arguments the tool will receive."""
    context: AgentContext


@dataclass
class BlockToolCall:
    """Returned by ``before_tool_call`` to stop a call; the model sees ``reason``."""

    reason: str | None = None


@dataclass
class AfterToolCall:
    assistant_message: AssistantMessage
    tool_call: ToolCall
    tool: Tool
    args: Any
    result: ToolResult
    is_error: bool
    context: AgentContext


UNSET: Any = object()


@dataclass
class ToolCallOverride:
    """Returned by ``after_tool_call``: each field given replaces the result's (``details`` may be None)."""

    content: list[ResultPart] | None = None
    details: Any = UNSET
    is_error: bool | None = None
    terminate: bool | None = None
    stop_after_batch: bool = False


@dataclass
class DeferredToolRequest:
    assistant_message: AssistantMessage
    tool_call: ToolCall
    context: AgentContext


BeforeHook = Callable[[BeforeToolCall, AbortSignal], Awaitable[BlockToolCall | None]]
AfterHook = Callable[[AfterToolCall, AbortSignal], Awaitable[ToolCallOverride | None]]
DeferredResolver = Callable[[DeferredToolRequest, AbortSignal], Awaitable[Tool | None]]
TransformContext = Callable[[AgentContext, AbortSignal], Awaitable[list[Message]]]
MessageSource = Callable[[], Awaitable[list[Message]]]
TurnHook = Callable[[AssistantMessage, list[ToolResultMessage], AgentContext], Awaitable[bool]]
ToolContextFactory = Callable[[ToolCall, AbortSignal, OnUpdate], ToolCallContext]
"""Builds the one context object a tool's ``execute`` receives, per call."""


def plain_tool_context(call: ToolCall, signal: AbortSignal, on_update: OnUpdate) -> ToolCallContext:
    """The default :data:`ToolContextFactory`: the call's id, the run's signal, progress to the run's events."""
    return ToolCallContext(call.id, signal, on_update)


@dataclass
class LoopConfig:
    """How one run behaves. Only ``model`` is required; every hook is optional."""

    model: Model
    tool_execution: Literal["parallel", "sequential"] = "parallel"
    stream_options: StreamOptions = field(default_factory=StreamOptions)
    before_tool_call: BeforeHook | None = None
    after_tool_call: AfterHook | None = None
    resolve_deferred_tool: DeferredResolver | None = None
    transform_context: TransformContext | None = None
    """Rebuilds the messages sent to the model (the transcript itself is kept)."""
    tool_specs: Callable[[ToolPlan], list[ToolSpec]] | None = None
    """What the provider is offered, from the plan. Default: every visible tool."""
    extract_tool_calls: Callable[[AssistantMessage], list[ToolCall]] | None = None
    """The calls to run, from the assistant message. Default: its tool-call blocks."""
    get_steering_messages: MessageSource | None = None
    get_follow_up_messages: MessageSource | None = None
    should_stop_after_turn: TurnHook | None = None
    abort_grace_seconds: float = 0.5
    """How long a tool may take to stop by itself after an abort before its task is cancelled."""
    continue_on_error: Callable[[AssistantMessage], bool] | None = None
    """For a model error the caller can recover from (e.g. malformed output it feeds back to the model): the
    error ends only the turn, and the run goes on through ``extract_tool_calls`` and the after-turn hooks."""
    tool_context: ToolContextFactory | None = None
    """Builds the context each tool call's ``execute`` receives, from the call, the run's signal and the
    progress callback. Default: a plain :class:`~.tools.ToolCallContext`; a layer above supplies a richer
    one (the page agent's gives tools the browser, the tab, secrets and settings)."""

    def make_tool_context(self, call: ToolCall, signal: AbortSignal, on_update: OnUpdate) -> ToolCallContext:
        factory = self.tool_context or plain_tool_context
        return factory(call, signal, on_update)

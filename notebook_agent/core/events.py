"""The event stream a run emits, in the order the loop emits them.

``agent_start, turn_start, message_start/update/end, tool_execution_start/update/end, turn_end, agent_end``.
Views (the notebook, the CLI) and recorders consume these; nothing in the loop depends on who listens.
Each event is a small frozen dataclass with a literal ``type`` so consumers can ``match`` on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from .messages import AssistantMessage, Message, ToolResultMessage
from .model import StreamEvent
from .tools import ToolResult


@dataclass(frozen=True)
class AgentStart:
    type: Literal["agent_start"] = "agent_start"


@dataclass(frozen=True)
class TurnStart:
    type: Literal["turn_start"] = "turn_start"


@dataclass(frozen=True)
class MessageStart:
    message: Message
    type: Literal["message_start"] = "message_start"


@dataclass(frozen=True)
class MessageUpdate:
    message: AssistantMessage
    stream_event: StreamEvent
    type: Literal["message_update"] = "message_update"


@dataclass(frozen=True)
class MessageEnd:
    message: Message
    type: Literal["message_end"] = "message_end"


@dataclass(frozen=True)
class ToolExecutionStart:
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    """The raw arguments the model sent (before preparation and validation)."""
    type: Literal["tool_execution_start"] = "tool_execution_start"


@dataclass(frozen=True)
class ToolExecutionUpdate:
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    partial_result: Any
    type: Literal["tool_execution_update"] = "tool_execution_update"


@dataclass(frozen=True)
class ToolExecutionEnd:
    tool_call_id: str
    tool_name: str
    result: ToolResult
    is_error: bool
    execution_started: bool = True
    """False when resolution, validation, a block or an abort stopped the call before it ran."""
    error_kind: str | None = None
    """``argument-validation``, ``not-found``, ``blocked``, ``hook-error``, ``aborted`` or None."""
    type: Literal["tool_execution_end"] = "tool_execution_end"


@dataclass(frozen=True)
class TurnEnd:
    message: AssistantMessage
    tool_results: list[ToolResultMessage] = field(default_factory=list)
    type: Literal["turn_end"] = "turn_end"


@dataclass(frozen=True)
class AgentEnd:
    messages: list[Message] = field(default_factory=list)
    """Every message this run created: prompts, assistants, tool results, injected steering/follow-ups."""
    type: Literal["agent_end"] = "agent_end"


AgentEvent: TypeAlias = (
    AgentStart
    | TurnStart
    | MessageStart
    | MessageUpdate
    | MessageEnd
    | ToolExecutionStart
    | ToolExecutionUpdate
    | ToolExecutionEnd
    | TurnEnd
    | AgentEnd
)
